"""The import: tasks as rows, chunks as jobs, records applied in batches (docs/reference.md#import).

A task is stored with its chunks before anything is enqueued, so whatever runs the jobs can die at any
point: a chunk's writes, its details and its "done" mark commit together, and a chunk that was not done is
run again from the start. A running chunk holds a lease its job renews; the sweeper enqueues again a chunk
whose lease lapsed (its worker died) or whose job was lost.

A record that some layer refuses fails alone (docs/reference.md#input-hygiene): values no layer below can hold are found
before the chunk runs (`screening.py`); anything else that makes a chunk fail for a reason that is not transient gets
one more whole try, then the chunk is applied record by record, each in a savepoint, and a record that fails there is
reported failed. No error path runs again the code that failed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum

import msgspec
from msgspec import Raw

from litestar_userio.changes.change_service import ChangeService
from litestar_userio.changes.entries import ChangeOrigin
from litestar_userio.config import ImportConfig, QueueConfig
from litestar_userio.db.engine import Database, Tx
from litestar_userio.errors import (
    Cause,
    IdempotencyKeyReused,
    InternalError,
    ServiceUnavailable,
    TaskNotFound,
    UserIOError,
    ValidationFailed,
    WriteConflict,
)
from litestar_userio.imports.claims import by_attribute, look_up_claims, wanted_login_ids
from litestar_userio.imports.import_repository import OUTCOMES, ImportRepository, TaskRow, TaskSettings
from litestar_userio.imports.import_schemas import (
    ImportDetail,
    ImportProgress,
    ImportRequest,
    ImportSummary,
    ImportTaskCreated,
    ImportTaskItem,
    ImportTaskList,
    ImportTaskStatus,
    UserRecord,
)
from litestar_userio.imports.planning import OAUTH_KEY, LoginKey, login_keys, oauth_keys, plan_chunks
from litestar_userio.imports.rules import ImportWorld
from litestar_userio.imports.screening import may_hold_nul, safe_decode, screen_record, storable_text
from litestar_userio.imports.validation import ParsedRecord, parse_record, redact
from litestar_userio.observability import reasons, telemetry
from litestar_userio.paging import PageCursor, encode_cursor
from litestar_userio.passwords.formats import HashError, HashPolicy, parse_password
from litestar_userio.projects.project_service import ProjectRecord, ProjectService
from litestar_userio.queue.leases import hold_lease
from litestar_userio.queue.queue_protocol import JobQueue
from litestar_userio.queue.requeue import Pending, requeue
from litestar_userio.runtime import paused_gc
from litestar_userio.statuses import error_object
from litestar_userio.users.custom_attributes import CustomAttributeSpec
from litestar_userio.users.login_id_rules import LoginIDRules
from litestar_userio.users.passwords import PasswordVerifier
from litestar_userio.users.user_repository import UserRepository
from userio_core.clock import Clock
from userio_core.ids import new_task_id
from userio_core.retry import Backoff, retrying

__all__ = ["IMPORT_CHUNK_JOB", "ImportService"]

logger = logging.getLogger("litestar_userio.imports")

IMPORT_CHUNK_JOB = "userio_import_chunk"
_CONFLICT_RETRIES = 5
_WHOLE_CHUNK_TRIES = 2
"""Runs of a whole chunk that fail for a reason that is not transient before it is applied record by record."""
_SAMPLED_RECORDS = 8
"""Records of a chunk looked up before its first run skips the lookup of the rest (`ImportService._apply`)."""
_OPTIMISM_PAUSE = 300.0
"""Seconds after a chunk's optimistic run conflicted during which the project's chunks look up from their first run
in this process: a workload that mixes stored users into new ones wastes one run of a chunk per pause, not one per
chunk."""
_REMEMBERED_PROJECTS = 1024
"""Projects whose last conflict is remembered (the oldest forgotten first): a bound on what a process keeps."""


class ChunkMode(StrEnum):
    """How `_finish_chunk` runs a chunk."""

    WHOLE = "whole"
    """Every record in one run (optimistic at first)."""
    ONE_BY_ONE = "one_by_one"
    """Record by record, after whole runs failed for a reason that is not transient."""
    GIVE_UP = "give_up"
    """Nothing applied: every record reported failed (a chunk that keeps killing its job)."""


class ImportService:
    """Creates import tasks, applies their chunks, answers their status, purges old ones."""

    def __init__(
        self,
        db: Database,
        queue: JobQueue,
        projects: ProjectService,
        config: ImportConfig,
        queue_config: QueueConfig,
        clock: Clock,
        *,
        passwords: PasswordVerifier | None = None,
        changes: ChangeService | None = None,
        emit: Callable[..., None] | None = None,
    ) -> None:
        self.db = db
        self.changes = changes
        """Woken after a chunk committed users' changes (its entries are in the change log already)."""
        self.passwords = passwords
        """Where a dry run's `password_checks` run (the sign-in pool, with its per-project share)."""
        self.queue = queue
        self.projects = projects
        self.config = config
        self.queue_config = queue_config
        self.clock = clock
        self.repository = ImportRepository()
        self.users = UserRepository()
        self._applying = asyncio.Semaphore(config.chunks_at_once)
        """Chunks this process applies at once; the other jobs' chunks wait here, their leases held."""
        self._conflicted_at: dict[str, float] = {}
        """Project id -> when (monotonic) an optimistic run of one of its chunks last conflicted, oldest first."""
        self.emit: Callable[..., None] = emit or _no_events
        """Litestar's `app.emit` (the plugin's lifespan passes it): `userio.import.completed` once per task
        (docs/reference.md#events; no event per record, docs/reference.md#import-no-user-events). A worker
        process has no app: its completions emit nothing."""

    # Creating a task (docs/reference.md#import-request).

    async def create_task(
        self,
        project: ProjectRecord,
        request: ImportRequest,
        *,
        idempotency_key: str | None = None,
        request_sha256: str | None = None,
    ) -> ImportTaskCreated:
        """Store the task and its chunks, then enqueue the chunks; the work runs in the background.

        With an `idempotency_key`, a request replayed (its answer was lost) answers the task it created the
        first time instead of applying the records again; the same key with another body is refused.
        """
        if idempotency_key is not None:
            existing = await self._replayed(project.id, idempotency_key, request_sha256)
            if existing is not None:
                return existing
        task_id = new_task_id("task_")
        now = self.clock.now()
        records = request.records
        if request.password_checks:
            records = await self._check_passwords(project, request)
        try:
            async with self.db.transaction() as tx:
                chunks = await self._plan(tx, project, request.records)
                await self.repository.add_task(
                    tx,
                    task_id=task_id,
                    project_id=project.id,
                    created_at=now,
                    identifier=request.identifier,
                    upsert=request.upsert,
                    dry_run=request.dry_run,
                    records=records,
                    chunks=chunks,
                    idempotency_key=idempotency_key,
                    request_sha256=request_sha256,
                )
        except WriteConflict:
            if idempotency_key is None:
                raise
            # The same key at the same moment: the other request created the task.
            existing = await self._replayed(project.id, idempotency_key, request_sha256)
            if existing is None:
                raise
            return existing
        for seq in range(len(chunks)):
            await self._enqueue(task_id, seq, f"{task_id}:{seq}:0")
        return ImportTaskCreated(id=task_id, created_at=now, status="pending")

    async def _check_passwords(self, project: ProjectRecord, request: ImportRequest) -> list[Raw]:
        """The dry run: verify the known pairs now; the records carry only the outcome to the job.

        See docs/reference.md#import-dry-run.

        A checked record is stored wrapped (`_CHECKED`), so its detail tells the outcome; the plaintexts go nowhere.
        """
        policy = project.settings.hash_policy(self.config.hash_bounds, self.config.max_bcrypt_cost)
        outcomes: dict[int, str] = {}
        for check in request.password_checks or ():
            outcome = "unsupported"
            password = _password_object(request.records[check.index])
            if password is not None and self.passwords is not None:
                try:
                    legacy = parse_password(password, policy)
                except HashError:
                    pass
                else:
                    if legacy.verify is not None:  # the lazy-migration marker has no hash: `unsupported`
                        verified = await self.passwords.verify(project.id, legacy, check.password)
                        outcome = "verified" if verified else "mismatch"
            if outcomes.get(check.index) != "mismatch":  # two pairs for one record: both must verify
                outcomes[check.index] = outcome
        return [
            Raw(b'{"' + _CHECKED + b'":"' + outcomes[i].encode() + b'","record":' + bytes(raw) + b"}")
            if i in outcomes
            else raw
            for i, raw in enumerate(request.records)
        ]

    async def _plan(self, tx: Tx, project: ProjectRecord, records: list[Raw]) -> list[list[int]]:
        """The task's chunks: interacting records together (`plan_chunks`).

        A request that fits in one chunk is that chunk, whatever its records share: its login ids are neither read
        nor looked up (a probe per login id, about 6 us of PostgreSQL per record of `bench/import.py`, where a full
        request of its records is one chunk at the default size).
        """
        if len(records) <= self.config.chunk_size:
            return [list(range(len(records)))] if records else []
        rules = project.settings.login_id_rules()
        keys = [_planning_keys(raw, rules) for raw in records]
        login_ids = by_attribute(k for ks in keys for k in ks if k[0] != OAUTH_KEY)
        owners = await self.users.find_owners(tx, project.id, login_ids)
        return plan_chunks(keys, owners, self.config.chunk_size)

    async def _replayed(self, project_id: str, key: str, request_sha256: str | None) -> ImportTaskCreated | None:
        async with self.db.reader() as tx:
            task = await self.repository.by_idempotency_key(tx, project_id, key)
        if task is None:
            return None
        if task.expire_at is not None and task.expire_at <= self.clock.now():
            async with self.db.transaction() as tx:  # expired but not yet purged: the key is free again
                await self.repository.delete_task(tx, task.id)
            return None
        if task.request_sha256 != request_sha256:
            raise IdempotencyKeyReused()
        return ImportTaskCreated(id=task.id, created_at=task.created_at, status=task.status)

    async def _enqueue(self, task_id: str, seq: int, job_key: str, *, first: bool = False) -> None:
        try:
            await self.queue.enqueue(
                IMPORT_CHUNK_JOB, task_id, seq, telemetry.carrier(), job_id=f"userio:import:{job_key}", first=first
            )
        except Exception:  # the task is stored: the sweeper enqueues it once the queue is back
            logger.warning(
                "could not enqueue chunk %s of import %s; the sweeper will retry", seq, task_id, exc_info=True
            )

    # Status (docs/reference.md#import-task-lifecycle).

    async def status(self, project_id: str, task_id: str) -> bytes:
        """The status body, JSON-encoded; `TaskNotFound` for unknown, foreign or expired ids."""
        async with self.db.reader() as tx:
            task = await self.repository.task(tx, project_id, task_id)
            if task is None or (task.expire_at is not None and task.expire_at <= self.clock.now()):
                raise TaskNotFound()
            if task.status != "completed":
                waiting = await self.repository.waiting_since(tx, task_id)
                stalled = waiting is not None and waiting < self.clock.now() - self.queue_config.lease_ttl
                return msgspec.json.encode(
                    ImportTaskStatus(
                        id=task.id,
                        created_at=task.created_at,
                        status="pending",
                        progress=ImportProgress(total=task.total, processed=task.processed),
                        stalled_since=waiting if stalled and waiting is not None else msgspec.UNSET,
                    )
                )
            details = await self.repository.details(tx, task_id)
        return msgspec.json.encode(
            ImportTaskStatus(
                id=task.id,
                created_at=task.created_at,
                completed_at=task.completed_at,  # type: ignore[arg-type]  # set on every completed task
                status="completed",
                summary=_summary(task),
                details=details,
            )
        )

    # Applying a chunk (the job).

    async def process_chunk(self, task_id: str, seq: int) -> None:
        """Apply one chunk exactly once: its writes, details and done-mark commit in one transaction.

        The chunk waits for one of this process's `chunks_at_once` turns with its lease held, so no other worker
        takes it meanwhile, and before its run is counted, so a worker that dies with chunks waiting costs them
        no attempt.
        """
        async with hold_lease(
            self.queue.leases, _lease_name(task_id, seq), self.queue_config.lease_ttl, "import_chunk"
        ) as held:
            if not held:
                return  # another worker runs it; should that worker die, its lease lapses and the sweeper steps in
            async with self._applying:
                async with self.db.transaction() as tx:
                    attempts = await self.repository.claim_chunk(tx, task_id, seq)
                if attempts is None:
                    return
                if attempts > self.queue_config.max_attempts:
                    logger.error(
                        "chunk %s of import %s was started %s times without finishing; its records are reported failed",
                        seq,
                        task_id,
                        self.queue_config.max_attempts,
                    )
                    completed = await self._finish_chunk(task_id, seq, mode=ChunkMode.GIVE_UP)
                else:
                    completed = await self._apply_chunk(task_id, seq)
        if completed is not None:
            await self._emit_completed(completed)

    async def _apply_chunk(self, task_id: str, seq: int) -> tuple[str, str] | None:
        """Whole, and when that keeps failing for a reason that is not transient, record by record.

        (project id, task id) when this chunk completed the task.
        """
        for attempt in range(1, _WHOLE_CHUNK_TRIES + 1):
            try:
                return await self._finish_with_conflict_retries(task_id, seq, mode=ChunkMode.WHOLE)
            except (ServiceUnavailable, WriteConflict):
                raise  # transient: the queue runs the job again
            except Exception:
                logger.warning(
                    "chunk %s of import %s failed (%s of %s)%s",
                    seq,
                    task_id,
                    attempt,
                    _WHOLE_CHUNK_TRIES,
                    "; applying its records one by one" if attempt == _WHOLE_CHUNK_TRIES else "",
                    exc_info=True,
                )
        return await self._finish_with_conflict_retries(task_id, seq, mode=ChunkMode.ONE_BY_ONE)

    async def _finish_with_conflict_retries(self, task_id: str, seq: int, *, mode: ChunkMode) -> tuple[str, str] | None:
        # Another task wrote one of these users meanwhile: run the chunk again on what is committed now.
        retries = retrying(attempts=_CONFLICT_RETRIES + 1, on=WriteConflict, backoff=Backoff(0.01, jitter=(1.0, 5.0)))
        optimistic = mode is ChunkMode.WHOLE
        async for attempt in retries:
            with attempt:
                try:
                    return await self._finish_chunk(task_id, seq, mode=mode, optimistic=optimistic)
                finally:
                    optimistic = False
        return None  # pragma: no cover  # retrying re-raises the last conflict

    async def _finish_chunk(
        self, task_id: str, seq: int, *, mode: ChunkMode, optimistic: bool = False
    ) -> tuple[str, str] | None:
        """Apply the chunk (`ChunkMode.WHOLE`, `ONE_BY_ONE`) or report its records failed (`GIVE_UP`); mark it done.

        `optimistic`: see `_apply`. (project id, task id) when this chunk completed the task.
        """
        started = time.perf_counter()
        async with self.db.transaction() as tx:
            chunk = await self.repository.lock_pending_chunk(tx, task_id, seq)
            if chunk is None:
                return None
            task = await self.repository.task_settings(tx, task_id)
            if task is None:
                return None
            indices, records = chunk.indices, chunk.records
            checked: dict[int, str] = {}
            if task.dry_run:
                records = [_unwrap_checked(index, raw, checked) for index, raw in zip(indices, records, strict=True)]
            if mode is ChunkMode.GIVE_UP:
                error = InternalError("this record could not be processed; it was not applied")
                details = [_refused_detail(i, raw, error) for i, raw in zip(indices, records, strict=True)]
            elif mode is ChunkMode.ONE_BY_ONE:
                details = await self._apply_one_by_one(tx, task, task_id, indices, records)
            else:
                details = await self._apply(tx, task, task_id, indices, records, optimistic=optimistic)
            for detail in details:
                if detail.index in checked:
                    detail.password_check = checked[detail.index]  # type: ignore[assignment]
            progress = await self.repository.record_outcomes(tx, chunk, task_id, details)
            completed: tuple[str, str] | None = None
            if progress is not None and progress.processed >= progress.total:
                await self._complete(tx, task_id)
                completed = task.project_id, task_id
        telemetry.import_chunk_done(reasons(details), time.perf_counter() - started)
        if self.changes is not None and not task.dry_run:
            self.changes.wake(task.project_id)
        return completed

    async def _emit_completed(self, completed: tuple[str, str]) -> None:
        """`userio.import.completed` with the task's id, project and summary, after the last chunk committed."""
        project_id, task_id = completed
        try:
            async with self.db.reader() as tx:
                task = await self.repository.task(tx, project_id, task_id)
            if task is not None:
                summary = msgspec.to_builtins(_summary(task))
                self.emit(
                    "userio.import.completed",
                    {"id": task_id, "project_id": project_id, "dry_run": task.dry_run, "summary": summary},
                )
        except Exception:  # the import is done whatever a listener does
            logger.exception("could not emit userio.import.completed for %s", task_id)

    async def _apply_one_by_one(
        self, tx: Tx, task: TaskSettings, task_id: str, indices: list[int], records: list[Raw]
    ) -> list[ImportDetail]:
        """Each record in its own savepoint, in index order: one that fails is reported failed, alone."""
        details: list[ImportDetail] = []
        for index, raw in zip(indices, records, strict=True):
            try:
                async with tx.savepoint():
                    details.extend(await self._apply(tx, task, task_id, [index], [raw]))
            except (ServiceUnavailable, WriteConflict):
                raise
            except Exception as exc:
                logger.warning("record %s of import %s could not be applied: %s", index, task_id, type(exc).__name__)
                details.append(_refused_detail(index, raw, _UNAPPLICABLE))
        return details

    async def _apply(
        self,
        tx: Tx,
        task: TaskSettings,
        task_id: str,
        indices: list[int],
        records: list[Raw],
        *,
        optimistic: bool = False,
    ) -> list[ImportDetail]:
        """The records applied in index order on the users they name; their details.

        `optimistic` (a chunk's first run) skips looking up the stored users that the records' login ids name when a
        sample of the records names none, the run writes, and no optimistic run of the project conflicted lately: a
        fresh import's records name none. Should one name a stored user after all, its login id breaks the unique
        index on login ids, the chunk fails with `WriteConflict`, and its next run looks them all up. The lookup
        was 6.5 us of PostgreSQL per record of `bench/import.py`.
        """
        project_id = task.project_id
        project = await self.projects.get(project_id, tx)
        if project is None:
            raise InternalError("the project of this import no longer exists")
        schema = await self.projects.custom_schema(project_id, tx)
        rules = project.settings.login_id_rules()
        with paused_gc():
            policy = project.settings.hash_policy(self.config.hash_bounds, self.config.max_bcrypt_cost)
            special_use = project.settings.allow_special_use_email_domains
            parsed = [
                _parse(raw, schema, policy, identifier=task.identifier, special_use_emails=special_use)
                for raw in records
            ]
        applicable = [p.record for p in parsed if p.record is not None]  # a failed record touches no user
        look_up = (
            not optimistic
            or task.dry_run
            or time.monotonic() - self._conflicted_at.get(project_id, -_OPTIMISM_PAUSE) < _OPTIMISM_PAUSE
            or await self._names_stored_users(tx, project_id, applicable, rules)
        )
        claims = await look_up_claims(tx, self.users, project_id, applicable, rules, holders=look_up)
        loaded = await self.users.load(tx, claims.owners.values())
        role_keys = {k for p in parsed if p.record and isinstance(p.record.roles, list) for k in p.record.roles}
        group_keys = {k for p in parsed if p.record and isinstance(p.record.groups, list) for k in p.record.groups}
        for user in loaded.users.values():
            role_keys |= user.roles
            group_keys |= user.groups
        role_ids = await self.users.key_ids(tx, project_id, "userio_role", role_keys)
        group_ids = await self.users.key_ids(tx, project_id, "userio_group", group_keys)
        now = self.clock.now()
        world = ImportWorld(
            identifier=task.identifier,
            upsert=task.upsert,
            now=now,
            users=loaded.users,
            known_roles=set(role_ids),
            known_groups=set(group_ids),
            create_unknown_roles=project.settings.create_unknown_roles_on_import,
            create_unknown_groups=project.settings.create_unknown_groups_on_import,
            custom_schema=schema or None,
            login_id_rules=rules,
            oauth_owners=claims.oauth_owners,
            taken_ids=claims.taken_ids,
            key_owners=claims.key_owners,
        )
        with paused_gc():
            details = [world.apply(index, p) for index, p in zip(indices, parsed, strict=True)]
        if task.dry_run:
            created = {user.id for user in world.users.values() if user.is_new}
            for detail in details:
                if detail.user_id in created:
                    detail.user_id = msgspec.UNSET  # such a user would be created; none was
        else:
            if world.new_roles:
                role_ids |= await self.users.key_ids(tx, project_id, "userio_role", world.new_roles, create_at=now)
            if world.new_groups:
                group_ids |= await self.users.key_ids(tx, project_id, "userio_group", world.new_groups, create_at=now)
            try:
                await self.users.flush(
                    tx,
                    project_id,
                    loaded,
                    world.users.values(),
                    role_ids,
                    group_ids,
                    origin=ChangeOrigin("import", task_id),
                    at=now,
                )
            except WriteConflict:
                if not look_up:  # a record named a stored user after all: the next run looks up
                    self._conflicted_at.pop(project_id, None)
                    self._conflicted_at[project_id] = time.monotonic()
                    while len(self._conflicted_at) > _REMEMBERED_PROJECTS:
                        del self._conflicted_at[next(iter(self._conflicted_at))]
                raise
        return details

    async def _names_stored_users(
        self, tx: Tx, project_id: str, records: list[UserRecord], rules: LoginIDRules
    ) -> bool:
        """Whether one of a few records spread over the chunk names a stored user (a re-import names them all)."""
        sample = records[:: max(1, len(records) // _SAMPLED_RECORDS)][:_SAMPLED_RECORDS]
        return bool(await self.users.find_owners(tx, project_id, wanted_login_ids(sample, rules)))

    async def _complete(self, tx: Tx, task_id: str) -> None:
        """The last chunk is done: the task is completed and expires `result_ttl` later."""
        now = self.clock.now()
        created_at = await self.repository.complete_task(tx, task_id, now, now + self.config.result_ttl)
        if created_at is not None:  # counted before the commit: a rare rollback counts a task twice
            telemetry.import_task_done((now - created_at).total_seconds())

    # Housekeeping (the sweeper).

    async def requeue_stale(self, *, older_than: datetime | None = None) -> int:
        """Enqueue again the chunks nobody is doing; returns how many.

        Those a worker took (claimed in the database, or marked by the queue `lease_ttl` ago) and whose lease is
        not held: their worker died. Those enqueued `stale_after` ago and never started (Redis lost its queue).
        With `older_than`, every chunk pending since then (a new in-process runner). The rule and the sweep are
        `queue.requeue`'s, as for exports.
        """
        now = self.clock.now()
        async with self.db.reader() as tx:
            pending = await self.repository.pending_chunks(tx)
        ids = {(chunk.task_id, chunk.seq): chunk.id for chunk in pending}

        async def mark(tx: Tx, keys: list[tuple[str, int]]) -> list[tuple[tuple[str, int], int]]:
            marked = await self.repository.mark_enqueued(tx, [ids[key] for key in keys], now)
            return [((task_id, seq), attempts) for task_id, seq, attempts in marked]

        async def enqueue(key: tuple[str, int], run: str, first: bool) -> None:
            task_id, seq = key
            await self._enqueue(task_id, seq, f"{task_id}:{seq}:{run}", first=first)

        requeued = await requeue(
            self.db,
            [Pending((c.task_id, c.seq), _lease_name(c.task_id, c.seq), c.enqueued_at) for c in pending],
            queue=self.queue,
            config=self.queue_config,
            now=now,
            job_key=_job_chunk,
            mark=mark,
            enqueue=enqueue,
            older_than=older_than,
        )
        telemetry.requeued("import_chunk", requeued)
        return requeued

    async def observe_queue(self) -> None:
        """Report the chunks waiting and running, the oldest wait, and the stalled tasks per project (metrics only).

        A task is stalled while one of its chunks has waited for a worker longer than a lease (`lease_ttl`).
        """
        if telemetry.metrics is None:
            return
        now = self.clock.now()
        async with self.db.reader() as tx:
            pending = await self.repository.pending_chunks(tx)
            stalled = await self.repository.stalled_tasks(tx, now - self.queue_config.lease_ttl)
        telemetry.queue_state("import_chunk", [chunk.enqueued_at for chunk in pending], now)
        telemetry.stalled_tasks("import", stalled)

    async def purge_expired(self) -> int:
        """Delete tasks 24 hours (`result_ttl`) after completion; returns how many."""
        async with self.db.transaction() as tx:
            return await self.repository.purge_expired(tx, self.clock.now())

    # The project's tasks (beyond the reference: the console's list).

    async def list_tasks(self, project_id: str, limit: int, after: PageCursor | None) -> ImportTaskList:
        """The project's live tasks, newest first, `limit` at a time, without details."""
        async with self.db.reader() as tx:
            # One more than a page: its presence says whether there is a next page.
            tasks = await self.repository.live_tasks(tx, project_id, self.clock.now(), limit + 1, after)
        items = [_list_item(task) for task in tasks[:limit]]
        last = items[-1] if len(tasks) > limit else None
        return ImportTaskList(items, encode_cursor(PageCursor(last.created_at, last.id)) if last else None)


def _no_events(event_id: str, *args: object) -> None:
    """Without the app's emitter (a worker, the CLI), a completion emits nothing."""


def _list_item(task: TaskRow) -> ImportTaskItem:
    item = ImportTaskItem(
        id=task.id,
        created_at=task.created_at,
        status=task.status,
        dry_run=task.dry_run,
    )
    if task.status == "completed":
        item.completed_at = task.completed_at  # type: ignore[assignment]  # set on every completed task
        item.summary = _summary(task)
    else:
        item.progress = ImportProgress(total=task.total, processed=task.processed)
    return item


def _summary(task: TaskRow) -> ImportSummary:
    return ImportSummary(task.total, *(getattr(task, outcome) for outcome in OUTCOMES))


_UNAPPLICABLE = ValidationFailed(
    [Cause("", "general", {"message": "a value of this record was refused while it was applied"})],
    "this record could not be applied; it was not stored",
)


def _lease_name(task_id: str, seq: int) -> str:
    return f"import:{task_id}:{seq}"


def _job_chunk(job_id: str) -> tuple[str, int] | None:
    """The chunk a job id of ours names (`userio:import:<task>:<seq>:<run>`), or None for another job."""
    parts = job_id.split(":")
    if len(parts) < 4 or parts[:2] != ["userio", "import"] or not parts[3].isdigit():
        return None
    return parts[2], int(parts[3])


def _parse(
    raw: Raw,
    schema: dict[str, CustomAttributeSpec] | None,
    policy: HashPolicy,
    *,
    identifier: str,
    special_use_emails: bool = False,
) -> ParsedRecord:
    """`parse_record`, unless the record holds a value no layer below can hold: then it fails, naming where.

    A record is parsed straight away unless it may hold U+0000: msgspec refuses a number it cannot hold, and only
    then is the record screened for where. Screening every record first, with regexes over its bytes that all but
    a handful of records pass, took a generated record from 18.7 to 24.5-25.1 us (measured in one process);
    `tests/imports/test_parse_order.py` holds the two orders to the same outcome.
    """
    if not may_hold_nul(raw):
        try:
            return parse_record(raw, schema, policy, identifier=identifier, special_use_emails=special_use_emails)
        except msgspec.ValidationError:  # a number out of range (screening names each), or something else (below)
            pass
    if causes := screen_record(raw):
        return ParsedRecord(redact(safe_decode(raw)), None, ValidationFailed(causes), [])
    return parse_record(raw, schema, policy, identifier=identifier, special_use_emails=special_use_emails)


def _planning_keys(raw: Raw, rules: LoginIDRules) -> list[LoginKey]:
    """The login ids that can join this record to others; one that cannot be looked up names no stored user.

    A record the job will refuse must not make the request fail: its odd login id is left out of planning.
    """
    try:
        keys = login_keys(raw, rules) + oauth_keys(raw)
        return [(attribute, value) for attribute, value in keys if storable_text(value)]
    except Exception:
        return []


_CHECKED = b"$userio_password_check"
"""The member that wraps a dry run's checked record with its outcome. A record sent in that very shape is read
as a checked one: in a dry run, which writes nothing, that only misleads its own sender."""
_CHECK_OUTCOMES = frozenset({"verified", "mismatch", "unsupported"})


def _password_object(raw: Raw) -> dict[str, object] | None:
    """The record's `password` object, or None when it has none (or the record is not JSON)."""
    try:
        record = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None
    password = record.get("password") if isinstance(record, dict) else None
    return password if isinstance(password, dict) else None


def _unwrap_checked(index: int, raw: Raw, checked: dict[int, str]) -> Raw:
    """A dry run's record as submitted, its password check's outcome noted in `checked`."""
    if bytes(memoryview(raw)[: len(_CHECKED) + 2]) != b'{"' + _CHECKED:
        return raw
    try:
        wrapper = msgspec.json.decode(raw, type=dict[str, Raw])
        outcome = msgspec.json.decode(wrapper[_CHECKED.decode()])
        record = wrapper["record"]
    except (msgspec.DecodeError, msgspec.ValidationError, KeyError):
        return raw
    if set(wrapper) != {_CHECKED.decode(), "record"} or outcome not in _CHECK_OUTCOMES:
        return raw
    checked[index] = outcome
    return record


def _refused_detail(index: int, raw: Raw, error: UserIOError) -> ImportDetail:
    """A failed detail built without the code that failed: the echo comes from `safe_decode`, which never raises."""
    return ImportDetail(index=index, record=redact(safe_decode(raw)), outcome="failed", errors=[error_object(error)])
