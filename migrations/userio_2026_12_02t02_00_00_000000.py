"""Indexes for SCIM's `sw`, `co` and `ew` on login ids (issue 44: `userName sw` scanned the project's users).

`userio_identity_folded`, a B-tree on `(project_id, lower(normalized_value), login_id_key)` with the user's id,
serves `sw` as a range (`users/user_repository.py`, `_Where.folded`): in code-point order, `COLLATE "C"` on
PostgreSQL (whatever the database's collation), SQLite's BINARY. The kind comes after the value: before it, the
index matched two equalities of an `eq` probe and, without statistics (a table just imported, not yet analyzed),
PostgreSQL walked the project's identities through it instead of probing the unique index (324 ms, not 3). On
PostgreSQL a GIN index of pg_trgm's trigrams of `lower(normalized_value)`, `userio_identity_trigrams`, serves `co`
and `ew` (a LIKE with its wildcards escaped).

pg_trgm is a trusted extension (PostgreSQL 13+): `CREATE EXTENSION` needs only CREATE on the database. Our
connections see our schema only (`search_path`), so the extension goes there when the database has none, and the
operator class is named with the schema the extension is in (a host may have it in `public`). Where the extension
is missing or cannot be created, the migration logs it and goes on: `co` and `ew` then scan the project's
identities, with the same answers. SQLite gets the B-tree only (`co`/`ew` read the identities through it).

Where another deployment of the plugin in the same database created pg_trgm in its own schema, this one's index
uses it there (a role without USAGE on that schema: a warning, no trigram index); dropping that schema with CASCADE
drops the extension and with it this index (`co`/`ew` then scan; the answers do not change).

Backwards: both indexes go; the extension stays (other schemas of the database may use it).
"""

import logging

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-12-02T02:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "indexes for sw, co and ew on login ids (SCIM filters)"

logger = logging.getLogger("litestar_userio.migrations")

FOLDED = {
    "postgres": "CREATE INDEX IF NOT EXISTS userio_identity_folded ON userio_identity"
    ' (project_id, (lower(normalized_value)) COLLATE "C", login_id_key) INCLUDE (user_id)',
    "sqlite": "CREATE INDEX IF NOT EXISTS userio_identity_folded ON userio_identity"
    " (project_id, lower(normalized_value), login_id_key, user_id)",
}
TRIGRAMS = (
    "CREATE INDEX IF NOT EXISTS userio_identity_trigrams ON userio_identity"
    ' USING gin (lower(normalized_value) "{schema}".gin_trgm_ops)'
)
TRIGRAM_SCHEMA = (
    "SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
    " WHERE e.extname = 'pg_trgm'"
)


async def _trigram_schema() -> str | None:
    """The schema pg_trgm is in, created in ours if the database has it not; None if it cannot be."""
    engine = engine_finder()
    found = await engine.run_querystring(QueryString(TRIGRAM_SCHEMA))
    if not found:
        try:
            await engine.run_querystring(QueryString("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
        except Exception as error:  # not installed on the server, or no CREATE on the database
            logger.warning("pg_trgm unavailable (%s): SCIM co and ew filters on login ids scan the identities", error)
            return None
        found = await engine.run_querystring(QueryString(TRIGRAM_SCHEMA))
    return str(found[0]["schema"]) if found else None


class LoginIdIndexes(MigrationManager):
    """Indexes only; Piccolo's manager records the migration."""

    async def run(self, backwards: bool = False) -> None:
        await super().run(backwards=backwards)
        if self.preview:
            return
        engine = engine_finder()
        if backwards:
            for index in ("userio_identity_trigrams", "userio_identity_folded"):
                await engine.run_querystring(QueryString(f"DROP INDEX IF EXISTS {index}"))
            return
        postgres = engine.engine_type == "postgres"
        await engine.run_querystring(QueryString(FOLDED["postgres" if postgres else "sqlite"]))
        if postgres and (schema := await _trigram_schema()) is not None:
            try:
                await engine.run_querystring(QueryString(TRIGRAMS.format(schema=schema.replace('"', '""'))))
            except Exception as error:  # the extension is in a schema our role may not use
                logger.warning("no trigram index (%s): SCIM co and ew filters on login ids scan the identities", error)
            else:
                logger.info("login ids: trigram index with pg_trgm of schema %s", schema)


async def forwards():
    return LoginIdIndexes(migration_id=ID, app_name="userio", description=DESCRIPTION)
