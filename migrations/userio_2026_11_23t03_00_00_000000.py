"""Token hooks that reach the world (issue 14): `on_error` per hook, the fetch allowlist and version counter, saved
versions, encrypted secrets, and the run log. The same on PostgreSQL and SQLite; columns as `tables.py` declares them
when this was written, uniqueness and read paths as SQL after the tables exist."""

from typing import Any

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import DoublePrecision, ForeignKey, Integer, Serial, Text, Timestamptz, Varchar
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString
from piccolo.table import Table

ID = "2026-11-23T03:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "hook settings, versions, secrets, run log, on_error"


class Project(Table, tablename="userio_project"):
    id = Varchar(length=64, primary_key=True)


def _project(**options: Any) -> tuple[type, dict[str, Any]]:
    return ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id", **options}


# (class name, table name, {column: (column class, options that differ from the class's defaults)})
TABLES: list[tuple[str, str, dict[str, tuple[type, dict[str, Any]]]]] = [
    (
        "HookSettings",
        "userio_hook_settings",
        {
            "id": (Serial, {"primary_key": True}),
            "project": _project(unique=True),
            "fetch_allowlist": (Text, {"default": "[]"}),
            "version": (Integer, {"default": 0}),
            "updated_at": (Timestamptz, {}),
        },
    ),
    (
        "HookVersion",
        "userio_hook_version",
        {
            "id": (Serial, {"primary_key": True}),
            "project": _project(),
            "version": (Integer, {}),
            "created_at": (Timestamptz, {}),
            "actor_kid": (Varchar, {"length": 255, "null": True}),
            "actor_sub": (Varchar, {"length": 255, "null": True}),
            "body": (Text, {}),
        },
    ),
    (
        "HookSecret",
        "userio_hook_secret",
        {
            "id": (Serial, {"primary_key": True}),
            "project": _project(),
            "name": (Varchar, {"length": 128}),
            "ciphertext": (Text, {}),
            "updated_at": (Timestamptz, {}),
        },
    ),
    (
        "HookRunRecord",
        "userio_hook_run",
        {
            "id": (Serial, {"primary_key": True}),
            "project": _project(),
            "event": (Varchar, {"length": 64}),
            "hook_index": (Integer, {}),
            "started_at": (Timestamptz, {}),
            "duration_ms": (DoublePrecision, {}),
            "outcome": (Varchar, {"length": 16}),
            "error_kind": (Varchar, {"length": 32, "null": True}),
            "console": (Text, {"default": "[]"}),
            "claims_added": (Text, {"default": "[]"}),
            "sampled_rate": (DoublePrecision, {"default": 1.0}),
        },
    ),
]

INDEXES = [
    "CREATE UNIQUE INDEX userio_hook_version_project_version ON userio_hook_version (project_id, version)",
    "CREATE UNIQUE INDEX userio_hook_secret_project_name ON userio_hook_secret (project_id, name)",
    # The run log is read newest first per project, and purged by age.
    "CREATE INDEX userio_hook_run_project_id ON userio_hook_run (project_id, id)",
    "CREATE INDEX userio_hook_run_started_at ON userio_hook_run (started_at)",
]


class HookTables(MigrationManager):
    """Piccolo runs a migration's raw SQL before it creates its tables; these indexes need the tables."""

    async def run(self, backwards: bool = False) -> None:
        await super().run(backwards=backwards)
        if not backwards and not self.preview:
            for statement in INDEXES:
                await engine_finder().run_querystring(QueryString(statement))


async def forwards():
    manager = HookTables(migration_id=ID, app_name="userio", description=DESCRIPTION)
    manager.add_column(
        table_class_name="Hook",
        tablename="userio_hook",
        column_name="on_error",
        db_column_name="on_error",
        column_class_name="Varchar",
        column_class=Varchar,
        params={"length": 16, "default": "deny"},
    )
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
