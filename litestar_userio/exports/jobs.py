"""Export job functions (arq signature); the in-process runner calls the very same ones."""

from __future__ import annotations

from typing import Any

__all__ = ["export_users"]


async def export_users(ctx: dict[str, Any], task_id: str) -> None:
    """Write the file of export `task_id`; a no-op once it is completed."""
    await ctx["userio"].exports.run(task_id)
