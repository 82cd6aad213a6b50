"""The export: tasks as rows, one job per task streaming users into storage (docs/reference.md#export).

The job reads the users in keyset pages inside one snapshot and writes the file in parts; the file becomes
visible only when whole (`FileWriter.complete`), and the task is completed afterwards, so a worker dying at
any point leaves a pending task that runs again from the start, never a partial file on offer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import msgspec

from litestar_userio.auth.admin_auth import AdminIdentity
from litestar_userio.changes.change_service import ChangeService
from litestar_userio.config import ExportConfig, QueueConfig
from litestar_userio.db.engine import Database, Row, Tx
from litestar_userio.errors import (
    Cause,
    InternalError,
    MaximumConcurrentJobLimitExceeded,
    RateLimited,
    SecretExportDisabled,
    TaskNotFound,
    UserExportDisabled,
    UserIOError,
    ValidationFailed,
)
from litestar_userio.exports import lossless
from litestar_userio.exports.columns import Column, check_request, columns_for
from litestar_userio.exports.encoding import CONTENT_TYPES, csv_header, csv_rows, ndjson_lines
from litestar_userio.exports.encryption import AgeStream, parse_recipients
from litestar_userio.exports.export_repository import ExportRepository, ExportTaskRow
from litestar_userio.exports.export_schemas import ExportProgress, ExportRequest, ExportTask, ExportTaskList
from litestar_userio.exports.ratelimit import DatabaseRateLimiter
from litestar_userio.observability import telemetry
from litestar_userio.paging import PageCursor, encode_cursor
from litestar_userio.projects.project_service import ProjectRecord, ProjectService
from litestar_userio.queue.leases import hold_lease
from litestar_userio.queue.queue_protocol import JobQueue
from litestar_userio.queue.requeue import Pending, requeue
from litestar_userio.runtime import paused_gc
from litestar_userio.statuses import error_object
from litestar_userio.storage.storage_protocol import Storage
from litestar_userio.users.exported import build_document
from litestar_userio.users.user_repository import UserRepository
from userio_core.clock import Clock
from userio_core.ids import new_task_id

__all__ = ["EXPORT_JOB", "RATE_LIMIT_BUCKET", "ExportService"]

logger = logging.getLogger("litestar_userio.exports")

EXPORT_JOB = "userio_export"
RATE_LIMIT_BUCKET = "UserExport"
_PROGRESS_EVERY = 10
"""Pages between two progress updates."""
_SLICE = 250
"""Users turned into bytes at a time: between slices the event loop reads the next page as PostgreSQL sends it and
the upload task sends its part (measured on `bench/export.py`: peak RSS 183 -> 163 MB, about 2 % faster)."""


class ExportService:
    """Creates export tasks, runs them, answers their status with fresh download URLs, purges old ones."""

    def __init__(
        self,
        db: Database,
        queue: JobQueue,
        projects: ProjectService,
        storage: Storage | None,
        config: ExportConfig,
        queue_config: QueueConfig,
        clock: Clock,
        *,
        changes: ChangeService,
    ) -> None:
        self.db = db
        self.changes = changes
        """The change log: every file's watermark, and what a delta export (`since`) holds."""
        self.queue = queue
        self.projects = projects
        self.storage = storage
        self.config = config
        self.queue_config = queue_config
        self.clock = clock
        self.repository = ExportRepository()
        self.users = UserRepository()
        self.limiter = DatabaseRateLimiter()
        """The `UserExport` bucket, in the database whatever the queue: taken in the admission's transaction."""

    def _require_enabled(self, project: ProjectRecord) -> Storage:
        if self.storage is None or not project.settings.export_enabled:
            raise UserExportDisabled()
        return self.storage

    # Initiate (docs/reference.md#export-request).

    async def initiate(
        self, project: ProjectRecord, request: ExportRequest, *, requested_by: AdminIdentity | None = None
    ) -> ExportTask:
        """Check the request and the limits, store the task, enqueue its job.

        `requested_by` is the admin token's identity: a lossless export is logged with it.
        """
        self._require_enabled(project)
        check_request(request)
        _check_encryption(project, request)
        limit = project.settings.export_rate_limit or self.config.rate_limit.limit
        period = self.config.rate_limit.period
        if project.settings.export_rate_period_seconds:
            period = timedelta(seconds=project.settings.export_rate_period_seconds)
        task_id = new_task_id("userexport_")
        echo = msgspec.to_builtins(request)
        if request.since is not msgspec.UNSET:
            self.changes.check_cursor(project.id, request.since)
        async with self.db.transaction() as tx:
            if request.since is not msgspec.UNSET:  # `Gone/ChangeCursorExpired` now rather than a failed task
                await self.changes.position(tx, project.id, request.since)
            # Serializes initiates of one project, so the two checks below cannot both pass twice.
            await self.repository.lock_admission(tx, project.id)
            admission = await self.repository.admission(tx, project.id)
            if admission.pending >= self.config.max_pending_per_project:
                raise MaximumConcurrentJobLimitExceeded()
            # Stamped once admitted, not before the lock: an initiate that waited while the previous export
            # completed was stamped before its `completed_at`, and the pair looked concurrent (issue 32). Never
            # before that `completed_at` either, should the worker that stamped it run ahead of this clock.
            now = self.clock.now()
            if admission.last_completed_at is not None:
                now = max(now, admission.last_completed_at)
            retry_after = await self.limiter.take(tx, project.id, RATE_LIMIT_BUCKET, limit, period, now)
            if retry_after is not None:
                raise RateLimited(RATE_LIMIT_BUCKET, retry_after)
            await self.repository.add(tx, task_id, project.id, echo, now)
        if request.format == "userio":
            _log_lossless(task_id, project, request, requested_by)
        await self._enqueue(task_id, f"{task_id}:0")
        return ExportTask(id=task_id, created_at=now, status="pending", request=echo)

    async def _enqueue(self, task_id: str, job_key: str, *, first: bool = False) -> None:
        try:
            await self.queue.enqueue(
                EXPORT_JOB, task_id, telemetry.carrier(), job_id=f"userio:export:{job_key}", first=first
            )
        except Exception:  # the task is stored: the sweeper enqueues it once the queue is back
            logger.warning("could not enqueue export %s; the sweeper will retry", task_id, exc_info=True)

    # Status (docs/reference.md#export-task-lifecycle, docs/reference.md#export-download).

    async def status(self, project: ProjectRecord, task_id: str, request_base_url: str | None) -> ExportTask:
        """The task; once completed, a download URL signed now and valid `url_ttl` (60 s)."""
        storage = self._require_enabled(project)
        async with self.db.reader() as tx:
            row = await self.repository.get(tx, project.id, task_id)
        if row is None or (row.expire_at is not None and row.expire_at <= self.clock.now()):
            raise TaskNotFound()
        task = _task(row)
        if row.status == "completed" and row.failed_at is None:
            assert row.file_key is not None
            task.download_url = await storage.signed_url(
                row.file_key, expires_in=self.config.url_ttl, request_base_url=request_base_url
            )
        return task

    # The job.

    async def run(self, task_id: str) -> None:
        """Produce the file of a pending export, holding its lease; a no-op once the task is completed."""
        async with hold_lease(self.queue.leases, _lease_name(task_id), self.queue_config.lease_ttl, "export") as held:
            if held:  # else another worker runs it; should that worker die, its lease lapses and the sweeper steps in
                await self._run(task_id)

    async def _run(self, task_id: str) -> None:
        async with self.db.transaction() as tx:
            attempt = await self.repository.start_attempt(tx, task_id)
        if attempt is None:
            return
        if attempt.attempts > self.queue_config.max_attempts:
            await self._fail(
                task_id,
                InternalError(f"the export failed {self.queue_config.max_attempts} times; see the server logs"),
            )
            return
        project = await self.projects.get(attempt.project_id)
        if project is None:
            return
        try:
            storage = self._require_enabled(project)
            request = msgspec.json.decode(attempt.request, type=ExportRequest)
            await self._produce(task_id, project, request, attempt.created_at, storage)
        except UserIOError as error:
            await self._fail(task_id, error)

    async def _produce(
        self, task_id: str, project: ProjectRecord, request: ExportRequest, created_at: datetime, storage: Storage
    ) -> None:
        extension = lossless.EXTENSION if request.format == "userio" else request.format
        filename = f"{project.id}-{task_id}-{created_at.strftime('%Y%m%d%H%M%S')}Z.{extension}"
        key = f"{project.id}/{task_id}/{filename}"
        if request.format == "userio":
            await self._produce_lossless(task_id, project, request, key, filename, storage)
            return
        columns: list[Column] = []
        if request.format == "csv":
            schema = await self.projects.custom_schema(project.id)
            columns = columns_for(check_request(request), schema)
        escape_formulas = request.csv is not msgspec.UNSET and request.csv.escape_formulas is True
        # `disabled` of every user as of the export's start (docs/reference.md#users-disabled-state)
        now = self.clock.now()
        writer = await storage.open_writer(key, content_type=CONTENT_TYPES[request.format], filename=filename)
        count = 0
        started = time.perf_counter()
        try:
            delta = request.since is not msgspec.UNSET
            if delta and columns:
                columns = [*columns, _DELETED_COLUMN]
            if columns:
                await writer.write(csv_header(columns))
            async with self.db.snapshot() as snapshot:
                # The snapshot's watermark: every entry up to it is in this file (docs/changes.md#delta-exports).
                watermark = await self.changes.watermark(snapshot, project.id)
                pages = 0
                page_source: AsyncIterator[Sequence[Row | str]]
                if delta:
                    assert isinstance(request.since, str)
                    page_source = self._delta_pages(snapshot, project.id, request.since)
                else:
                    page_source = self.users.export_pages(snapshot, project.id, self.config.page_size)
                async for page in page_source:
                    for start in range(0, len(page), _SLICE):
                        with paused_gc():
                            documents = [
                                _tombstone(user, bool(columns))
                                if isinstance(user, str)
                                else build_document(user, project.id, now)
                                for user in page[start : start + _SLICE]
                            ]
                            if delta and columns:
                                for document in documents:
                                    document.setdefault(_DELETED_KEY, False)
                            data = (
                                csv_rows(documents, columns, escape_formulas=escape_formulas)
                                if columns
                                else ndjson_lines(documents)
                            )
                        await writer.write(data)
                        await asyncio.sleep(0)
                    count += len(page)
                    pages += 1
                    if pages % _PROGRESS_EVERY == 0:
                        await self._progress(task_id, count)
            written = time.perf_counter()
            stored = await writer.complete()
        except BaseException:
            await writer.abort()
            raise
        # Where a slow export's time went: reading and encoding, or the storage putting the file together.
        logger.info(
            "export %s: %s users, %s bytes written in %.2f s; the storage completed the file in %.2f s",
            task_id,
            count,
            stored.size,
            written - started,
            time.perf_counter() - written,
        )
        await self._complete(task_id, stored.key, stored.size, stored.sha256, count, watermark)
        telemetry.export_done(time.perf_counter() - started, stored.size)

    async def _produce_lossless(
        self, task_id: str, project: ProjectRecord, request: ExportRequest, key: str, filename: str, storage: Storage
    ) -> None:
        """The lossless export (docs/reference.md#export-lossless): import records, encrypted as they are made.

        Each slice of records is handed to age as soon as it is encoded; only ciphertext reaches the storage.
        """
        assert request.encryption is not msgspec.UNSET
        if not project.settings.allow_secret_export:  # turned off since the export was accepted
            raise SecretExportDisabled()
        recipients = parse_recipients(request.encryption.age_recipients)
        writer = await storage.open_writer(key, content_type=lossless.CONTENT_TYPE, filename=filename)
        age = AgeStream(recipients, writer.write)
        count = 0
        started = time.perf_counter()
        try:
            async with self.db.snapshot() as snapshot:
                watermark = await self.changes.watermark(snapshot, project.id)
                pages = 0
                async for page in self.users.lossless_pages(snapshot, project.id, self.config.page_size):
                    for start in range(0, len(page), _SLICE):
                        with paused_gc():
                            data = lossless.lossless_lines(page[start : start + _SLICE])
                        await age.write(data)
                        del data
                    count += len(page)
                    pages += 1
                    if pages % _PROGRESS_EVERY == 0:
                        await self._progress(task_id, count)
            await age.close()
            written = time.perf_counter()
            stored = await writer.complete()
        except BaseException:
            await age.abort()
            await writer.abort()
            raise
        logger.info(
            "lossless export %s: %s users, %s bytes (age) written in %.2f s; the storage completed the file in %.2f s",
            task_id,
            count,
            stored.size,
            written - started,
            time.perf_counter() - written,
        )
        await self._complete(task_id, stored.key, stored.size, stored.sha256, count, watermark)
        telemetry.export_done(time.perf_counter() - started, stored.size)
        telemetry.secret_export("completed")

    async def _complete(self, task_id: str, key: str, size: int, sha256: str, count: int, watermark: str) -> None:
        """The task completed with its file and the change-log cursor of the snapshot it holds."""
        now = self.clock.now()
        async with self.db.transaction() as tx:
            await self.repository.complete(
                tx, task_id, now, now + self.config.result_ttl, key, size, sha256, count, watermark=watermark
            )

    async def _delta_pages(self, tx: Tx, project_id: str, since: str) -> AsyncIterator[list[Row | str]]:
        """A delta export's lines in id order, a page at a time.

        The row of each user changed after `since` that the snapshot holds; the id (a tombstone) of each one it no
        longer holds.
        """
        changed = sorted(await self.changes.changed_since(tx, project_id, since))
        size = self.config.page_size
        for start in range(0, len(changed), size):
            ids = changed[start : start + size]
            rows = {
                row["id"]: row
                for row in await self.users.user_rows_page(tx, project_id, after="", limit=len(ids), user_ids=ids)
            }
            yield [rows.get(user_id, user_id) for user_id in ids]

    async def _progress(self, task_id: str, processed: int) -> None:
        async with self.db.transaction() as tx:
            await self.repository.record_progress(tx, task_id, processed)

    async def _fail(self, task_id: str, error: UserIOError) -> None:
        """A failed export is `completed` with `failed_at` and `error`, and no URL.

        See docs/reference.md#export-task-lifecycle.
        """
        now = self.clock.now()
        async with self.db.transaction() as tx:
            await self.repository.fail(tx, task_id, now, now + self.config.result_ttl, error_object(error))

    # Housekeeping (the sweeper).

    async def observe_queue(self) -> None:
        """Report the exports waiting for a worker and running, and the oldest wait (metrics only)."""
        if telemetry.metrics is None:
            return
        async with self.db.reader() as tx:
            pending = await self.repository.pending(tx)
        telemetry.queue_state("export", [task.enqueued_at for task in pending], self.clock.now())

    async def requeue_stale(self, *, older_than: datetime | None = None) -> int:
        """Enqueue again the exports nobody is doing (lease lapsed, job lost; with `older_than`, all pending).

        The rule and the sweep are `queue.requeue`'s, as for imports.
        """
        now = self.clock.now()
        async with self.db.reader() as tx:
            pending = await self.repository.pending(tx)

        async def enqueue(task_id: str, run: str, first: bool) -> None:
            await self._enqueue(task_id, f"{task_id}:{run}", first=first)

        requeued = await requeue(
            self.db,
            [Pending(task.id, _lease_name(task.id), task.enqueued_at) for task in pending],
            queue=self.queue,
            config=self.queue_config,
            now=now,
            job_key=_job_task,
            mark=lambda tx, task_ids: self.repository.mark_enqueued(tx, task_ids, now),
            enqueue=enqueue,
            older_than=older_than,
        )
        telemetry.requeued("export", requeued)
        return requeued

    async def purge_expired(self) -> int:
        """24 hours after completion the task is gone (`TaskNotFound`) and so is its file.

        See docs/reference.md#export-task-lifecycle.

        The file goes first; a task whose file cannot be deleted now stays (answering 404) until the next sweep.
        """
        now = self.clock.now()
        async with self.db.reader() as tx:
            expired = await self.repository.expired(tx, now)
        purged = []
        for task_id, file_key in expired:
            if file_key and self.storage is not None:
                try:
                    await self.storage.delete(file_key)
                except Exception:
                    logger.warning("could not delete export file %s; will retry", file_key, exc_info=True)
                    continue
            purged.append(task_id)
        async with self.db.transaction() as tx:
            await self.repository.delete(tx, purged)
        return len(purged)

    # The project's tasks (beyond the reference: the console's list).

    async def list_tasks(self, project: ProjectRecord, limit: int, after: PageCursor | None) -> ExportTaskList:
        """The project's live tasks, newest first, `limit` at a time; no download URL (the status signs one)."""
        self._require_enabled(project)
        async with self.db.reader() as tx:
            rows = await self.repository.live(tx, project.id, self.clock.now(), limit + 1, after)
        items = [_task(row) for row in rows[:limit]]
        last = items[-1] if len(rows) > limit else None
        return ExportTaskList(items, encode_cursor(PageCursor(last.created_at, last.id)) if last else None)


def _check_encryption(project: ProjectRecord, request: ExportRequest) -> None:
    """`encryption` goes with `format: "userio"` alone, which the project must allow and which needs recipients."""
    if request.format != "userio":
        if request.encryption is not msgspec.UNSET:
            raise ValidationFailed(
                [Cause("/encryption", "const", {"format": request.format})],
                'encryption is for the lossless export only ("format": "userio")',
            )
        return
    if not project.settings.allow_secret_export:
        telemetry.secret_export("refused")
        raise SecretExportDisabled()
    if request.csv is not msgspec.UNSET:
        raise ValidationFailed(
            [Cause("/csv", "const", {"format": "userio"})], 'csv options do not apply to "format": "userio"'
        )
    if request.since is not msgspec.UNSET:
        raise ValidationFailed(
            [Cause("/since", "const", {"format": "userio"})],
            'the lossless export is a whole snapshot: "since" is for csv and ndjson deltas',
        )
    if request.encryption is msgspec.UNSET:
        raise ValidationFailed(
            [Cause("", "required", {"missing": ["encryption"]})],
            'the lossless export is always encrypted: give "encryption": {"age_recipients": ["age1..."]}',
        )
    parse_recipients(request.encryption.age_recipients)


def _log_lossless(
    task_id: str, project: ProjectRecord, request: ExportRequest, requested_by: AdminIdentity | None
) -> None:
    """Every lossless export is on record with who asked for it (public keys only: nothing secret)."""
    assert request.encryption is not msgspec.UNSET
    logger.warning(
        "lossless export %s of project %s (password hashes and second-factor secrets) requested by admin key %s,"
        " sub %s, encrypted to %s",
        task_id,
        project.id,
        requested_by.key_id if requested_by else "unknown",
        (requested_by.sub or "none") if requested_by else "unknown",
        ", ".join(request.encryption.age_recipients),
    )
    telemetry.secret_export("accepted")


_DELETED_KEY = "\x00deleted"
"""Where a delta CSV's `deleted` cell is read from (no exported member has that name)."""
_DELETED_COLUMN = Column(tokens=(_DELETED_KEY,), name="deleted")


def _tombstone(user_id: str, csv: bool) -> dict[str, Any]:
    """A deleted user's line in a delta export: ndjson `{"sub", "deleted": true}`; CSV `sub` and `deleted` only."""
    return {"sub": user_id, _DELETED_KEY: True} if csv else {"sub": user_id, "deleted": True}


def _task(row: ExportTaskRow) -> ExportTask:
    """The task as answered, but the download URL: progress while pending, else the file's facts or the error."""
    task = ExportTask(id=row.id, created_at=row.created_at, status=row.status, request=row.request)
    if row.status != "completed":
        task.progress = ExportProgress(processed=row.processed)
        return task
    assert row.completed_at is not None
    task.completed_at = row.completed_at
    if row.failed_at is not None:
        assert row.error is not None
        task.failed_at = row.failed_at
        task.error = row.error
        return task
    assert row.record_count is not None and row.size is not None and row.sha256 is not None
    task.record_count = row.record_count
    task.size = row.size
    task.sha256 = row.sha256
    if row.watermark is not None:
        task.watermark = row.watermark
    return task


def _lease_name(task_id: str) -> str:
    return f"export:{task_id}"


def _job_task(job_id: str) -> str | None:
    """The export a job id of ours names (`userio:export:<task>:<run>`), or None for another job."""
    parts = job_id.split(":")
    return parts[2] if len(parts) >= 4 and parts[:2] == ["userio", "export"] else None
