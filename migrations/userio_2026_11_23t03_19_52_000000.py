"""Hook versions and secrets are unique per project; the run log is read newest first per project and purged by age."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-11-23T03:19:52:000000"
VERSION = "1.38.0"
DESCRIPTION = "hook versions, secrets and run log indexes"

STATEMENTS = [
    "CREATE UNIQUE INDEX userio_hook_version_project_version ON userio_hook_version (project_id, version)",
    "CREATE UNIQUE INDEX userio_hook_secret_project_name ON userio_hook_secret (project_id, name)",
    "CREATE INDEX userio_hook_run_project_id ON userio_hook_run (project_id, id)",
    "CREATE INDEX userio_hook_run_started_at ON userio_hook_run (started_at)",
]


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)

    async def create_indexes():
        for statement in STATEMENTS:
            await engine_finder().run_querystring(QueryString(statement))

    manager.add_raw(create_indexes)
    return manager
