"""Linked OAuth/OIDC identities of users (DECISIONS 14): a provider's subject belongs to one user per project.

Columns as `litestar_userio/db/tables.py` declares them (frozen here, as a migration must be). The foreign key to the
user cascades on both engines: only imports that carry identities write these rows, so a per-row check costs
nothing to the bulk path of migration 2026-11-24.
"""

from typing import Any

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import JSONB, ForeignKey, Text, Timestamptz, Varchar
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString
from piccolo.table import Table

ID = "2026-11-28T03:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "linked OAuth identities"


class User(Table, tablename="userio_user"):
    id = Varchar(length=36, primary_key=True)


COLUMNS: dict[str, tuple[type, dict[str, Any]]] = {
    "id": (Varchar, {"length": 36, "primary_key": True}),
    "project_id": (Varchar, {"length": 64}),
    "user": (ForeignKey, {"references": User, "null": False, "index": True, "db_column_name": "user_id"}),
    "provider_alias": (Varchar, {"length": 128}),
    "provider_type": (Varchar, {"length": 128}),
    "subject": (Text, {}),
    "claims": (JSONB, {}),
    "created_at": (Timestamptz, {}),
}

UNIQUE = (
    "CREATE UNIQUE INDEX userio_oauth_identity_subject ON userio_oauth_identity (project_id, provider_alias, subject)"
)


class WithIndex(MigrationManager):
    """Piccolo runs a migration's raw SQL before it creates its tables; the unique index needs the table."""

    async def run(self, backwards: bool = False) -> None:
        await super().run(backwards=backwards)
        if not backwards and not self.preview:
            await engine_finder().run_querystring(QueryString(UNIQUE))


async def forwards():
    manager = WithIndex(migration_id=ID, app_name="userio", description=DESCRIPTION)
    manager.add_table(class_name="OAuthIdentity", tablename="userio_oauth_identity")
    for name, (column_class, params) in COLUMNS.items():
        manager.add_column(
            table_class_name="OAuthIdentity",
            tablename="userio_oauth_identity",
            column_name=name,
            db_column_name=params.get("db_column_name") or name,
            column_class_name=column_class.__name__,
            column_class=column_class,
            params=params,
        )
    return manager
