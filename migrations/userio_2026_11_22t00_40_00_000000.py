"""PostgreSQL: drop the project foreign keys of identities and authenticators.

Each of these rows belongs to a user, and the user row carries the project's foreign key (and its cascade),
so the direct check was redundant; it cost about 8 us per inserted row, a sixth of PostgreSQL's work in a
bulk import. SQLite keeps them: it cannot drop a constraint without rebuilding the table, and its checks are
in-process and cheap.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-11-22T00:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "drop redundant project foreign keys on PostgreSQL"

POSTGRES_STATEMENTS = [
    "ALTER TABLE userio_identity DROP CONSTRAINT IF EXISTS userio_identity_project_id_fkey",
    "ALTER TABLE userio_authenticator DROP CONSTRAINT IF EXISTS userio_authenticator_project_id_fkey",
]


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)

    async def run():
        engine = engine_finder()
        if engine.engine_type == "postgres":
            for statement in POSTGRES_STATEMENTS:
                await engine.run_querystring(QueryString(statement))

    manager.add_raw(run)
    return manager
