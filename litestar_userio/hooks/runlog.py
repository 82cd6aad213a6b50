"""The run log: the outcome of production hook runs, written in batches off the token path, sampled when runs are many.

Each process keeps, per project, the number of runs of the last second: above `run_log_per_second` it keeps only
that share of the allowed runs, picked at random, and records the share as `sampled_rate` on each entry it keeps.
Refusals and errors are always kept (rate 1). Entries go to the database in batches every `run_log_flush_interval`
(and before the log is read), and entries older than `run_log_retention` are purged as batches are written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from datetime import UTC, datetime

from litestar_userio.config import HookConfig
from litestar_userio.db.engine import Database
from litestar_userio.hooks.hook_repository import HookRepository, RunRow
from userio_core.clock import Clock

__all__ = ["RunLog"]

logger = logging.getLogger(__name__)

_BATCH = 500
_PURGE_EVERY = 60.0


class _Rate:
    __slots__ = ("count", "rate", "window")

    def __init__(self, now: float) -> None:
        self.window = now
        self.count = 0
        self.rate = 1.0


class RunLog:
    """Buffers run entries and writes them in batches; one per process."""

    def __init__(self, db: Database, config: HookConfig, clock: Clock) -> None:
        self.db = db
        self.config = config
        self.clock = clock
        self.repository = HookRepository()
        self._pending: list[tuple[str, RunRow]] = []
        self._rates: dict[str, _Rate] = {}
        self._flusher: asyncio.Task[None] | None = None
        self._flushing: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()
        self._purged = 0.0

    def sample(self, project_id: str) -> float:
        """The share of this project's allowed runs to keep now (counting this run)."""
        now = time.monotonic()
        state = self._rates.get(project_id)
        if state is None:
            state = self._rates[project_id] = _Rate(now)
        elapsed = now - state.window
        if elapsed >= 1.0:
            per_second = state.count / elapsed
            limit = self.config.run_log_per_second
            state.rate = 1.0 if per_second <= limit else limit / per_second
            state.window, state.count = now, 0
        state.count += 1
        return state.rate

    def record(self, project_id: str, entry: RunRow) -> None:
        """Keep an entry for the next batch."""
        self._pending.append((project_id, entry))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush_later())
        elif len(self._pending) >= _BATCH:
            task = asyncio.get_running_loop().create_task(self.flush())
            self._flushing.add(task)
            task.add_done_callback(self._flushing.discard)

    def keep(self, project_id: str, outcome: str) -> float | None:
        """The rate to record an entry with, or None when sampling drops it."""
        rate = self.sample(project_id)
        if outcome != "allowed":
            return 1.0
        if rate >= 1.0 or random.random() < rate:
            return rate
        return None

    async def flush(self) -> None:
        """Write what is buffered, and purge what is past retention (at most once a minute)."""
        async with self._lock:
            batch, self._pending = self._pending, []
            try:
                async with self.db.transaction() as tx:
                    if batch:
                        await self.repository.add_runs(tx, batch)
                    if time.monotonic() - self._purged > _PURGE_EVERY:
                        await self.repository.purge_runs(tx, self.clock.now() - self.config.run_log_retention)
                        self._purged = time.monotonic()
            except Exception:
                logger.exception("the hook run log lost %d entries", len(batch))

    async def page(self, project_id: str, limit: int, cursor: int | None) -> tuple[list[tuple[int, RunRow]], bool]:
        """Newest first, after this process's buffer is written; the bool says whether more entries follow."""
        await self.flush()
        async with self.db.reader() as tx:
            rows = await self.repository.runs(tx, project_id, limit + 1, cursor)
            retention_start = self.clock.now() - self.config.run_log_retention
        rows = [(i, r) for i, r in rows if _aware(r.started_at) >= retention_start]
        return rows[:limit], len(rows) > limit

    async def close(self) -> None:
        """Write what is still buffered."""
        await asyncio.gather(*self._flushing, return_exceptions=True)
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        await self.flush()

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.config.run_log_flush_interval.total_seconds())
        await self.flush()


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
