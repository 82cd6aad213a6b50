"""Run the plugin's migrations against a `Database` from code (CLI `migrate`, app start, tests).

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

from litestar_userio.db.engine import Database
from litestar_userio.db.migrations import APP_NAME, migration_ids
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
    try:
        yield
    finally:
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
    async with _lock, db.transaction() as tx:
        if tx.dialect == "postgres":
            await tx.execute(f"SELECT pg_advisory_xact_lock({_ADVISORY_LOCK_ID})")
        with _piccolo_conf(db), contextlib.redirect_stdout(out):
            result = await run_forwards(APP_NAME)
    if not result.success:
        raise RuntimeError(f"migrations failed: {result.message}\n{out.getvalue()}")
    return out.getvalue()


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
