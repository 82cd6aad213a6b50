"""Export job functions (arq signature); the in-process runner calls the very same ones."""

from __future__ import annotations

from typing import Any

from litestar_userio.observability import telemetry

__all__ = ["export_users"]


async def export_users(ctx: dict[str, Any], task_id: str, trace: dict[str, str] | None = None) -> None:
    """Write the file of export `task_id`; a no-op once it is completed.

    `trace`: the creating request's trace context, which the export's span continues (see `import_chunk`).
    """
    with telemetry.span("userio.export", {"userio.task_id": task_id}, trace):
        await ctx["userio"].exports.run(task_id)
