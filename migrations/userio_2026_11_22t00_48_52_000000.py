"""Indexes of the token tables that Piccolo's column options cannot declare."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-11-22T00:48:52:000000"
VERSION = "1.38.0"
DESCRIPTION = "token and hook indexes"

STATEMENTS = [
    "CREATE UNIQUE INDEX userio_signing_key_kid ON userio_signing_key (project_id, kid)",
    "CREATE UNIQUE INDEX userio_application_client ON userio_application (project_id, client_id)",
    "CREATE INDEX userio_hook_project ON userio_hook (project_id, event, position)",
]


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)

    async def create_indexes():
        engine = engine_finder()
        for statement in STATEMENTS:
            await engine.run_querystring(QueryString(statement))

    manager.add_raw(create_indexes)
    return manager
