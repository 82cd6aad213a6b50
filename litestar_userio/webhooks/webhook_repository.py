"""Every query of a project's webhooks and their deliveries.

The delivery job's three statements (claim the due deliveries, record the outcomes, insert a batch of new ones)
are hand-written SQL: they run per batch on the delivery path that `bench/webhooks.py` measures; the rest is
Piccolo's query builder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from litestar_userio.db.engine import Row, Tx
from litestar_userio.db.tables import Webhook, WebhookDelivery

__all__ = ["Claimed", "DeliveryRow", "NewDelivery", "Outcome", "WebhookRepository", "WebhookRow"]


_LISTED = (
    WebhookDelivery.id,
    WebhookDelivery.webhook,
    WebhookDelivery.change_id,
    WebhookDelivery.event_type,
    WebhookDelivery.user_id,
    WebhookDelivery.status,
    WebhookDelivery.attempts,
    WebhookDelivery.last_status_code,
    WebhookDelivery.last_error,
    WebhookDelivery.next_attempt_at,
    WebhookDelivery.created_at,
    WebhookDelivery.updated_at,
)
"""The columns a delivery is listed with (the list, and a retry's answer)."""


@dataclass(frozen=True)
class WebhookRow:
    """A saved webhook (its secret as stored: possibly sealed)."""

    id: str
    url: str
    events: list[str]
    include_import: bool
    secret: str


@dataclass(frozen=True)
class NewDelivery:
    """A delivery to make, for one entry and one webhook."""

    id: str
    webhook_id: str
    change_id: str
    seq: int
    user_id: str
    event_type: str
    body: str
    max_attempts: int


@dataclass(frozen=True)
class Claimed:
    """A delivery taken for one attempt (its `attempts` already counts this one)."""

    id: str
    webhook_id: str
    change_id: str
    body: str
    attempts: int
    max_attempts: int


@dataclass(frozen=True)
class Outcome:
    """What an attempt came to: `pending` again (with its next time), `succeeded` or `failed`."""

    id: str
    status: str
    next_attempt_at: datetime
    status_code: int | None
    error: str | None


@dataclass(frozen=True)
class DeliveryRow:
    """A delivery as listed."""

    id: str
    webhook_id: str
    change_id: str
    event_type: str
    user_id: str
    status: str
    attempts: int
    last_status_code: int | None
    last_error: str | None
    next_attempt_at: datetime
    created_at: datetime
    updated_at: datetime


def _time(value: Any) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def _delivery(row: Row) -> DeliveryRow:
    return DeliveryRow(
        row["id"],
        row["webhook_id"],
        row["change_id"],
        row["event_type"],
        row["user_id"],
        row["status"],
        int(row["attempts"]),
        row["last_status_code"],
        row["last_error"],
        _time(row["next_attempt_at"]),
        _time(row["created_at"]),
        _time(row["updated_at"]),
    )


_DELIVERY_COLUMNS = (
    "id",
    "project_id",
    "webhook_id",
    "change_id",
    "seq",
    "user_id",
    "event_type",
    "body",
    "status",
    "attempts",
    "max_attempts",
    "next_attempt_at",
    "created_at",
    "updated_at",
)


class WebhookRepository:
    """Queries of the webhook tables; each method runs in the caller's transaction."""

    async def webhooks(self, tx: Tx, project_id: str) -> list[WebhookRow]:
        """The project's webhooks in their saved order."""
        rows = await tx.run(
            Webhook.select(Webhook.id, Webhook.url, Webhook.events, Webhook.include_import, Webhook.secret)
            .where(Webhook.project == project_id)
            .order_by(Webhook.position)
        )
        return [
            WebhookRow(r["id"], r["url"], json.loads(r["events"]), bool(r["include_import"]), r["secret"]) for r in rows
        ]

    async def replace_webhooks(
        self, tx: Tx, project_id: str, webhooks: Sequence[WebhookRow], kept: set[str], now: datetime
    ) -> None:
        """Save `webhooks` in this order; a saved webhook not among them goes, with its deliveries.

        Those in `kept` are updated in place (their secret and deliveries stay), the others inserted.
        """
        wanted = [w.id for w in webhooks]
        gone = Webhook.delete().where(Webhook.project == project_id)
        await tx.run(gone.where(Webhook.id.not_in(wanted)) if wanted else gone)
        for position, webhook in enumerate(webhooks):
            values: dict[Any, Any] = {
                Webhook.position: position,
                Webhook.url: webhook.url,
                Webhook.events: json.dumps(webhook.events),
                Webhook.include_import: webhook.include_import,
            }
            if webhook.id in kept:
                await tx.run(Webhook.update(values).where((Webhook.project == project_id) & (Webhook.id == webhook.id)))
            else:
                await tx.insert(
                    Webhook,
                    {
                        "id": webhook.id,
                        "project": project_id,
                        "position": position,
                        "url": webhook.url,
                        "events": json.dumps(webhook.events),
                        "include_import": webhook.include_import,
                        "secret": webhook.secret,
                        "created_at": now,
                    },
                )

    async def set_secret(self, tx: Tx, project_id: str, webhook_id: str, secret: str) -> bool:
        """Replace the webhook's secret; False when the project has no such webhook."""
        rows = await tx.run(
            Webhook.update({Webhook.secret: secret})
            .where((Webhook.project == project_id) & (Webhook.id == webhook_id))
            .returning(Webhook.id)
        )
        return bool(rows)

    async def add_deliveries(self, tx: Tx, project_id: str, deliveries: Sequence[NewDelivery], now: datetime) -> None:
        """Insert new pending deliveries, due now (COPY on PostgreSQL)."""
        rows = [
            (
                d.id,
                project_id,
                d.webhook_id,
                d.change_id,
                d.seq,
                d.user_id,
                d.event_type,
                d.body,
                "pending",
                0,
                d.max_attempts,
                now,
                now,
                now,
            )
            for d in deliveries
        ]
        await tx.insert_many("userio_webhook_delivery", _DELIVERY_COLUMNS, rows)

    async def claim(self, tx: Tx, project_id: str, now: datetime, limit: int, lease_until: datetime) -> list[Claimed]:
        """Take up to `limit` due deliveries of the project for an attempt, leased until `lease_until`.

        Only a user's oldest pending delivery to a webhook is due (one user's entries reach one webhook in log
        order); one whose lease has not lapsed is being attempted. PostgreSQL skips rows another claim holds.
        """
        skip = " FOR UPDATE SKIP LOCKED" if tx.dialect == "postgres" else ""
        rows = await tx.fetch(
            "WITH heads AS (SELECT d.id FROM userio_webhook_delivery d"
            " WHERE d.project_id = $1 AND d.status = 'pending' AND d.next_attempt_at <= $2"
            " AND (d.lease_until IS NULL OR d.lease_until < $2)"
            " AND NOT EXISTS (SELECT 1 FROM userio_webhook_delivery e WHERE e.webhook_id = d.webhook_id"
            " AND e.user_id = d.user_id AND e.status = 'pending' AND e.seq < d.seq)"
            f" ORDER BY d.seq LIMIT $3{skip})"
            " UPDATE userio_webhook_delivery SET lease_until = $4, attempts = attempts + 1"
            " WHERE id IN (SELECT id FROM heads)"
            " RETURNING id, webhook_id, change_id, body, attempts, max_attempts, seq",
            project_id,
            now,
            limit,
            lease_until,
        )
        rows = sorted(rows, key=lambda r: r["seq"])
        return [
            Claimed(r["id"], r["webhook_id"], r["change_id"], r["body"], int(r["attempts"]), int(r["max_attempts"]))
            for r in rows
        ]

    async def record(self, tx: Tx, outcomes: Sequence[Outcome], now: datetime) -> None:
        """Write the attempts' outcomes, each delivery's lease released."""
        await tx.executemany(
            "UPDATE userio_webhook_delivery SET status = $2, next_attempt_at = $3, lease_until = NULL,"
            " last_status_code = $4, last_error = $5, updated_at = $6 WHERE id = $1",
            [(o.id, o.status, o.next_attempt_at, o.status_code, o.error, now) for o in outcomes],
        )

    async def due_projects(self, tx: Tx, now: datetime) -> list[str]:
        """Projects with a pending delivery that is due and not being attempted (the sweep wakes their job)."""
        rows = await tx.run(
            WebhookDelivery.select(WebhookDelivery.project)
            .where(
                (WebhookDelivery.status == "pending")
                & (WebhookDelivery.next_attempt_at <= now)
                & (WebhookDelivery.lease_until.is_null() | (WebhookDelivery.lease_until < now))
            )
            .distinct()
        )
        return [r["project_id"] for r in rows]

    async def deliveries(
        self,
        tx: Tx,
        project_id: str,
        *,
        webhook_id: str | None,
        status: str | None,
        before: str | None,
        limit: int,
    ) -> list[DeliveryRow]:
        """The project's deliveries, newest first (ids are time-ordered), after the cursor `before`."""
        where: Any = WebhookDelivery.project == project_id
        if webhook_id is not None:
            where &= WebhookDelivery.webhook == webhook_id
        if status is not None:
            where &= WebhookDelivery.status == status
        if before:
            where &= WebhookDelivery.id < before
        rows = await tx.run(
            WebhookDelivery.select(*_LISTED).where(where).order_by(WebhookDelivery.id, ascending=False).limit(limit)
        )
        return [_delivery(r) for r in rows]

    async def retry(self, tx: Tx, project_id: str, delivery_id: str, now: datetime) -> DeliveryRow | None:
        """Make a failed delivery pending again, due now, with one more attempt; None when there is none such.

        A delivery that is not failed is left as it is (and returned).
        """
        where = (WebhookDelivery.project == project_id) & (WebhookDelivery.id == delivery_id)
        await tx.run(
            WebhookDelivery.update(
                {
                    WebhookDelivery.status: "pending",
                    WebhookDelivery.next_attempt_at: now,
                    WebhookDelivery.max_attempts: WebhookDelivery.attempts + 1,
                    WebhookDelivery.updated_at: now,
                }
            ).where(where & (WebhookDelivery.status == "failed"))
        )
        rows = await tx.run(WebhookDelivery.select(*_LISTED).where(where))
        return _delivery(rows[0]) if rows else None

    async def purge(self, tx: Tx, finished_before: datetime) -> None:
        """Delete the deliveries that finished (succeeded or failed) before `finished_before`."""
        await tx.run(
            WebhookDelivery.delete().where(
                WebhookDelivery.status.is_in(["succeeded", "failed"]) & (WebhookDelivery.updated_at < finished_before)
            )
        )
