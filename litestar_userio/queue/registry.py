"""The job functions, by the name they are enqueued under; arq workers and the in-process runner share them."""

from __future__ import annotations

from typing import Any

from litestar_userio.exports.jobs import export_users
from litestar_userio.exports.service import EXPORT_JOB
from litestar_userio.imports.jobs import import_chunk
from litestar_userio.imports.service import IMPORT_CHUNK_JOB
from litestar_userio.queue.base import JobFunction

__all__ = ["RECOVER_JOB", "SWEEP_JOB", "job_functions", "recover", "sweep"]

SWEEP_JOB = "userio_sweep"
RECOVER_JOB = "userio_recover"


async def sweep(ctx: dict[str, Any]) -> None:
    """Periodic housekeeping: enqueue work nobody is doing, purge expired results."""
    services = ctx["userio"]
    await services.imports.requeue_stale()
    await services.exports.requeue_stale()
    await services.imports.purge_expired()
    await services.exports.purge_expired()


async def recover(ctx: dict[str, Any]) -> None:
    """At the start of a process that runs jobs itself: everything pending was left by a previous process."""
    services = ctx["userio"]
    now = services.config.clock.now()
    await services.imports.requeue_stale(older_than=now)
    await services.exports.requeue_stale(older_than=now)


def job_functions() -> dict[str, JobFunction]:
    """Every job function by name."""
    return {IMPORT_CHUNK_JOB: import_chunk, EXPORT_JOB: export_users, SWEEP_JOB: sweep, RECOVER_JOB: recover}
