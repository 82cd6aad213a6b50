"""The PostgreSQL pool: a connection comes back clean whatever its last user did, and the pool always closes."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from litestar_userio.db.engine import Database
from litestar_userio.errors import unavailable_dependency


async def test_a_connection_dropped_inside_a_transaction_goes_back_to_the_pool(postgres_url):
    """A worker shuts down promptly after PostgreSQL dropped one of its transactions (it used to hang on close)."""
    db = Database(postgres_url, pool_size=2)
    await db.start()
    admin = await asyncpg.connect(postgres_url)

    async def dropped_in_the_middle() -> None:
        async with db.transaction() as tx:
            pid = (await tx.fetchrow("SELECT pg_backend_pid() AS pid"))["pid"]
            await admin.execute("SELECT pg_terminate_backend($1)", pid)
            await tx.execute("SELECT 1")

    try:
        with pytest.raises(Exception) as dropped:  # noqa: PT011 (asyncpg raises one of several classes here)
            await dropped_in_the_middle()
        assert unavailable_dependency(dropped.value) == "database", "the job is retried, not failed"
        async with db.transaction() as tx:
            assert (await tx.fetchrow("SELECT 1 AS one"))["one"] == 1
    finally:
        await admin.close()
    await asyncio.wait_for(db.close(), timeout=5)


async def test_a_transaction_left_open_is_rolled_back_before_the_connection_is_reused(postgres_url):
    db = Database(postgres_url, pool_size=1)
    await db.start()
    try:
        async with db.reader() as tx:
            await tx.execute("CREATE TEMP TABLE IF NOT EXISTS left_open (n int)")
            await tx.execute("BEGIN")
            await tx.execute("INSERT INTO left_open VALUES (1)")
        async with db.reader() as tx:
            assert not tx.connection.is_in_transaction()
            assert (await tx.fetchrow("SELECT count(*) AS n FROM left_open"))["n"] == 0
    finally:
        await db.close()
