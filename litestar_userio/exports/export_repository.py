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

from litestar_userio.db.engine import Row, Tx, in_batches
from litestar_userio.db.pages import live_tasks_page
from litestar_userio.db.tables import ExportTask, Project
from litestar_userio.errors import ErrorObject
from litestar_userio.paging import PageCursor

__all__ = ["Admission", "Attempt", "ExportRepository", "ExportTaskRow", "PendingTask"]

_COLUMNS = (
    ExportTask.id,
    ExportTask.created_at,
    ExportTask.status,
    ExportTask.request,
    ExportTask.processed,
    ExportTask.completed_at,
    ExportTask.failed_at,
    ExportTask.error,
    ExportTask.file_key,
    ExportTask.size,
    ExportTask.sha256,
    ExportTask.record_count,
    ExportTask.expire_at,
    ExportTask.watermark,
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
    watermark: str | None = None
    """The change-log cursor of the snapshot the file holds (docs/changes.md), once completed."""


@dataclass(frozen=True)
class Admission:
    """The project's export tasks as an initiate sees them once it holds the project's lock."""

    pending: int
    """Tasks not completed yet: running, or waiting for a worker."""
    last_completed_at: datetime | None
    """When the latest of its tasks was completed (or failed); None when none is on record."""


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
        watermark=row["watermark"],
    )


class ExportRepository:
    """Queries of `userio_export_task`; each method runs in the caller's transaction."""

    # Admission.

    async def lock_admission(self, tx: Tx, project_id: str) -> None:
        """Lock the project's row, so that initiates of one project check their limits one at a time."""
        query = Project.select(Project.id).where(Project.id == project_id)
        await tx.run(tx.locking(query))

    async def admission(self, tx: Tx, project_id: str) -> Admission:
        """What admitting another of the project's tasks depends on (under `lock_admission`)."""
        of_project = ExportTask.project == project_id
        pending = await tx.first(ExportTask.count().where(of_project & (ExportTask.status == "pending")))
        last = await tx.first(
            ExportTask.select(ExportTask.completed_at)
            .where(of_project & ExportTask.completed_at.is_not_null())
            .order_by(ExportTask.completed_at, ascending=False)
            .limit(1)
        )
        return Admission(
            pending=int(pending["count"]) if pending is not None else 0,
            last_completed_at=last["completed_at"] if last is not None else None,
        )

    async def add(self, tx: Tx, task_id: str, project_id: str, request: Any, now: datetime) -> None:
        """Store a pending task, enqueued `now`."""
        await tx.insert(
            ExportTask,
            {
                "id": task_id,
                "project": project_id,
                "created_at": now,
                "status": "pending",
                "request": msgspec.json.encode(request).decode(),
                "processed": 0,
                "attempts": 0,
                "enqueued_at": now,
            },
        )

    # Reads.

    async def get(self, tx: Tx, project_id: str, task_id: str) -> ExportTaskRow | None:
        """The project's task of that id, expired or not."""
        row = await tx.first(
            ExportTask.select(*_COLUMNS).where((ExportTask.id == task_id) & (ExportTask.project == project_id))
        )
        return None if row is None else _task(row)

    async def live(
        self, tx: Tx, project_id: str, now: datetime, limit: int, after: PageCursor | None
    ) -> list[ExportTaskRow]:
        """Up to `limit` of the project's unexpired tasks, newest first, those after `after`."""
        rows = await live_tasks_page(tx, ExportTask, _COLUMNS, project_id, now, limit, after)
        return [_task(row) for row in rows]

    # The job.

    async def start_attempt(self, tx: Tx, task_id: str) -> Attempt | None:
        """Count one more attempt at a pending task and reset its progress; None unless it is pending."""
        row = await tx.first(
            ExportTask.update(
                {ExportTask.attempts: ExportTask.attempts + 1, ExportTask.processed: 0, ExportTask.enqueued_at: None}
            )
            .where((ExportTask.id == task_id) & (ExportTask.status == "pending"))
            .returning(ExportTask.project, ExportTask.created_at, ExportTask.request, ExportTask.attempts)
        )
        if row is None:
            return None
        return Attempt(row["project_id"], row["created_at"], row["request"], int(row["attempts"]))

    async def record_progress(self, tx: Tx, task_id: str, processed: int) -> None:
        """Users written so far."""
        await tx.run(ExportTask.update({ExportTask.processed: processed}).where(ExportTask.id == task_id))

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
        watermark: str | None = None,
    ) -> None:
        """A pending task is completed with its file and the change-log cursor of the snapshot it holds."""
        await tx.run(
            ExportTask.update(
                {
                    ExportTask.status: "completed",
                    ExportTask.completed_at: now,
                    ExportTask.expire_at: expire_at,
                    ExportTask.file_key: file_key,
                    ExportTask.size: size,
                    ExportTask.sha256: sha256,
                    ExportTask.record_count: record_count,
                    ExportTask.processed: record_count,
                    ExportTask.watermark: watermark,
                }
            ).where((ExportTask.id == task_id) & (ExportTask.status == "pending"))
        )

    async def fail(self, tx: Tx, task_id: str, now: datetime, expire_at: datetime, error: ErrorObject) -> None:
        """A pending task is completed with `failed_at` and `error`, and no file."""
        await tx.run(
            ExportTask.update(
                {
                    ExportTask.status: "completed",
                    ExportTask.completed_at: now,
                    ExportTask.failed_at: now,
                    ExportTask.error: msgspec.json.encode(error).decode(),
                    ExportTask.expire_at: expire_at,
                }
            ).where((ExportTask.id == task_id) & (ExportTask.status == "pending"))
        )

    # The sweeper.

    async def pending(self, tx: Tx) -> list[PendingTask]:
        """Every pending task, of every project."""
        rows = await tx.run(
            ExportTask.select(ExportTask.id, ExportTask.enqueued_at).where(ExportTask.status == "pending")
        )
        return [PendingTask(row["id"], row["enqueued_at"]) for row in rows]

    async def mark_enqueued(self, tx: Tx, task_ids: Sequence[str], now: datetime) -> list[tuple[str, int]]:
        """Stamp those still pending as enqueued `now`; their ids with their attempt counts."""
        enqueued: list[tuple[str, int]] = []
        for ids in in_batches(task_ids):
            rows = await tx.run(
                ExportTask.update({ExportTask.enqueued_at: now})
                .where(ExportTask.id.is_in(ids) & (ExportTask.status == "pending"))
                .returning(ExportTask.id, ExportTask.attempts)
            )
            enqueued += [(row["id"], int(row["attempts"])) for row in rows]
        return enqueued

    async def expired(self, tx: Tx, now: datetime) -> list[tuple[str, str | None]]:
        """Tasks whose results expired by `now`: ids with their file keys (None when the export failed)."""
        rows = await tx.run(
            ExportTask.select(ExportTask.id, ExportTask.file_key).where(
                ExportTask.expire_at.is_not_null() & (ExportTask.expire_at <= now)
            )
        )
        return [(row["id"], row["file_key"]) for row in rows]

    async def delete(self, tx: Tx, task_ids: Sequence[str]) -> None:
        """Forget these tasks."""
        for ids in in_batches(task_ids):
            await tx.run(ExportTask.delete().where(ExportTask.id.is_in(ids)))
