"""An idempotency key names at most one import task per project."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-11-22T01:25:56:000000"
VERSION = "1.38.0"
DESCRIPTION = "unique import idempotency keys"


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)

    async def create_index():
        await engine_finder().run_querystring(
            QueryString(
                "CREATE UNIQUE INDEX userio_import_task_idempotency ON userio_import_task (project_id, idempotency_key)"
            )
        )

    manager.add_raw(create_index)
    return manager
