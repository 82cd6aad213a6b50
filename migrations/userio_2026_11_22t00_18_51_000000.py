"""What Piccolo's column options cannot declare: uniqueness across columns, and TOAST compression."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-11-22T00:18:51:000000"
VERSION = "1.38.0"
DESCRIPTION = "composite unique indexes, lz4 for large JSON columns"

STATEMENTS = [
    # A login id is unique per project and key on its normalized value (DECISIONS 3).
    "CREATE UNIQUE INDEX userio_identity_login_id ON userio_identity (project_id, login_id_key, normalized_value)",
    "CREATE UNIQUE INDEX userio_admin_api_key_kid ON userio_admin_api_key (project_id, kid)",
    "CREATE UNIQUE INDEX userio_role_key ON userio_role (project_id, key)",
    "CREATE UNIQUE INDEX userio_group_key ON userio_group (project_id, key)",
    "CREATE UNIQUE INDEX userio_user_role_pair ON userio_user_role (user_id, role_id)",
    "CREATE UNIQUE INDEX userio_user_group_pair ON userio_user_group (user_id, group_id)",
    "CREATE UNIQUE INDEX userio_custom_attribute_name ON userio_custom_attribute (project_id, name)",
    "CREATE UNIQUE INDEX userio_import_chunk_seq ON userio_import_chunk (task_id, seq)",
    # Keyset pagination over a project's users (export).
    "CREATE INDEX userio_user_keyset ON userio_user (project_id, id)",
]

POSTGRES_STATEMENTS = [
    # A chunk's records and details are ~100 KB of JSON each: pglz compression of them cost more CPU than
    # everything else the import asks of PostgreSQL; lz4 is several times cheaper.
    "ALTER TABLE userio_import_chunk ALTER COLUMN records SET COMPRESSION lz4",
    "ALTER TABLE userio_import_chunk ALTER COLUMN result SET COMPRESSION lz4",
]


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)

    async def run():
        engine = engine_finder()
        statements = STATEMENTS + (POSTGRES_STATEMENTS if engine.engine_type == "postgres" else [])
        for statement in statements:
            await engine.run_querystring(QueryString(statement))

    manager.add_raw(run)
    return manager
