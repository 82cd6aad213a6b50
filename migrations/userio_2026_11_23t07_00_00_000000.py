"""PostgreSQL: a user's rows go with it through one statement-level trigger, not per-row foreign-key checks.

pg_stat_statements over `bench/import.py` (100 000 users): the foreign keys of identities, authenticators and
role/group memberships ran 610 000 checks (`SELECT 1 FROM userio_user ... FOR KEY SHARE`, one per inserted
row, each an index probe and a row lock), the largest cost of the import in PostgreSQL after the rows
themselves. Only the plugin's repository writes these rows, in the transaction that writes (or locks) their
user, so the checks never found anything. What the keys also gave, deleting a user's (or a role's or group's)
rows with it, stays: an AFTER DELETE trigger per statement deletes them, set-wise, from its transition table.
SQLite keeps its foreign keys (it cannot drop one without rebuilding the table; its checks are in-process).
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-11-23T07:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "cascade deletes by statement triggers instead of per-row foreign-key checks (PostgreSQL)"

_CHILDREN = {
    "userio_user": [
        ("userio_identity", "user_id"),
        ("userio_authenticator", "user_id"),
        ("userio_user_role", "user_id"),
        ("userio_user_group", "user_id"),
    ],
    "userio_role": [("userio_user_role", "role_id")],
    "userio_group": [("userio_user_group", "group_id")],
}

POSTGRES_STATEMENTS = [
    "ALTER TABLE userio_identity DROP CONSTRAINT IF EXISTS userio_identity_user_id_fkey",
    "ALTER TABLE userio_authenticator DROP CONSTRAINT IF EXISTS userio_authenticator_user_id_fkey",
    "ALTER TABLE userio_user_role DROP CONSTRAINT IF EXISTS userio_user_role_user_id_fkey",
    "ALTER TABLE userio_user_role DROP CONSTRAINT IF EXISTS userio_user_role_role_id_fkey",
    "ALTER TABLE userio_user_group DROP CONSTRAINT IF EXISTS userio_user_group_user_id_fkey",
    "ALTER TABLE userio_user_group DROP CONSTRAINT IF EXISTS userio_user_group_group_id_fkey",
]
for parent, children in _CHILDREN.items():
    deletes = " ".join(f"DELETE FROM {table} WHERE {column} IN (SELECT id FROM gone);" for table, column in children)
    POSTGRES_STATEMENTS += [
        f"CREATE OR REPLACE FUNCTION {parent}_cascade() RETURNS trigger LANGUAGE plpgsql AS"
        f" $$ BEGIN {deletes} RETURN NULL; END $$",
        f"CREATE TRIGGER {parent}_cascade AFTER DELETE ON {parent} REFERENCING OLD TABLE AS gone"
        f" FOR EACH STATEMENT EXECUTE FUNCTION {parent}_cascade()",
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
