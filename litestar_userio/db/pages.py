"""The one keyset page query of the task lists (`GET /users/import`, `/users/export`), shared by their repositories."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from litestar_userio.db.engine import Row, Tx
from litestar_userio.paging import PageCursor

__all__ = ["live_tasks_page"]


async def live_tasks_page(
    tx: Tx,
    table: Literal["userio_import_task", "userio_export_task"],
    columns: str,
    project_id: str,
    now: datetime,
    limit: int,
    after: PageCursor | None,
) -> list[Row]:
    """Up to `limit` of the project's tasks not expired at `now`, newest first (ids break ties), after `after`."""
    args: list[object] = [project_id, now, limit]
    keyset = ""
    if after is not None:
        args += [after.created_at, after.id]
        keyset = " AND (created_at < $4 OR (created_at = $4 AND id < $5))"
    return await tx.fetch(
        f"SELECT {columns} FROM {table} WHERE project_id = $1 AND (expire_at IS NULL OR expire_at > $2)"
        f"{keyset} ORDER BY created_at DESC, id DESC LIMIT $3",
        *args,
    )
