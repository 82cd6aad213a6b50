"""A project's webhooks, and the delivery of its committed change-log entries to them (docs/webhooks.md).

Deliveries are rows first: the change log's `webhooks` consumer turns each committed entry into one pending delivery
per webhook that wants it, in the transaction that advances its cursor, so an entry committed before a crash is
delivered after the restart. The queue's job (`jobs.deliver_webhooks`) then runs the project's delivery lane: claim
the due deliveries (a user's oldest pending one per webhook, so one user's entries reach one webhook in log order),
attempt them at once (`config.concurrency`), record the outcomes, again until none is due. A failed attempt is
retried after `config.retry_delays`; after the last it is `failed`, listed, and may be sent again. The sweep wakes
the lane of every project with a due delivery nobody holds (retries, a dead worker's leases).

One lane per project per process: a project's deliveries hold at most one job slot of a process, and their
attempts at most `config.concurrency` connections, so one project's dead receiver never delays another project's.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import msgspec

from litestar_userio.changes.change_service import entry_document
from litestar_userio.changes.entries import ChangeEntry
from litestar_userio.config import WebhookConfig
from litestar_userio.db.engine import Database, Tx
from litestar_userio.errors import Invalid, WebhookDeliveryNotFound, WebhookInvalid, WebhookNotFound
from litestar_userio.hooks.secrets import SecretBox
from litestar_userio.hooks.token_events import user_object_of_document
from litestar_userio.hooks.user_events import TRIGGERED_BY
from litestar_userio.observability import telemetry
from litestar_userio.queue.queue_protocol import JobQueue
from litestar_userio.webhooks.delivery import Attempt, WebhookSender, check_url, private_origins
from litestar_userio.webhooks.signing import new_secret
from litestar_userio.webhooks.webhook_repository import (
    Claimed,
    DeliveryRow,
    NewDelivery,
    Outcome,
    WebhookRepository,
    WebhookRow,
)
from litestar_userio.webhooks.webhook_schemas import CHANGE_TYPES, DeliveryInfo, DeliveryPage, WebhookInfo, WebhookSpec
from userio_core.clock import Clock
from userio_core.ids import new_id

__all__ = ["DELIVER_JOB", "WebhookService", "event_body"]

logger = logging.getLogger("litestar_userio.webhooks")

DELIVER_JOB = "userio_deliver_webhooks"
"""The job that runs a project's delivery lane (`jobs.deliver_webhooks`)."""


_SEALED = "sealed:"
_LANE_SECONDS = 60.0
"""A lane hands its job slot back after this long and wakes itself again (arq's job timeout is 2 minutes)."""


def event_body(entry: ChangeEntry, *, decoded: bool = False) -> Any:
    """The reference's event for an entry (JSON, or the object with `decoded`).

    `payload.user` is the hooks' user object after the change, or `{"id"}` once deleted; never a secret.
    """
    document = entry_document(entry)
    user = {"id": entry.user_id} if document is None else user_object_of_document(msgspec.json.decode(document))
    event = {
        "id": entry.id,
        "seq": entry.seq,
        "type": entry.type,
        "payload": {"user": user},
        "context": {
            "timestamp": int(entry.occurred_at.timestamp()),
            "user_id": entry.user_id,
            "triggered_by": TRIGGERED_BY.get(entry.origin.kind, "system"),
        },
    }
    return event if decoded else msgspec.json.encode(event)


def _info(row: DeliveryRow) -> DeliveryInfo:
    return DeliveryInfo(
        id=row.id,
        webhook_id=row.webhook_id,
        change_id=row.change_id,
        event_type=row.event_type,
        user_id=row.user_id,
        status=row.status,  # type: ignore[arg-type]
        attempts=row.attempts,
        last_status_code=row.last_status_code,
        last_error=row.last_error,
        next_attempt_at=row.next_attempt_at if row.status == "pending" else None,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _encode_cursor(delivery_id: str) -> str:
    return base64.urlsafe_b64encode(delivery_id.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str | None) -> str | None:
    if not cursor:
        return None
    try:
        return base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise Invalid("invalid cursor: pass back a next_cursor this API gave", info={"cursor": cursor}) from exc


class WebhookService:
    """Configures webhooks, turns committed entries into deliveries, and runs the deliveries."""

    def __init__(
        self,
        db: Database,
        queue: JobQueue,
        config: WebhookConfig,
        clock: Clock,
        *,
        secrets_key: str | None = None,
        ca_file: str | None = None,
    ) -> None:
        self.db = db
        self.queue = queue
        self.config = config
        self.clock = clock
        self.repository = WebhookRepository()
        self.private = private_origins(config.allowed_private_origins)
        self.secret_box = SecretBox(secrets_key) if secrets_key else None
        """Seals the secrets at rest when the hooks' secrets key is configured (SECURITY.md)."""
        self._ca_file = ca_file
        self._sender: WebhookSender | None = None
        self._lanes: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()

    @property
    def sender(self) -> WebhookSender:
        """The process's pooled sender, made on first use."""
        if self._sender is None:
            self._sender = WebhookSender(
                timeout=self.config.timeout,
                max_response_bytes=self.config.max_response_bytes,
                private=self.private,
                ca_file=self._ca_file,
            )
        return self._sender

    async def close(self) -> None:
        """Stop the lanes of this process (their leases lapse; another process takes the deliveries) and the sender."""
        for task in list(self._lanes.values()):
            task.cancel()
        for task in list(self._lanes.values()):
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self._lanes.clear()
        if self._sender is not None:
            await self._sender.close()
            self._sender = None

    # Configuration (the admin API).

    async def webhooks(self, project_id: str) -> list[WebhookInfo]:
        """The project's webhooks, without secrets."""
        async with self.db.reader() as tx:
            rows = await self.repository.webhooks(tx, project_id)
        return [WebhookInfo(r.id, r.url, r.events, r.include_import) for r in rows]

    async def replace(self, project_id: str, specs: Sequence[WebhookSpec]) -> list[WebhookInfo]:
        """Replace the list; a webhook left out goes with its deliveries.

        A webhook whose URL was saved already keeps its id, secret and deliveries; a new one gets an id and a secret,
        which this answer alone shows.
        """
        if len(specs) > self.config.max_webhooks:
            raise WebhookInvalid(f"at most {self.config.max_webhooks} webhooks per project")
        urls: set[str] = set()
        for index, spec in enumerate(specs):
            try:
                check_url(spec.url, self.private)
            except ValueError as exc:
                raise WebhookInvalid(f"webhooks[{index}].url: {exc}", info={"index": index}) from None
            if spec.url in urls:
                raise WebhookInvalid(f"webhooks[{index}].url: listed twice", info={"index": index})
            urls.add(spec.url)
        now = self.clock.now()
        fresh: dict[str, str] = {}
        async with self.db.transaction() as tx:
            saved = {row.url: row for row in await self.repository.webhooks(tx, project_id)}
            rows: list[WebhookRow] = []
            for spec in specs:
                events: list[str] = [e for e in CHANGE_TYPES if e in spec.events]
                old = saved.get(spec.url)
                if old is not None:
                    rows.append(WebhookRow(old.id, spec.url, events, spec.include_import, old.secret))
                else:
                    webhook_id, secret = new_id(), new_secret()
                    fresh[webhook_id] = secret
                    sealed = self._seal(project_id, webhook_id, secret)
                    rows.append(WebhookRow(webhook_id, spec.url, events, spec.include_import, sealed))
            kept = {row.id for row in rows if row.id not in fresh}
            await self.repository.replace_webhooks(tx, project_id, rows, kept, now)
        return [WebhookInfo(r.id, r.url, r.events, r.include_import, fresh.get(r.id, msgspec.UNSET)) for r in rows]

    async def rotate_secret(self, project_id: str, webhook_id: str) -> WebhookInfo:
        """A new secret for the webhook (shown in this answer only); deliveries from now on are signed with it."""
        secret = new_secret()
        async with self.db.transaction() as tx:
            sealed = self._seal(project_id, webhook_id, secret)
            if not await self.repository.set_secret(tx, project_id, webhook_id, sealed):
                raise WebhookNotFound()
            row = next(r for r in await self.repository.webhooks(tx, project_id) if r.id == webhook_id)
        return WebhookInfo(row.id, row.url, row.events, row.include_import, secret)

    def _seal(self, project_id: str, webhook_id: str, secret: str) -> str:
        if self.secret_box is None:
            return secret
        return _SEALED + self.secret_box.seal(project_id, f"webhook:{webhook_id}", secret)

    def _open(self, project_id: str, row: WebhookRow) -> str | None:
        if not row.secret.startswith(_SEALED):
            return row.secret
        if self.secret_box is None:
            return None
        return self.secret_box.open(project_id, f"webhook:{row.id}", row.secret.removeprefix(_SEALED))

    # Deliveries (the admin API).

    async def deliveries(
        self,
        project_id: str,
        *,
        webhook_id: str | None = None,
        status: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> DeliveryPage:
        """A page of the project's deliveries, newest first; pass `next_cursor` back as `cursor`."""
        before = _decode_cursor(cursor)
        async with self.db.reader() as tx:
            rows = await self.repository.deliveries(
                tx, project_id, webhook_id=webhook_id, status=status, before=before, limit=limit + 1
            )
        items = [_info(r) for r in rows[:limit]]
        return DeliveryPage(items, _encode_cursor(rows[limit - 1].id) if len(rows) > limit else None)

    async def retry(self, project_id: str, delivery_id: str) -> DeliveryInfo:
        """Send a failed delivery again now (one more attempt); any other is answered as it is."""
        async with self.db.transaction() as tx:
            row = await self.repository.retry(tx, project_id, delivery_id, self.clock.now())
        if row is None:
            raise WebhookDeliveryNotFound()
        if row.status == "pending":
            await self.wake(project_id)
        return _info(row)

    # From the change log (the `webhooks` consumer).

    async def includes_imports(self, tx: Tx, project_id: str) -> bool:
        """Whether a webhook of the project asks for an import's entries (`include_import`), in `tx`."""
        return any(w.include_import for w in await self.repository.webhooks(tx, project_id))

    async def add_deliveries(self, tx: Tx, project_id: str, entries: Sequence[ChangeEntry]) -> int:
        """In the consumer's transaction: one pending delivery per entry and webhook that wants it; how many.

        (The change log's `webhooks` consumer, `webhooks/consumer.py`.)

        Entries whose origin is `import` go only to webhooks with `include_import` (the import emits no `user.created`).
        """
        webhooks = await self.repository.webhooks(tx, project_id)
        if not webhooks or not entries:
            return 0
        max_attempts = len(self.config.retry_delays) + 1
        new: list[NewDelivery] = []
        for entry in entries:
            wanting = [
                w for w in webhooks if entry.type in w.events and (w.include_import or entry.origin.kind != "import")
            ]
            if not wanting:
                continue
            body = event_body(entry).decode()
            new += [
                NewDelivery(new_id(), w.id, entry.id, entry.seq, entry.user_id, entry.type, body, max_attempts)
                for w in wanting
            ]
        await self.repository.add_deliveries(tx, project_id, new, self.clock.now())
        return len(new)

    # Running deliveries.

    async def wake(self, project_id: str) -> None:
        """Enqueue the project's delivery job (after a commit that made deliveries due)."""
        try:
            await self.queue.enqueue(DELIVER_JOB, project_id)
        except Exception as exc:  # the sweep wakes it within `sweep_interval`
            logger.warning("could not enqueue the webhook deliveries of %s: %s", project_id, exc)

    async def wake_due(self) -> int:
        """The sweep: enqueue the job of every project with a due delivery that no lane holds; how many."""
        async with self.db.reader() as tx:
            projects = await self.repository.due_projects(tx, self.clock.now())
        for project_id in projects:
            if project_id not in self._lanes:
                await self.wake(project_id)
        return len(projects)

    async def purge_expired(self) -> None:
        """Delete finished deliveries older than `config.retention`."""
        async with self.db.transaction() as tx:
            await self.repository.purge(tx, self.clock.now() - self.config.retention)

    async def deliver(self, project_id: str) -> None:
        """The job: run the project's lane in this process until nothing is due (or join the one running)."""
        running = self._lanes.get(project_id)
        if running is not None:
            self._again.add(project_id)  # it claims once more before it ends
            return
        task = asyncio.current_task()
        assert task is not None
        self._lanes[project_id] = task
        started = time.monotonic()
        try:
            while True:
                self._again.discard(project_id)
                claimed = await self._round(project_id)
                if not claimed and project_id not in self._again:
                    return
                if time.monotonic() - started > _LANE_SECONDS:
                    await self.wake(project_id)  # hand the slot back; the next job goes on
                    return
        finally:
            self._lanes.pop(project_id, None)

    async def _round(self, project_id: str) -> int:
        """Claim, attempt and record one batch of the project's due deliveries; how many were claimed."""
        now = self.clock.now()
        waves = -(-self.config.batch_size // self.config.concurrency)  # every attempt of every wave to the timeout
        lease_until = now + self.config.timeout * (waves + 1)
        async with self.db.transaction() as tx:
            claimed = await self.repository.claim(tx, project_id, now, self.config.batch_size, lease_until)
            webhooks = {row.id: row for row in await self.repository.webhooks(tx, project_id)} if claimed else {}
        if not claimed:
            return 0
        limit = asyncio.Semaphore(self.config.concurrency)

        async def attempt(delivery: Claimed) -> Attempt:
            webhook = webhooks.get(delivery.webhook_id)
            secret = None if webhook is None else self._open(project_id, webhook)
            if webhook is None or secret is None:
                return Attempt(False, None, "the webhook's secret does not open with this deployment's key", True, 0.0)
            async with limit:
                return await self.sender.send(webhook.url, secret, delivery.change_id, delivery.body.encode())

        attempts = await asyncio.gather(*(attempt(d) for d in claimed))
        done = self.clock.now()
        outcomes = [self._outcome(d, a, done) for d, a in zip(claimed, attempts, strict=True)]
        async with self.db.transaction() as tx:
            await self.repository.record(tx, outcomes, done)
        return len(claimed)

    def _outcome(self, delivery: Claimed, attempt: Attempt, now: datetime) -> Outcome:
        if attempt.ok:
            telemetry.webhook_attempt("succeeded", attempt.seconds)
            return Outcome(delivery.id, "succeeded", now, attempt.status_code, None)
        if delivery.attempts >= delivery.max_attempts:
            telemetry.webhook_attempt("refused" if attempt.refused else "failed", attempt.seconds)
            return Outcome(delivery.id, "failed", now, attempt.status_code, attempt.error)
        telemetry.webhook_attempt("refused" if attempt.refused else "retrying", attempt.seconds)
        delays = self.config.retry_delays or (timedelta(0),)
        delay = delays[min(delivery.attempts, len(delays)) - 1]
        return Outcome(delivery.id, "pending", now + delay, attempt.status_code, attempt.error)
