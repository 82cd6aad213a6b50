"""Run the plugin's migrations against a `Database` from code (CLI `migrate`, app start, tests).

On PostgreSQL the plugin's tables and Piccolo's `migration` table live in `Database.schema`
(docs/reference.md#tasks-database-schema): our connections see that schema only (`search_path`), so a host's own
`migration` table is never read or written. `migrate` creates the schema, and moves an older deployment's tables there
from `public` once.

Piccolo's migration runner is loaded only when a migration is to run: loading it (it imports `black`) took 172 ms
of the 1.2 s every `litestar userio` command spent starting, and a current schema is told by one query.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
from collections.abc import Iterator

from piccolo.apps.migrations.tables import Migration

from litestar_userio.db.engine import Database, Tx
from litestar_userio.db.migrations import APP_NAME, migration_ids
from litestar_userio.db.tables import TABLES
from litestar_userio.errors import DatabaseUnavailable

__all__ = ["migrate"]

_CONF_MODULE = "litestar_userio.db.piccolo_conf"
_ADVISORY_LOCK_ID = 0x75736572696F  # "userio": one migrator at a time across processes
_lock = asyncio.Lock()


@contextlib.contextmanager
def _piccolo_conf(db: Database) -> Iterator[None]:
    from litestar_userio.db import piccolo_conf

    previous = os.environ.get("PICCOLO_CONF")
    os.environ["PICCOLO_CONF"] = _CONF_MODULE
    piccolo_conf.DB = db.engine
    # Piccolo's runner asks whether its `migration` table exists in `public` unless the table names a schema: ours
    # is in our schema, and a host's own in `public` must not count (nor be written).
    previous_schema = Migration._meta.schema
    Migration._meta.schema = db.schema if db.dialect == "postgres" else None
    try:
        yield
    finally:
        Migration._meta.schema = previous_schema
        piccolo_conf.DB = None
        if previous is None:
            os.environ.pop("PICCOLO_CONF", None)
        else:
            os.environ["PICCOLO_CONF"] = previous


async def migrate(db: Database) -> str:
    """Apply every migration not yet applied; return Piccolo's report. Safe to run from many processes."""
    db.bind()
    if (applied := await _applied_when_current(db)) is not None:
        return f"👍 {applied} migrations already complete\n🏁 No migrations need to be run\n"  # Piccolo's words
    from piccolo.apps.migrations.commands.forwards import run_forwards

    out = io.StringIO()
    if db.dialect == "postgres":  # committed before the runner, which works on connections of its own
        async with _lock, db.transaction() as tx:
            await tx.execute(f"SELECT pg_advisory_xact_lock({_ADVISORY_LOCK_ID})")
            moved = await _into_own_schema(tx, db.schema)
        if moved:
            out.write(f"moved {moved} tables of litestar-userio from public into the schema {db.schema}\n")
    async with _lock, db.transaction() as tx:
        if tx.dialect == "postgres":
            await tx.execute(f"SELECT pg_advisory_xact_lock({_ADVISORY_LOCK_ID})")
        with _piccolo_conf(db), contextlib.redirect_stdout(out):
            result = await run_forwards(APP_NAME)
    if not result.success:
        raise RuntimeError(f"migrations failed: {result.message}\n{out.getvalue()}")
    return out.getvalue()


_LEGACY_SCHEMA = "public"
"""Where deployments made before `database_schema` existed have their tables."""


async def _into_own_schema(tx: Tx, schema: str) -> int:
    """Create `schema`; move an older deployment's tables, trigger functions and migration rows into it from `public`.

    Moves only when `schema` holds none of our tables yet (a second run moves nothing), in the caller's transaction:
    all or nothing. `ALTER TABLE ... SET SCHEMA` keeps rows, indexes, sequences, constraints and triggers. Returns
    how many tables moved.
    """
    await tx.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    if schema == _LEGACY_SCHEMA:
        return 0
    ours = [table._meta.tablename for table in TABLES]
    found = await tx.fetch(
        "SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p') AND c.relname = ANY($2)",
        [schema, _LEGACY_SCHEMA],
        [*ours, "migration"],
    )
    legacy = [row["name"] for row in found if row["schema"] == _LEGACY_SCHEMA and row["name"] in ours]
    if not legacy or any(row["schema"] == schema and row["name"] in ours for row in found):
        return 0
    for name in legacy:
        await tx.execute(f'ALTER TABLE "{_LEGACY_SCHEMA}"."{name}" SET SCHEMA "{schema}"')
    functions = await tx.fetch(
        "SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = $1 AND p.proname = ANY($2)",
        _LEGACY_SCHEMA,
        [f"{name}_cascade" for name in legacy],
    )
    for row in functions:
        await tx.execute(f'ALTER FUNCTION "{_LEGACY_SCHEMA}"."{row["name"]}"() SET SCHEMA "{schema}"')
    if any(row["schema"] == _LEGACY_SCHEMA and row["name"] == "migration" for row in found):
        for statement in Migration.create_table(if_not_exists=True).ddl:  # Piccolo's own table, in `schema`
            await tx.execute(statement)
        await tx.execute(
            f'INSERT INTO "{schema}".migration (name, app_name, ran_on) SELECT name, app_name, ran_on'
            f' FROM "{_LEGACY_SCHEMA}".migration WHERE app_name = $1 ORDER BY id',
            APP_NAME,
        )
        await tx.execute(f'DELETE FROM "{_LEGACY_SCHEMA}".migration WHERE app_name = $1', APP_NAME)
    return len(legacy)


async def _applied_when_current(db: Database) -> int | None:
    """How many migrations Piccolo recorded as applied, when every one of ours is; else None (the runner decides)."""
    query = Migration.select(Migration.name).where(Migration.app_name == APP_NAME)
    try:
        async with db.reader() as tx:
            applied = {row["name"] for row in await tx.run(query)}
    except DatabaseUnavailable:
        raise
    except Exception:  # no `migration` table yet, or not Piccolo's: the runner creates or reports it
        return None
    ours = migration_ids()
    return len(applied) if ours and ours <= applied else None
