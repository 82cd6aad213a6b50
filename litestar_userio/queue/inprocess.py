"""The embedded default's runner: the same job functions, run as asyncio tasks in the web process.

Jobs are rows in the database first, so the runner needs no persistence of its own: at start (and every
`sweep_interval`) the sweeper enqueues whatever is pending, which is how work survives a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from litestar_userio.queue.leases import MemoryLeaseStore
from litestar_userio.queue.queue_protocol import JobFunction
from userio_core.retry import Backoff, retrying

__all__ = ["InProcessQueue"]

logger = logging.getLogger("litestar_userio.queue")


class InProcessQueue:
    """Runs jobs concurrently (bounded) in the current event loop, retrying failures with backoff."""

    def __init__(
        self,
        functions: Mapping[str, JobFunction],
        *,
        concurrency: int = 2,
        max_tries: int = 5,
        sweep_job: str | None = None,
        recover_job: str | None = None,
        sweep_interval: timedelta = timedelta(seconds=30),
        retry_delay: float = 0.5,
    ) -> None:
        self.functions = dict(functions)
        self.leases = MemoryLeaseStore()
        """This process's jobs: they die only with it, and `recover_job` picks their work up at the next start."""
        self.recover_job = recover_job
        self.ctx: dict[str, Any] = {}
        self.max_tries = max_tries
        self.sweep_job = sweep_job
        self.sweep_interval = sweep_interval
        self.retry_delay = retry_delay
        self._semaphore = asyncio.Semaphore(concurrency)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._counter = 0
        self._running = asyncio.Event()
        self._running.set()
        self._served = False

    def bind_deployment(self, deployment_id: str | None) -> None:
        """Nothing: the runner's jobs never leave this process."""

    async def enqueue(self, function: str, *args: Any, job_id: str | None = None, first: bool = False) -> bool:
        """Schedule a job; False if a job with this id is queued or running (`first` changes nothing here).

        A queue nobody serves (a CLI command's) runs nothing: the work is pending in the database, and the process
        that serves jobs takes it up (its start-up recovery, its sweep).
        """
        if function not in self.functions:
            raise LookupError(f"unknown job function {function!r}")
        if not self._served:
            return True
        self._counter += 1
        key = job_id or f"{function}:{self._counter}"
        if key in self._tasks:
            return False
        task = asyncio.create_task(self._run(function, args), name=f"userio:{key}")
        self._tasks[key] = task
        task.add_done_callback(lambda _: self._tasks.pop(key, None))
        return True

    async def stalled_jobs(self, picked_before: timedelta) -> list[str]:
        """None: a job of this runner dies only with the process."""
        return []

    def pause(self) -> None:
        """Hold queued jobs (running ones finish); they start again on `resume`."""
        self._running.clear()

    def resume(self) -> None:
        """Let held jobs run."""
        self._running.set()

    async def _run(self, function: str, args: tuple[Any, ...]) -> None:
        retries = retrying(attempts=self.max_tries, on=Exception, backoff=Backoff(self.retry_delay))
        with contextlib.suppress(Exception):  # logged by `_try`; the work stays pending in the database
            async for attempt in retries:
                with attempt:
                    await self._try(function, args, attempt.retry_state.attempt_number)

    async def _try(self, function: str, args: tuple[Any, ...], job_try: int) -> None:
        await self._running.wait()
        async with self._semaphore:
            try:
                await self.functions[function]({**self.ctx, "job_try": job_try}, *args)
            except Exception:
                logger.exception("job %s%r failed (try %s of %s)", function, args, job_try, self.max_tries)
                raise

    async def start(self) -> None:
        """Nothing to connect to."""

    async def ready(self) -> bool:
        """Always: the jobs run in this process."""
        return True

    async def serve(self, ctx: dict[str, Any]) -> None:
        """Run jobs here with `ctx`: first recover the work a previous process left pending, then sweep periodically."""
        self.ctx.update(ctx)
        self._served = True
        if self.recover_job is not None:
            await self.functions[self.recover_job](self.ctx)
        if self.sweep_job is not None:
            self._sweeper = asyncio.create_task(self._sweep_forever(), name="userio:sweeper")

    async def _sweep_forever(self) -> None:
        assert self.sweep_job is not None
        while True:
            try:
                await self.functions[self.sweep_job](self.ctx)
            except Exception:
                logger.exception("sweep failed")
            await asyncio.sleep(self.sweep_interval.total_seconds())

    async def join(self, timeout: float = 60) -> None:
        """Wait until no job is queued or running (tests, graceful shutdown)."""
        self.resume()
        async with asyncio.timeout(timeout):
            while self._tasks:
                await asyncio.gather(*list(self._tasks.values()), return_exceptions=True)

    async def close(self) -> None:
        """Stop the sweeper and cancel running jobs; their work is pending in the database and resumes later."""
        tasks = [*self._tasks.values(), *([self._sweeper] if self._sweeper else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
