"""Webhooks and their deliveries (docs/webhooks.md): where a project's signed events go, and each attempt's state.

Columns as `litestar_userio/db/tables.py` declares them (frozen here, as a migration must be). A delivery cascades
with its webhook and its project. Two indexes serve the delivery job (docs/webhooks.md): the due pending
deliveries of a project, and a user's earlier pending delivery to the same webhook (log order).
"""

from typing import Any

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import BigInt, Boolean, ForeignKey, Integer, Text, Timestamptz, Varchar
from piccolo.columns.base import OnDelete
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString
from piccolo.table import Table

ID = "2026-12-01T04:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "webhooks and their deliveries"


class Project(Table, tablename="userio_project"):
    id = Varchar(length=64, primary_key=True)


class Webhook(Table, tablename="userio_webhook"):
    id = Varchar(length=36, primary_key=True)


def _project() -> tuple[type, dict[str, Any]]:
    return (
        ForeignKey,
        {"references": Project, "null": False, "on_delete": OnDelete.cascade, "db_column_name": "project_id"},
    )


TABLES: dict[str, tuple[str, dict[str, tuple[type, dict[str, Any]]]]] = {
    "userio_webhook": (
        "Webhook",
        {
            "id": (Varchar, {"length": 36, "primary_key": True}),
            "project": (_project()[0], {**_project()[1], "index": True}),
            "position": (Integer, {}),
            "url": (Text, {}),
            "events": (Text, {"default": "[]"}),
            "include_import": (Boolean, {"default": False}),
            "secret": (Text, {}),
            "created_at": (Timestamptz, {}),
        },
    ),
    "userio_webhook_delivery": (
        "WebhookDelivery",
        {
            "id": (Varchar, {"length": 36, "primary_key": True}),
            "project": _project(),
            "webhook": (
                ForeignKey,
                {"references": Webhook, "null": False, "on_delete": OnDelete.cascade, "db_column_name": "webhook_id"},
            ),
            "change_id": (Varchar, {"length": 64}),
            "seq": (BigInt, {}),
            "user_id": (Varchar, {"length": 128}),
            "event_type": (Varchar, {"length": 64}),
            "body": (Text, {}),
            "status": (Varchar, {"length": 16, "default": "pending"}),
            "attempts": (Integer, {"default": 0}),
            "max_attempts": (Integer, {"default": 7}),
            "next_attempt_at": (Timestamptz, {}),
            "lease_until": (Timestamptz, {"null": True, "default": None}),
            "last_status_code": (Integer, {"null": True, "default": None}),
            "last_error": (Text, {"null": True, "default": None}),
            "created_at": (Timestamptz, {}),
            "updated_at": (Timestamptz, {}),
        },
    ),
}

INDEXES = (
    "CREATE INDEX userio_webhook_delivery_due ON userio_webhook_delivery (project_id, status, next_attempt_at)",
    "CREATE INDEX userio_webhook_delivery_order ON userio_webhook_delivery (webhook_id, user_id, seq)",
    "CREATE INDEX userio_webhook_delivery_list ON userio_webhook_delivery (project_id, id)",
    "CREATE UNIQUE INDEX userio_webhook_delivery_once ON userio_webhook_delivery (webhook_id, change_id)",
    # The sweep's look for projects with due deliveries, and its purge of finished ones.
    "CREATE INDEX userio_webhook_delivery_pending ON userio_webhook_delivery (next_attempt_at) WHERE status = 'pending'",
    "CREATE INDEX userio_webhook_delivery_finished ON userio_webhook_delivery (status, updated_at)",
)


class WithIndexes(MigrationManager):
    """Piccolo runs a migration's raw SQL before it creates its tables; the indexes need the tables."""

    async def run(self, backwards: bool = False) -> None:
        await super().run(backwards=backwards)
        if not backwards and not self.preview:
            for statement in INDEXES:
                await engine_finder().run_querystring(QueryString(statement))


async def forwards():
    manager = WithIndexes(migration_id=ID, app_name="userio", description=DESCRIPTION)
    for tablename, (class_name, columns) in TABLES.items():
        manager.add_table(class_name=class_name, tablename=tablename)
        for name, (column_class, params) in columns.items():
            manager.add_column(
                table_class_name=class_name,
                tablename=tablename,
                column_name=name,
                db_column_name=params.get("db_column_name") or name,
                column_class_name=column_class.__name__,
                column_class=column_class,
                params=params,
            )
    return manager
