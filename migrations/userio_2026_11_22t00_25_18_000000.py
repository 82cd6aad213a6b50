"""Indexes of the export tables that Piccolo's column options cannot declare."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-11-22T00:25:18:000000"
VERSION = "1.38.0"
DESCRIPTION = "export and rate-limit indexes"

STATEMENTS = [
    # Counting a project's uses of a bucket in a window.
    "CREATE INDEX userio_rate_limit_event_window ON userio_rate_limit_event (project_id, bucket, created_at)",
    # Finding a project's pending exports (one at a time, SPEC 8).
    "CREATE INDEX userio_export_task_pending ON userio_export_task (project_id, status)",
]


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)

    async def create_indexes():
        engine = engine_finder()
        for statement in STATEMENTS:
            await engine.run_querystring(QueryString(statement))

    manager.add_raw(create_indexes)
    return manager
