"""SCIM 2.0 provisioning (docs/scim.md): per-project bearer tokens stored as their SHA-256, the identity provider's
`externalId` of users and groups (filterable: an index per project), a group's last change.

Columns as `litestar_userio/db/tables.py` declares them (frozen here, as a migration must be).
"""

from typing import Any

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import ForeignKey, Text, Timestamptz, Varchar
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString
from piccolo.table import Table

ID = "2026-12-01T05:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "SCIM tokens; externalId of users and groups"


class Project(Table, tablename="userio_project"):
    id = Varchar(length=64, primary_key=True)


NEW_COLUMNS: list[tuple[str, str, str, tuple[type, dict[str, Any]]]] = [
    ("User", "userio_user", "external_id", (Text, {"default": None, "null": True})),
    ("Group", "userio_group", "external_id", (Text, {"default": None, "null": True})),
    ("Group", "userio_group", "updated_at", (Timestamptz, {"default": None, "null": True})),
]

SCIM_TOKEN: dict[str, tuple[type, dict[str, Any]]] = {
    "id": (Varchar, {"length": 40, "primary_key": True}),
    "project": (ForeignKey, {"references": Project, "null": False, "index": True, "db_column_name": "project_id"}),
    "token_hash": (Text, {"unique": True}),
    "created_at": (Timestamptz, {}),
    "last_used_at": (Timestamptz, {"default": None, "null": True}),
}

INDEXES = (
    "CREATE INDEX userio_user_external_id ON userio_user (project_id, external_id)",
    "CREATE INDEX userio_group_external_id ON userio_group (project_id, external_id)",
)


class WithIndexes(MigrationManager):
    """Piccolo runs a migration's raw SQL before it adds its columns; the indexes need them."""

    async def run(self, backwards: bool = False) -> None:
        await super().run(backwards=backwards)
        if not backwards and not self.preview:
            for statement in INDEXES:
                await engine_finder().run_querystring(QueryString(statement))


async def forwards():
    manager = WithIndexes(migration_id=ID, app_name="userio", description=DESCRIPTION)
    for class_name, tablename, name, (column_class, params) in NEW_COLUMNS:
        manager.add_column(
            table_class_name=class_name,
            tablename=tablename,
            column_name=name,
            db_column_name=name,
            column_class_name=column_class.__name__,
            column_class=column_class,
            params=params,
        )
    manager.add_table(class_name="ScimToken", tablename="userio_scim_token")
    for name, (column_class, params) in SCIM_TOKEN.items():
        manager.add_column(
            table_class_name="ScimToken",
            tablename="userio_scim_token",
            column_name=name,
            db_column_name=params.get("db_column_name") or name,
            column_class_name=column_class.__name__,
            column_class=column_class,
            params=params,
        )
    return manager
