"""The plugin's schema, the same on PostgreSQL and SQLite.

Columns come from `litestar_userio/db/tables.py` as it stood when this migration was written (frozen here, as a
migration must be); what Piccolo's column options cannot declare follows as SQL: uniqueness across columns,
indexes for keyset pages and windows, and the one engine-specific storage option, `POSTGRES_STORAGE`.
"""

from typing import Any

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import (
    JSONB,
    BigInt,
    Boolean,
    ForeignKey,
    Integer,
    Serial,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString
from piccolo.table import Table

ID = "2026-11-23T00:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "initial schema"


# Referenced tables, as foreign keys need a class to point at.
class Project(Table, tablename="userio_project"):
    id = Varchar(length=64, primary_key=True)


class User(Table, tablename="userio_user"):
    id = Varchar(length=36, primary_key=True)


class Role(Table, tablename="userio_role"):
    id = Varchar(length=36, primary_key=True)


class Group(Table, tablename="userio_group"):
    id = Varchar(length=36, primary_key=True)


class ImportTask(Table, tablename="userio_import_task"):
    id = Varchar(length=40, primary_key=True)


# (class name, table name, {column: (column class, options that differ from the class's defaults)})
TABLES: list[tuple[str, str, dict[str, tuple[type, dict[str, Any]]]]] = [
    (
        "Project",
        "userio_project",
        {
            "id": (Varchar, {"length": 64, "primary_key": True}),
            "created_at": (Timestamptz, {}),
            "settings": (JSONB, {}),
        },
    ),
    (
        "ProjectDomain",
        "userio_project_domain",
        {
            "domain": (Varchar, {"primary_key": True}),
            "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
        },
    ),
    (
        "AdminAPIKey",
        "userio_admin_api_key",
        {
            "id": (Serial, {"primary_key": True}),
            "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
            "kid": (Varchar, {"length": 64}),
            "public_key_pem": (Text, {}),
            "created_at": (Timestamptz, {}),
        },
    ),
    (
        "User",
        "userio_user",
        {
            "id": (Varchar, {"length": 36, "primary_key": True}),
            "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
            "created_at": (Timestamptz, {}),
            "updated_at": (Timestamptz, {}),
            "last_login_at": (Timestamptz, {"default": None, "null": True}),
            "is_disabled": (Boolean, {}),
            "standard_attributes": (JSONB, {}),
            "custom_attributes": (JSONB, {}),
        },
    ),
    (
        "Identity",
        "userio_identity",
        {
            "id": (Varchar, {"length": 36, "primary_key": True}),
            "project_id": (Varchar, {"length": 64}),
            "user": (ForeignKey, {"references": User, "null": False, "index": True, "db_column_name": "user_id"}),
            "login_id_key": (Varchar, {"length": 32}),
            "login_id_type": (Varchar, {"length": 32}),
            "original_value": (Text, {}),
            "normalized_value": (Text, {}),
            "created_at": (Timestamptz, {}),
        },
    ),
    (
        "Authenticator",
        "userio_authenticator",
        {
            "id": (Varchar, {"length": 36, "primary_key": True}),
            "project_id": (Varchar, {"length": 64}),
            "user": (ForeignKey, {"references": User, "null": False, "index": True, "db_column_name": "user_id"}),
            "kind": (Varchar, {"length": 16}),
            "type": (Varchar, {"length": 32}),
            "password_hash": (Text, {"default": None, "null": True}),
            "totp_secret": (Text, {"default": None, "null": True}),
            "oob_target": (Text, {"default": None, "null": True}),
            "created_at": (Timestamptz, {}),
        },
    ),
    (
        "Role",
        "userio_role",
        {
            "id": (Varchar, {"length": 36, "primary_key": True}),
            "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
            "key": (Varchar, {"length": 64}),
            "name": (Text, {"default": None, "null": True}),
            "created_at": (Timestamptz, {}),
        },
    ),
    (
        "Group",
        "userio_group",
        {
            "id": (Varchar, {"length": 36, "primary_key": True}),
            "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
            "key": (Varchar, {"length": 64}),
            "name": (Text, {"default": None, "null": True}),
            "created_at": (Timestamptz, {}),
        },
    ),
    (
        "UserRole",
        "userio_user_role",
        {
            "id": (Serial, {"primary_key": True}),
            "user": (ForeignKey, {"references": User, "null": False, "db_column_name": "user_id"}),
            "role": (ForeignKey, {"references": Role, "null": False, "index": True, "db_column_name": "role_id"}),
        },
    ),
    (
        "UserGroup",
        "userio_user_group",
        {
            "id": (Serial, {"primary_key": True}),
            "user": (ForeignKey, {"references": User, "null": False, "db_column_name": "user_id"}),
            "group": (ForeignKey, {"references": Group, "null": False, "index": True, "db_column_name": "group_id"}),
        },
    ),
    (
        "CustomAttribute",
        "userio_custom_attribute",
        {
            "id": (Serial, {"primary_key": True}),
            "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
            "name": (Varchar, {"length": 64}),
            "type": (Varchar, {"length": 32}),
            "constraints": (JSONB, {}),
            "position": (Integer, {}),
        },
    ),
    (
        "ImportTask",
        "userio_import_task",
        {
            "id": (Varchar, {"length": 40, "primary_key": True}),
            "project": (
                ForeignKey,
                {"references": Project, "null": False, "index": True, "db_column_name": "project_id"},
            ),
            "created_at": (Timestamptz, {}),
            "status": (Varchar, {"length": 16, "default": "pending"}),
            "identifier": (Varchar, {"length": 32}),
            "upsert": (Boolean, {}),
            "dry_run": (Boolean, {}),
            "total": (Integer, {}),
            "chunk_count": (Integer, {}),
            "processed": (Integer, {}),
            "inserted": (Integer, {}),
            "updated": (Integer, {}),
            "skipped": (Integer, {}),
            "failed": (Integer, {}),
            "completed_at": (Timestamptz, {"default": None, "null": True}),
            "expire_at": (Timestamptz, {"default": None, "null": True, "index": True}),
            "idempotency_key": (Varchar, {"default": None, "null": True}),
            "request_sha256": (Varchar, {"length": 64, "default": None, "null": True}),
        },
    ),
    (
        "ImportChunk",
        "userio_import_chunk",
        {
            "id": (Serial, {"primary_key": True}),
            "task": (ForeignKey, {"references": ImportTask, "null": False, "db_column_name": "task_id"}),
            "seq": (Integer, {}),
            "status": (Varchar, {"length": 16, "default": "pending", "index": True}),
            "indices": (Text, {}),
            "records": (Text, {"default": None, "null": True}),
            "result": (Text, {"default": None, "null": True}),
            "attempts": (Integer, {}),
            "enqueued_at": (Timestamptz, {"default": None, "null": True}),
        },
    ),
    (
        "ExportTask",
        "userio_export_task",
        {
            "id": (Varchar, {"length": 48, "primary_key": True}),
            "project": (
                ForeignKey,
                {"references": Project, "null": False, "index": True, "db_column_name": "project_id"},
            ),
            "created_at": (Timestamptz, {}),
            "status": (Varchar, {"length": 16, "default": "pending"}),
            "request": (Text, {}),
            "processed": (Integer, {}),
            "attempts": (Integer, {}),
            "enqueued_at": (Timestamptz, {"default": None, "null": True}),
            "completed_at": (Timestamptz, {"default": None, "null": True}),
            "failed_at": (Timestamptz, {"default": None, "null": True}),
            "error": (Text, {"default": None, "null": True}),
            "file_key": (Text, {"default": None, "null": True}),
            "size": (BigInt, {"default": None, "null": True}),
            "sha256": (Varchar, {"length": 64, "default": None, "null": True}),
            "record_count": (Integer, {"default": None, "null": True}),
            "expire_at": (Timestamptz, {"default": None, "null": True, "index": True}),
        },
    ),
    (
        "RateLimitEvent",
        "userio_rate_limit_event",
        {
            "id": (Serial, {"primary_key": True}),
            "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
            "bucket": (Varchar, {"length": 64}),
            "created_at": (Timestamptz, {}),
        },
    ),
    (
        "SigningKey",
        "userio_signing_key",
        {
            "id": (Serial, {"primary_key": True}),
            "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
            "kid": (Varchar, {"length": 64}),
            "private_key_pem": (Text, {}),
            "public_jwk": (Text, {}),
            "active": (Boolean, {}),
            "created_at": (Timestamptz, {}),
            "retired_at": (Timestamptz, {"default": None, "null": True}),
        },
    ),
    (
        "Application",
        "userio_application",
        {
            "id": (Serial, {"primary_key": True}),
            "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
            "client_id": (Varchar, {"length": 128}),
            "name": (Text, {"default": None, "null": True}),
            "issue_jwt_access_token": (Boolean, {}),
            "access_token_lifetime": (Integer, {"default": 1800}),
            "created_at": (Timestamptz, {}),
        },
    ),
    (
        "Hook",
        "userio_hook",
        {
            "id": (Serial, {"primary_key": True}),
            "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
            "position": (Integer, {}),
            "event": (Varchar, {"length": 64}),
            "source": (Text, {}),
            "javascript": (Text, {}),
            "source_id": (Varchar, {"length": 64}),
            "created_at": (Timestamptz, {}),
        },
    ),
]

INDEXES = [
    # A login id is unique per project and key on its normalized value (DECISIONS 3).
    "CREATE UNIQUE INDEX userio_identity_login_id ON userio_identity (project_id, login_id_key, normalized_value)",
    "CREATE UNIQUE INDEX userio_admin_api_key_kid ON userio_admin_api_key (project_id, kid)",
    "CREATE UNIQUE INDEX userio_role_key ON userio_role (project_id, key)",
    "CREATE UNIQUE INDEX userio_group_key ON userio_group (project_id, key)",
    "CREATE UNIQUE INDEX userio_user_role_pair ON userio_user_role (user_id, role_id)",
    "CREATE UNIQUE INDEX userio_user_group_pair ON userio_user_group (user_id, group_id)",
    "CREATE UNIQUE INDEX userio_custom_attribute_name ON userio_custom_attribute (project_id, name)",
    "CREATE UNIQUE INDEX userio_import_chunk_seq ON userio_import_chunk (task_id, seq)",
    # An idempotency key names at most one import task per project.
    "CREATE UNIQUE INDEX userio_import_task_idempotency ON userio_import_task (project_id, idempotency_key)",
    # Keyset pagination over a project's users (export).
    "CREATE INDEX userio_user_keyset ON userio_user (project_id, id)",
    # Counting a project's uses of a bucket in a window.
    "CREATE INDEX userio_rate_limit_event_window ON userio_rate_limit_event (project_id, bucket, created_at)",
    # Finding a project's pending exports (one at a time, SPEC 8).
    "CREATE INDEX userio_export_task_pending ON userio_export_task (project_id, status)",
    "CREATE UNIQUE INDEX userio_signing_key_kid ON userio_signing_key (project_id, kid)",
    "CREATE UNIQUE INDEX userio_application_client ON userio_application (project_id, client_id)",
    "CREATE INDEX userio_hook_project ON userio_hook (project_id, event, position)",
]

POSTGRES_STORAGE = [
    # A chunk's records and details are ~100 KB of JSON each: pglz compression of them cost more CPU than
    # everything else the import asks of PostgreSQL; lz4 is several times cheaper. Storage only: the schema
    # a query sees is the same on both engines.
    "ALTER TABLE userio_import_chunk ALTER COLUMN records SET COMPRESSION lz4",
    "ALTER TABLE userio_import_chunk ALTER COLUMN result SET COMPRESSION lz4",
]


async def indexes_and_storage():
    engine = engine_finder()
    statements = INDEXES + (POSTGRES_STORAGE if engine.engine_type == "postgres" else [])
    for statement in statements:
        await engine.run_querystring(QueryString(statement))


class InitialSchema(MigrationManager):
    """Piccolo runs a migration's raw SQL before it creates its tables; these indexes need the tables."""

    async def run(self, backwards: bool = False) -> None:
        await super().run(backwards=backwards)
        if not backwards and not self.preview:
            await indexes_and_storage()


async def forwards():
    manager = InitialSchema(migration_id=ID, app_name="userio", description=DESCRIPTION)
    for class_name, tablename, columns in TABLES:
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
