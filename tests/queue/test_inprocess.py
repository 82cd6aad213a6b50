"""The in-process runner retries a failing job with backoff, telling the job which try it is, then gives up."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from litestar_userio.queue.inprocess import InProcessQueue


class FlakyJob:
    """Fails its first `failures` runs; remembers the `job_try` of each run."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.tries: list[int] = []

    async def __call__(self, ctx: dict[str, Any], *args: Any) -> None:
        self.tries.append(ctx["job_try"])
        if len(self.tries) <= self.failures:
            raise RuntimeError(f"failure {len(self.tries)} of {args}")


async def test_a_failing_job_runs_again_until_it_succeeds() -> None:
    job = FlakyJob(failures=2)
    queue = InProcessQueue({"flaky": job}, max_tries=5, retry_delay=0.001)
    await queue.serve({})

    assert await queue.enqueue("flaky", "a", job_id="one")
    await queue.join(timeout=60)

    assert job.tries == [1, 2, 3]


async def test_the_wait_between_tries_doubles(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    job = FlakyJob(failures=3)
    queue = InProcessQueue({"flaky": job}, max_tries=5, retry_delay=0.25)
    await queue.serve({})
    monkeypatch.setattr(asyncio, "sleep", record)

    await queue.enqueue("flaky")
    await queue.join(timeout=60)

    assert job.tries == [1, 2, 3, 4]
    assert waits == [0.25, 0.5, 1.0]


async def test_a_job_that_keeps_failing_is_given_up_after_max_tries(caplog: pytest.LogCaptureFixture) -> None:
    job = FlakyJob(failures=100)
    queue = InProcessQueue({"flaky": job}, max_tries=3, retry_delay=0.001)
    await queue.serve({})

    with caplog.at_level(logging.ERROR, logger="litestar_userio.queue"):
        await queue.enqueue("flaky", "a")
        await queue.join(timeout=60)

    assert job.tries == [1, 2, 3]
    assert [r.getMessage() for r in caplog.records] == [
        "job flaky('a',) failed (try 1 of 3)",
        "job flaky('a',) failed (try 2 of 3)",
        "job flaky('a',) failed (try 3 of 3)",
    ]
    assert all(r.exc_info is not None for r in caplog.records)
    assert await queue.enqueue("flaky", "a", job_id="again")


async def test_a_paused_runner_holds_the_next_try_until_it_resumes() -> None:
    job = FlakyJob(failures=1)
    queue = InProcessQueue({"flaky": job}, max_tries=3, retry_delay=0.001)
    await queue.serve({})
    queue.pause()

    await queue.enqueue("flaky")
    for _ in range(20):
        await asyncio.sleep(0)
    assert job.tries == []

    await queue.join(timeout=60)
    assert job.tries == [1, 2]


async def test_a_queue_nobody_serves_runs_nothing() -> None:
    """A CLI command's queue: its enqueued work waits in the database for the process that serves jobs."""
    job = FlakyJob(failures=0)
    queue = InProcessQueue({"flaky": job}, max_tries=3, retry_delay=0.001)

    assert await queue.enqueue("flaky", "a", job_id="one")
    await queue.join(timeout=60)

    assert job.tries == []
    with pytest.raises(LookupError):
        await queue.enqueue("missing")
