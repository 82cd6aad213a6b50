"""Indexes for SCIM's `sw`, `co` and `ew` on login ids (issue 44: `userName sw` scanned the project's users).

`userio_identity_folded`, a B-tree on `(project_id, lower(normalized_value), login_id_key)` with the user's id,
serves `sw` as a range (`users/user_repository.py`, `_Where.folded`): in code-point order, `COLLATE "C"` on
PostgreSQL (whatever the database's collation), SQLite's BINARY. The kind comes after the value: before it, the
index matched two equalities of an `eq` probe and, without statistics (a table just imported, not yet analyzed),
PostgreSQL walked the project's identities through it instead of probing the unique index (324 ms, not 3).

`co` and `ew` read the identities through this B-tree. A GIN index of pg_trgm's trigrams answers them in
milliseconds (their query asks a LIKE it can serve), but it is not made here: created by this migration it took the
import from about 7 500 to about 5 300 records a second on PostgreSQL (bench/import.py, 50 000 users, WAL per record
+1 450 bytes), for filters Okta and Entra do not send. docs/scim.md ("co and ew at scale") gives the two statements
for a deployment whose IdP does.

Backwards: the B-tree goes (an operator's trigram index stays).
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-12-02T02:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "an index for sw, co and ew on login ids (SCIM filters)"

FOLDED = {
    "postgres": "CREATE INDEX IF NOT EXISTS userio_identity_folded ON userio_identity"
    ' (project_id, (lower(normalized_value)) COLLATE "C", login_id_key) INCLUDE (user_id)',
    "sqlite": "CREATE INDEX IF NOT EXISTS userio_identity_folded ON userio_identity"
    " (project_id, lower(normalized_value), login_id_key, user_id)",
}


class LoginIdIndexes(MigrationManager):
    """An index only; Piccolo's manager records the migration."""

    async def run(self, backwards: bool = False) -> None:
        await super().run(backwards=backwards)
        if self.preview:
            return
        engine = engine_finder()
        if backwards:
            await engine.run_querystring(QueryString("DROP INDEX IF EXISTS userio_identity_folded"))
            return
        await engine.run_querystring(QueryString(FOLDED[engine.engine_type]))


async def forwards():
    return LoginIdIndexes(migration_id=ID, app_name="userio", description=DESCRIPTION)
