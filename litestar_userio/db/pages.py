"""The one keyset page query of the task lists (`GET /users/import`, `/users/export`), shared by their repositories."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from piccolo.columns import Column

from litestar_userio.db.engine import Row, Tx
from litestar_userio.db.tables import ExportTask, ImportTask
from litestar_userio.paging import PageCursor

__all__ = ["live_tasks_page"]


async def live_tasks_page(
    tx: Tx,
    table: type[ImportTask] | type[ExportTask],
    columns: Sequence[Column],
    project_id: str,
    now: datetime,
    limit: int,
    after: PageCursor | None,
) -> list[Row]:
    """Up to `limit` of the project's tasks not expired at `now`, newest first (ids break ties), after `after`."""
    where = (table.project == project_id) & (table.expire_at.is_null() | (table.expire_at > now))
    if after is not None:
        where &= (table.created_at < after.created_at) | (
            (table.created_at == after.created_at) & (table.id < after.id)
        )
    return await tx.run(
        table.select(*columns).where(where).order_by(table.created_at, table.id, ascending=False).limit(limit)
    )
