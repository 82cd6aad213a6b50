"""The plugin's jobs by the name they are enqueued under; arq workers and the in-process runner share them.

The queue layer knows none of them: `Services.start` hands this set to the queue it builds, and the arq worker
(`litestar_userio.worker`) registers the same functions.
"""

from __future__ import annotations

from typing import Any

from litestar_userio.exports.export_service import EXPORT_JOB
from litestar_userio.imports.import_service import IMPORT_CHUNK_JOB
from litestar_userio.observability import telemetry
from litestar_userio.queue.queue_protocol import CONTEXT_KEY, Jobs
from litestar_userio.webhooks.webhook_service import DELIVER_JOB

__all__ = [
    "RECOVER_JOB",
    "SWEEP_JOB",
    "deliver_webhooks",
    "export_users",
    "import_chunk",
    "observe_queue",
    "plugin_jobs",
    "recover",
    "sweep",
]

SWEEP_JOB = "userio_sweep"
RECOVER_JOB = "userio_recover"


async def import_chunk(ctx: dict[str, Any], task_id: str, seq: int, trace: dict[str, str] | None = None) -> None:
    """Apply chunk `seq` of import `task_id`; a no-op when it is already done.

    `trace`: the trace context of the request that created the task (None when tracing is off, or enqueued again
    by the sweeper), so the chunk's span joins that request's trace.
    """
    with telemetry.span("userio.import.chunk", {"userio.task_id": task_id, "userio.chunk": seq}, trace):
        await ctx[CONTEXT_KEY].imports.process_chunk(task_id, seq)


async def export_users(ctx: dict[str, Any], task_id: str, trace: dict[str, str] | None = None) -> None:
    """Write the file of export `task_id`; a no-op once it is completed (`trace`: as `import_chunk`)."""
    with telemetry.span("userio.export", {"userio.task_id": task_id}, trace):
        await ctx[CONTEXT_KEY].exports.run(task_id)


async def deliver_webhooks(ctx: dict[str, Any], project_id: str) -> None:
    """Attempt the project's due webhook deliveries until none is due (or join its lane running in this process)."""
    with telemetry.span("userio.webhooks.deliver", {"userio.project_id": project_id}):
        await ctx[CONTEXT_KEY].webhooks.deliver(project_id)


async def sweep(ctx: dict[str, Any]) -> None:
    """Periodic housekeeping: free what silent workers hold, enqueue work nobody is doing, purge expired results.

    Also purges change-log entries past their retention and advances this process's change-log consumers.
    """
    services = ctx[CONTEXT_KEY]
    await services.db.end_silent_sessions()
    await services.imports.requeue_stale()
    await services.exports.requeue_stale()
    await services.imports.purge_expired()
    await services.exports.purge_expired()
    await services.webhooks.wake_due()
    await services.webhooks.purge_expired()
    await services.changes.purge()
    await services.changes.catch_up()
    await observe_queue(ctx)


async def observe_queue(ctx: dict[str, Any]) -> None:
    """Report the queue's depth and age (metrics only): at every sweep, and by each arq worker at each of its ticks."""
    services = ctx[CONTEXT_KEY]
    await services.imports.observe_queue()
    await services.exports.observe_queue()


async def recover(ctx: dict[str, Any]) -> None:
    """At the start of a process that runs jobs itself: everything pending was left by a previous process."""
    services = ctx[CONTEXT_KEY]
    now = services.config.clock.now()
    await services.imports.requeue_stale(older_than=now)
    await services.exports.requeue_stale(older_than=now)
    await services.webhooks.wake_due()


def plugin_jobs() -> Jobs:
    """Every job function of the plugin."""
    return Jobs(
        functions={
            IMPORT_CHUNK_JOB: import_chunk,
            EXPORT_JOB: export_users,
            DELIVER_JOB: deliver_webhooks,
            SWEEP_JOB: sweep,
            RECOVER_JOB: recover,
        },
        sweep=SWEEP_JOB,
        recover=RECOVER_JOB,
    )
