"""PostgreSQL: the rows an import writes in bulk are no longer checked one by one against their parents (issue 15).

A foreign key checks each inserted row with a query of its own and locks the parent row: in `bench/import.py` that
was 600 000 queries per 100 000 users (404 000 against `userio_user`, 100 000 each against `userio_project` and
`userio_role`), and dropping them took PostgreSQL from 82 to 46-47 us of CPU per imported record. They never found
anything: only `UserRepository` writes these rows, in the transaction that inserts their user or holds it locked
(`load`, FOR UPDATE), with role and group ids it has just read. A statement-level check of each insert instead
(transition tables, parents locked FOR KEY SHARE) measured 82-142 us: no cheaper. So a row written by another
path is not checked here; what a delete means is kept: a statement trigger removes what a deleted user, project,
role or group leaves behind, one statement per table however many rows go.

SQLite keeps its foreign keys, and the schema Piccolo sees (`tables.py`) is the same on both engines.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-11-24T00:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "import's bulk tables: statement-level cascades instead of per-row foreign key checks (PostgreSQL)"

UNCHECKED = [
    ("userio_user", "project_id"),
    ("userio_identity", "user_id"),
    ("userio_authenticator", "user_id"),
    ("userio_user_role", "user_id"),
    ("userio_user_role", "role_id"),
    ("userio_user_group", "user_id"),
    ("userio_user_group", "group_id"),
]

# (parent table, [(child table, column)]): what a deleted parent leaves behind.
CASCADES = [
    ("userio_project", [("userio_user", "project_id")]),
    (
        "userio_user",
        [
            ("userio_identity", "user_id"),
            ("userio_authenticator", "user_id"),
            ("userio_user_role", "user_id"),
            ("userio_user_group", "user_id"),
        ],
    ),
    ("userio_role", [("userio_user_role", "role_id")]),
    ("userio_group", [("userio_user_group", "group_id")]),
]


def _drop_foreign_key(table: str, column: str) -> str:
    return f"""
DO $$
DECLARE name text;
BEGIN
  FOR name IN
    SELECT c.conname FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    WHERE c.contype = 'f' AND c.conrelid = '{table}'::regclass AND a.attname = '{column}'
  LOOP
    EXECUTE format('ALTER TABLE {table} DROP CONSTRAINT %I', name);
  END LOOP;
END $$"""


def _cascade(parent: str, children: list[tuple[str, str]]) -> list[str]:
    deletes = "".join(f"  DELETE FROM {table} WHERE {column} IN (SELECT id FROM gone);\n" for table, column in children)
    return [
        f"CREATE FUNCTION {parent}_cascade() RETURNS trigger LANGUAGE plpgsql AS $$\n"
        f"BEGIN\n{deletes}  RETURN NULL;\nEND $$",
        f"CREATE TRIGGER {parent}_cascade AFTER DELETE ON {parent} REFERENCING OLD TABLE AS gone"
        f" FOR EACH STATEMENT EXECUTE FUNCTION {parent}_cascade()",
    ]


async def statement_cascades() -> None:
    engine = engine_finder()
    if engine.engine_type != "postgres":
        return
    statements = [_drop_foreign_key(table, column) for table, column in UNCHECKED]
    statements += [statement for parent, children in CASCADES for statement in _cascade(parent, children)]
    for statement in statements:
        await engine.run_querystring(QueryString(statement))


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)
    manager.add_raw(statement_cascades)
    return manager
