"""Import job functions (arq signature); the in-process runner calls the very same ones."""

from __future__ import annotations

from typing import Any

from litestar_userio.observability import telemetry

__all__ = ["import_chunk"]


async def import_chunk(ctx: dict[str, Any], task_id: str, seq: int, trace: dict[str, str] | None = None) -> None:
    """Apply chunk `seq` of import `task_id`; a no-op when it is already done.

    `trace`: the trace context of the request that created the task (None when tracing is off, or enqueued again
    by the sweeper), so the chunk's span joins that request's trace.
    """
    with telemetry.span("userio.import.chunk", {"userio.task_id": task_id, "userio.chunk": seq}, trace):
        await ctx["userio"].imports.process_chunk(task_id, seq)
