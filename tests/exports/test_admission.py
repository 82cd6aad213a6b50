"""One running export per project, however many initiate requests race for it (SPEC 8, issues 9.10 and 32).

Two races. With jobs held, PARALLEL initiates at once admit exactly one export. With jobs running (the in-process
runner as it does in the embedded default; on arq a worker beside the test) and a real clock, a first export may
complete while later initiates still wait for admission, and one of them is rightly admitted then: the task records
must show it, ordered by `created_at`, each task beginning at or after the previous one's `completed_at` (which a
failed task sets with its `failed_at`). The held race could not see an initiate stamped before it waited.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import datetime
from itertools import pairwise
from typing import Any

import pytest

from litestar_userio.worker import _close, build_worker
from tests.conftest import Backend, Env, Project
from tests.exports.helpers import initiate
from tests.helpers import IMPORT
from tests.imports.test_worker_kill import wait_for
from userio_core.clock import SystemClock

pytestmark = pytest.mark.engine

PARALLEL = 20
SMALL, LARGE = 10, 500
"""Users imported before a running race: an export that completes within the race, and one that outlasts most of it."""


async def held_race(env: Env, trials: int) -> None:
    """Per trial a fresh project and PARALLEL initiates at once: one 202, the rest refused, one task stored."""
    env.hold_jobs()
    for trial in range(trials):
        project = await env.make_project()

        responses = await asyncio.gather(*(initiate(project, {"format": "ndjson"}) for _ in range(PARALLEL)))

        statuses = sorted(r.status_code for r in responses)
        assert statuses == [202] + [429] * (PARALLEL - 1), (trial, [r.text for r in responses if r.status_code >= 500])
        assert {r.json()["error"]["reason"] for r in responses if r.status_code == 429} == {
            "MaximumConcurrentJobLimitExceeded"
        }
        rows = await project.fetch("SELECT COUNT(*) AS n FROM userio_export_task WHERE project_id = $1", project.id)
        assert rows[0]["n"] == 1, "one task stored"


async def test_racing_initiates_admit_exactly_one_export(env):
    await held_race(env, trials=10)


@pytest.mark.hard
async def test_fifty_races_of_twenty_initiates_admit_exactly_one_export_each(env):
    await held_race(env, trials=50)


@contextlib.asynccontextmanager
async def jobs_running(env: Env) -> AsyncIterator[None]:
    """Jobs run as soon as they are enqueued: the in-process runner does so; on arq, a worker runs beside the test."""
    if not env.uses_arq:
        yield
        return
    # Polling every 5 ms rather than 50 starts an export sooner, inside more of the races (of 50 trials with 20
    # initiates, a second export was admitted in 34 rather than 17).
    worker = build_worker(env.config, handle_signals=False, poll_delay=0.005)
    main = asyncio.create_task(worker.async_run())
    try:
        yield
    finally:
        main.cancel()
        await _close(worker)


async def completed(project: Project, location: str) -> dict[str, Any]:
    """The task's status body once it is completed (the job runs on its own)."""

    async def done() -> dict[str, Any] | None:
        response = await project.get(location)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        body = body.get("result", body)  # the export's envelope; the import's has none
        return body if body["status"] == "completed" else None

    return await wait_for(done, timeout=120)


async def running_race(env: Env, users: int, parallel: int) -> None:
    """A fresh project with `users` users, `parallel` initiates at once; the admitted tasks never overlap."""
    project = await env.make_project()
    response = await project.post(
        IMPORT, {"identifier": "email", "records": [{"email": f"u{i}@example.com"} for i in range(users)]}
    )
    assert response.status_code == 202, response.text
    assert (await completed(project, response.headers["location"]))["summary"]["inserted"] == users

    responses = await asyncio.gather(*(initiate(project, {"format": "ndjson"}) for _ in range(parallel)))

    assert sorted({r.status_code for r in responses}) in ([202], [202, 429]), [r.text for r in responses]
    assert {r.json()["error"]["reason"] for r in responses if r.status_code == 429} <= {
        "MaximumConcurrentJobLimitExceeded"
    }
    tasks = [await completed(project, r.headers["location"]) for r in responses if r.status_code == 202]
    stored = await project.fetch("SELECT COUNT(*) AS n FROM userio_export_task WHERE project_id = $1", project.id)
    assert stored[0]["n"] == len(tasks), "every stored task was admitted with a 202"
    assert [task.get("record_count") for task in tasks] == [users] * len(tasks), tasks
    tasks.sort(key=lambda task: _time(task["created_at"]))
    for earlier, later in pairwise(tasks):
        assert _time(later["created_at"]) >= _time(earlier["completed_at"]), (earlier, later)


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value)


async def running_races(backend: Backend, make_env: Any, trials: int, users: int, parallel: int) -> None:
    env = await make_env(backend, clock=SystemClock())
    async with jobs_running(env):
        for _ in range(trials):
            await running_race(env, users, parallel)


@pytest.mark.parametrize(("users", "parallel"), [(SMALL, 5), (LARGE, 20)])
async def test_no_two_exports_of_a_project_ever_run_at_once(backend, make_env, users, parallel):
    await running_races(backend, make_env, trials=3, users=users, parallel=parallel)


@pytest.mark.hard
@pytest.mark.parametrize("parallel", [5, 20])
@pytest.mark.parametrize("users", [SMALL, LARGE])
async def test_fifty_races_never_run_two_exports_of_a_project_at_once(backend, make_env, users, parallel):
    await running_races(backend, make_env, trials=50, users=users, parallel=parallel)
