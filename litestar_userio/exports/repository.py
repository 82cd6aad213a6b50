"""Every query of the export tasks: admission, the task's life (attempt, progress, outcome), the sweeper's reads.

Each method runs in the caller's transaction (or reader); the service decides when to open one and what the rows
mean. `request` is stored as the JSON echo of the accepted request, `error` as the export envelope's error object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import msgspec

from litestar_userio.db.engine import Row, Tx
from litestar_userio.db.pages import live_tasks_page
from litestar_userio.db.tables import ExportTask
from litestar_userio.errors import ErrorObject
from litestar_userio.paging import PageCursor

__all__ = ["Attempt", "ExportRepository", "ExportTaskRow", "PendingTask"]

_TASK_COLUMNS = (
    "id, created_at, status, request, processed, completed_at, failed_at, error, file_key, size, sha256,"
    " record_count, expire_at"
)


@dataclass(frozen=True)
class ExportTaskRow:
    """A stored task; the outcome fields are None until it is completed (and the file's when it failed)."""

    id: str
    created_at: datetime
    status: Literal["pending", "completed"]
    request: Any
    """The request as accepted (JSON builtins)."""
    processed: int
    completed_at: datetime | None
    failed_at: datetime | None
    error: ErrorObject | None
    file_key: str | None
    size: int | None
    sha256: str | None
    record_count: int | None
    expire_at: datetime | None


@dataclass(frozen=True)
class Attempt:
    """A pending task as one attempt at it starts."""

    project_id: str
    created_at: datetime
    request: str
    """The stored JSON text: the service decodes it after the attempt is counted, so a bad one still counts."""
    attempts: int


@dataclass(frozen=True)
class PendingTask:
    """A pending task as the sweeper sees it; `enqueued_at` is None once a worker has started it."""

    id: str
    enqueued_at: datetime | None


def _task(row: Row) -> ExportTaskRow:
    return ExportTaskRow(
        id=row["id"],
        created_at=row["created_at"],
        status=row["status"],
        request=msgspec.json.decode(row["request"]),
        processed=row["processed"],
        completed_at=row["completed_at"],
        failed_at=row["failed_at"],
        error=None if row["error"] is None else msgspec.json.decode(row["error"], type=ErrorObject),
        file_key=row["file_key"],
        size=row["size"],
        sha256=row["sha256"],
        record_count=row["record_count"],
        expire_at=row["expire_at"],
    )


class ExportRepository:
    """SQL of `userio_export_task`; each method runs in the caller's transaction."""

    # Admission.

    async def lock_admission(self, tx: Tx, project_id: str) -> None:
        """Lock the project's row, so that initiates of one project check their limits one at a time."""
        await tx.execute(f"SELECT id FROM userio_project WHERE id = $1{tx.for_update}", project_id)

    async def pending_count(self, tx: Tx, project_id: str) -> int:
        """How many of the project's tasks are pending."""
        row = await tx.fetchrow(
            "SELECT COUNT(*) AS n FROM userio_export_task WHERE project_id = $1 AND status = 'pending'", project_id
        )
        return int(row["n"]) if row is not None else 0

    async def add(self, tx: Tx, task_id: str, project_id: str, request: Any, now: datetime) -> None:
        """Store a pending task, enqueued `now`."""
        await tx.execute(
            "INSERT INTO userio_export_task (id, project_id, created_at, status, request, processed, attempts,"
            " enqueued_at) VALUES ($1, $2, $3, 'pending', $4, 0, 0, $3)",
            task_id,
            project_id,
            now,
            msgspec.json.encode(request).decode(),
        )

    # Reads.

    async def get(self, tx: Tx, project_id: str, task_id: str) -> ExportTaskRow | None:
        """The project's task of that id, expired or not."""
        row = await tx.fetchrow(
            f"SELECT {_TASK_COLUMNS} FROM userio_export_task WHERE id = $1 AND project_id = $2", task_id, project_id
        )
        return None if row is None else _task(row)

    async def live(
        self, tx: Tx, project_id: str, now: datetime, limit: int, after: PageCursor | None
    ) -> list[ExportTaskRow]:
        """Up to `limit` of the project's unexpired tasks, newest first, those after `after`."""
        columns = [getattr(ExportTask, name.strip()) for name in _TASK_COLUMNS.split(",")]
        rows = await live_tasks_page(tx, ExportTask, columns, project_id, now, limit, after)
        return [_task(row) for row in rows]

    # The job.

    async def start_attempt(self, tx: Tx, task_id: str) -> Attempt | None:
        """Count one more attempt at a pending task and reset its progress; None unless it is pending."""
        row = await tx.fetchrow(
            "UPDATE userio_export_task SET attempts = attempts + 1, processed = 0, enqueued_at = NULL WHERE id = $1"
            " AND status = 'pending' RETURNING project_id, created_at, request, attempts",
            task_id,
        )
        if row is None:
            return None
        return Attempt(row["project_id"], row["created_at"], row["request"], int(row["attempts"]))

    async def record_progress(self, tx: Tx, task_id: str, processed: int) -> None:
        """Users written so far."""
        await tx.execute("UPDATE userio_export_task SET processed = $2 WHERE id = $1", task_id, processed)

    async def complete(
        self,
        tx: Tx,
        task_id: str,
        now: datetime,
        expire_at: datetime,
        file_key: str,
        size: int,
        sha256: str,
        record_count: int,
    ) -> None:
        """A pending task is completed with its file."""
        await tx.execute(
            "UPDATE userio_export_task SET status = 'completed', completed_at = $2, expire_at = $3, file_key = $4,"
            " size = $5, sha256 = $6, record_count = $7, processed = $7 WHERE id = $1 AND status = 'pending'",
            task_id,
            now,
            expire_at,
            file_key,
            size,
            sha256,
            record_count,
        )

    async def fail(self, tx: Tx, task_id: str, now: datetime, expire_at: datetime, error: ErrorObject) -> None:
        """A pending task is completed with `failed_at` and `error`, and no file."""
        await tx.execute(
            "UPDATE userio_export_task SET status = 'completed', completed_at = $2, failed_at = $2, error = $3,"
            " expire_at = $4 WHERE id = $1 AND status = 'pending'",
            task_id,
            now,
            msgspec.json.encode(error).decode(),
            expire_at,
        )

    # The sweeper.

    async def pending(self, tx: Tx) -> list[PendingTask]:
        """Every pending task, of every project."""
        rows = await tx.fetch("SELECT id, enqueued_at FROM userio_export_task WHERE status = 'pending'")
        return [PendingTask(row["id"], row["enqueued_at"]) for row in rows]

    async def mark_enqueued(self, tx: Tx, task_ids: Sequence[str], now: datetime) -> list[tuple[str, int]]:
        """Stamp those still pending as enqueued `now`; their ids with their attempt counts."""
        rows = await tx.fetch(
            f"UPDATE userio_export_task SET enqueued_at = $2 WHERE {tx.any('id', 1)} AND status = 'pending'"
            " RETURNING id, attempts",
            tx.array(task_ids),
            now,
        )
        return [(row["id"], int(row["attempts"])) for row in rows]

    async def expired(self, tx: Tx, now: datetime) -> list[tuple[str, str | None]]:
        """Tasks whose results expired by `now`: ids with their file keys (None when the export failed)."""
        rows = await tx.fetch(
            "SELECT id, file_key FROM userio_export_task WHERE expire_at IS NOT NULL AND expire_at <= $1", now
        )
        return [(row["id"], row["file_key"]) for row in rows]

    async def delete(self, tx: Tx, task_ids: Sequence[str]) -> None:
        """Forget these tasks."""
        await tx.delete_in("userio_export_task", "id", task_ids)
