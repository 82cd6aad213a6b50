"""Import job functions (arq signature); the in-process runner calls the very same ones."""

from __future__ import annotations

from typing import Any

__all__ = ["import_chunk"]


async def import_chunk(ctx: dict[str, Any], task_id: str, seq: int) -> None:
    """Apply chunk `seq` of import `task_id`; a no-op when it is already done."""
    await ctx["userio"].imports.process_chunk(task_id, seq)
