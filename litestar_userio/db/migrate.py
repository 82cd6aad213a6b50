"""Run the plugin's migrations against a `Database` from code (CLI `migrate`, app start, tests)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
from collections.abc import Iterator

from piccolo.apps.migrations.commands.forwards import run_forwards

from litestar_userio.db import piccolo_conf
from litestar_userio.db.engine import Database

__all__ = ["migrate"]

_CONF_MODULE = "litestar_userio.db.piccolo_conf"
_ADVISORY_LOCK_ID = 0x75736572696F  # "userio": one migrator at a time across processes
_lock = asyncio.Lock()


@contextlib.contextmanager
def _piccolo_conf(db: Database) -> Iterator[None]:
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
    out = io.StringIO()
    async with _lock, db.transaction() as tx:
        if tx.dialect == "postgres":
            await tx.execute(f"SELECT pg_advisory_xact_lock({_ADVISORY_LOCK_ID})")
        with _piccolo_conf(db), contextlib.redirect_stdout(out):
            result = await run_forwards("userio")
    if not result.success:
        raise RuntimeError(f"migrations failed: {result.message}\n{out.getvalue()}")
    return out.getvalue()
