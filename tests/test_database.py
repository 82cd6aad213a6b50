"""The PostgreSQL pool: a connection comes back clean whatever its last user did, and the pool always closes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import asyncpg
import pytest

from litestar_userio.db.engine import BlockingTx, Database, Tx
from litestar_userio.errors import WriteConflict, unavailable_dependency
from tests.conftest import sqlite_connection_threads


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
    await asyncio.wait_for(db.close(), timeout=60)


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


class SilentSource:
    """COPY data from a client that sends one row, then nothing (frozen, or its link cut), until `never` is set."""

    def __init__(self, row: bytes) -> None:
        self.row = row
        self.started = asyncio.Event()
        self.never = asyncio.Event()

    async def rows(self) -> AsyncIterator[bytes]:
        yield self.row
        self.started.set()
        await self.never.wait()


@pytest.mark.parametrize("name", ["", "?application_name=my-auth-server"], ids=["our-name", "the-url's-name"])
async def test_a_copy_whose_client_went_silent_is_ended_and_its_locks_freed(postgres_url, name):
    """A worker that stops in the middle of a statement (frozen, or its link cut; here between COPY data) leaves
    its session waiting for the rest, which no PostgreSQL timeout ends; `end_silent_sessions` does, once it waited
    the silent timeout, and the rows it locked can be written again. A statement within the timeout is left alone.
    """
    db = Database(postgres_url + name, pool_size=3, silent_transaction_timeout=timedelta(seconds=1))
    await db.start()
    admin = await asyncpg.connect(postgres_url)
    await admin.execute("CREATE TABLE IF NOT EXISTS userio.silent_copy_target (n int PRIMARY KEY)")
    await admin.execute("TRUNCATE userio.silent_copy_target")
    await admin.execute("INSERT INTO userio.silent_copy_target VALUES (1)")
    silent = SilentSource(b"2\n")

    async def stuck_copy() -> None:
        async with db.transaction() as tx:
            await tx.execute("UPDATE silent_copy_target SET n = n WHERE n = 1")  # holds the row's lock
            await tx.connection.copy_to_table("silent_copy_target", source=silent.rows())

    copy = asyncio.ensure_future(stuck_copy())
    try:
        await asyncio.wait_for(silent.started.wait(), timeout=60)
        assert await db.end_silent_sessions() == 0, "a COPY within the silent timeout is not ended"
        stuck = await admin.fetch(
            "SELECT application_name FROM pg_stat_activity WHERE state = 'active' AND query ILIKE 'COPY %'"
            " AND wait_event = 'ClientRead'"
        )
        assert [row["application_name"] for row in stuck] == [name.partition("=")[2] or "litestar-userio"]
        await asyncio.sleep(1.2)
        assert await db.end_silent_sessions() == 1
        # The row's lock is freed while the client is still silent.
        await asyncio.wait_for(admin.execute("UPDATE userio.silent_copy_target SET n = 3 WHERE n = 1"), timeout=60)
        assert await admin.fetchval("SELECT array_agg(n ORDER BY n) FROM userio.silent_copy_target") == [3]
        silent.never.set()  # the client comes back (a frozen worker thaws): its COPY's session is gone
        with pytest.raises(Exception) as ended:  # noqa: PT011 (asyncpg raises one of several classes here)
            await asyncio.wait_for(copy, timeout=60)
        assert not isinstance(ended.value, TimeoutError), "the COPY did not end"
        assert unavailable_dependency(ended.value) == "database", "the job is retried, not failed"
    finally:
        silent.never.set()
        copy.cancel()
        await admin.execute("DROP TABLE IF EXISTS userio.silent_copy_target")
        await admin.close()
        await asyncio.wait_for(db.close(), timeout=60)


async def test_sessions_of_other_applications_are_never_ended(postgres_url):
    """Only our own sessions are ended: another application's slow COPY is its own business."""
    db = Database(postgres_url, pool_size=1, silent_transaction_timeout=timedelta(milliseconds=1))
    await db.start()
    other = await asyncpg.connect(postgres_url, server_settings={"application_name": "someone-else"})
    await other.execute("CREATE TEMP TABLE other_copy (n int)")
    silent = SilentSource(b"1\n")
    copy = asyncio.ensure_future(other.copy_to_table("other_copy", source=silent.rows()))
    try:
        await asyncio.wait_for(silent.started.wait(), timeout=60)
        await asyncio.sleep(0.1)
        assert await db.end_silent_sessions() == 0
        assert not copy.done()
    finally:
        silent.never.set()
        await asyncio.wait_for(copy, timeout=60)
        await other.close()
        await asyncio.wait_for(db.close(), timeout=60)


async def test_a_transaction_with_a_lock_timeout_gives_up_on_a_locked_row_with_a_write_conflict(postgres_url):
    """The sweep's transactions never wait behind a row another session holds: they fail as `WriteConflict`."""
    db = Database(postgres_url, pool_size=2)
    await db.start()
    admin = await asyncpg.connect(postgres_url, server_settings={"search_path": db.schema})
    await admin.execute("CREATE TABLE IF NOT EXISTS lock_timeout_target (n int PRIMARY KEY)")
    await admin.execute("TRUNCATE lock_timeout_target")
    await admin.execute("INSERT INTO lock_timeout_target VALUES (1)")
    holder = admin.transaction()
    await holder.start()
    try:
        await admin.execute("UPDATE lock_timeout_target SET n = n WHERE n = 1")
        with pytest.raises(WriteConflict):
            async with db.transaction(lock_timeout=timedelta(milliseconds=200)) as tx:
                await tx.execute("UPDATE lock_timeout_target SET n = 2 WHERE n = 1")
        await holder.rollback()
        async with db.transaction(lock_timeout=timedelta(milliseconds=200)) as tx:
            await tx.execute("UPDATE lock_timeout_target SET n = 2 WHERE n = 1")
        assert await admin.fetchval("SELECT n FROM lock_timeout_target") == 2
    finally:
        await admin.execute("DROP TABLE IF EXISTS lock_timeout_target")
        await admin.close()
        await asyncio.wait_for(db.close(), timeout=60)


async def test_a_read_cancelled_while_its_sqlite_connection_opens_leaves_no_connection_open(tmp_path):
    """Cancelled at each step of opening its connection (Piccolo connects, then sets `PRAGMA foreign_keys`), a
    read leaves no connection thread once the database closes: a host once hung at SIGTERM on one."""
    db = Database(f"sqlite:///{tmp_path / 'userio.sqlite3'}")
    await db.start()
    before = set(sqlite_connection_threads())
    kept = []  # their tracebacks hold the frames that held the connections, as a log record would
    try:

        async def read() -> None:
            async with db.snapshot() as tx:
                await tx.fetch("SELECT 1")

        for ticks in range(1, 40):
            task = asyncio.create_task(read())
            for _ in range(ticks):
                await asyncio.sleep(0)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError as cancelled:
                kept.append(cancelled)
        assert kept, "some reads were cancelled while they opened their connection"
    finally:
        await db.close()
    for _ in range(100):
        if not set(sqlite_connection_threads()) - before:
            break
        await asyncio.sleep(0.05)
    assert set(sqlite_connection_threads()) - before == set()


@pytest.mark.parametrize("moment", ["waiting for the write lock", "inside the transaction"])
async def test_a_sqlite_transaction_cancelled_at_any_moment_leaves_no_connection_open(tmp_path, moment):
    """A job cancelled (its runner closing) while its transaction waits for SQLite's write lock, or while it works
    in it, closes its connection: an open one is a thread that keeps the process from exiting."""
    import sqlite3

    path = tmp_path / "userio.sqlite3"
    db = Database(f"sqlite:///{path}")
    await db.start()
    try:
        async with db.transaction() as tx:  # the file and its WAL exist
            await tx.execute("CREATE TABLE t (x INTEGER)")
        # Threads of earlier tests may still be closing: only the ones that start from here on count.
        before = set(sqlite_connection_threads())
        holder = sqlite3.connect(path, isolation_level=None)
        entered = asyncio.Event()

        async def job() -> None:
            async with db.transaction() as tx:
                entered.set()
                await tx.execute("INSERT INTO t VALUES (1)")
                await asyncio.sleep(60)

        if moment == "waiting for the write lock":
            holder.execute("BEGIN IMMEDIATE")
        task = asyncio.create_task(job())
        if moment == "waiting for the write lock":
            await asyncio.sleep(0.5)
            assert not entered.is_set()
        else:
            await asyncio.wait_for(entered.wait(), 10)
        task.cancel()
        if moment == "waiting for the write lock":
            holder.execute("ROLLBACK")
        # Kept, as a log record or a task's result would keep it: its traceback holds the frames that held the
        # connection, so only closing it, not the garbage collector, ends its thread.
        with pytest.raises(asyncio.CancelledError) as cancelled:
            await task
        holder.close()

        for _ in range(100):
            if not set(sqlite_connection_threads()) - before:
                break
            await asyncio.sleep(0.05)
        assert set(sqlite_connection_threads()) - before == set(), cancelled.traceback
        async with db.reader() as tx:
            assert await tx.fetch("SELECT x FROM t") == []
    finally:
        await db.close()


async def test_a_sqlite_write_at_once_commits_its_statements_and_an_error_in_it_undoes_them(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'userio.sqlite3'}")
    await db.start()
    try:
        async with db.transaction() as tx:
            await tx.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")

        def insert(tx: BlockingTx, *values: int) -> int:
            return sum(tx.execute("INSERT INTO t (x) VALUES ($1)", value) for value in values)

        def insert_then_fail(tx: BlockingTx) -> None:
            insert(tx, 3)
            raise ValueError("a bug")

        assert await db.write_at_once(lambda tx: insert(tx, 1, 2)) == 2
        with pytest.raises(ValueError, match="a bug"):
            await db.write_at_once(insert_then_fail)
        with pytest.raises(WriteConflict):
            await db.write_at_once(lambda tx: insert(tx, 4, 1))  # the primary key refuses 1 again

        async with db.reader() as tx:
            assert [row["x"] for row in await tx.fetch("SELECT x FROM t ORDER BY x")] == [1, 2]
    finally:
        await db.close()


async def test_sqlite_writes_at_once_that_share_a_transaction_fail_alone(tmp_path):
    """Calls made together share one transaction (one COMMIT, one sync to disk): one that fails undoes only its own
    statements, and the others' are committed."""
    db = Database(f"sqlite:///{tmp_path / 'userio.sqlite3'}")
    await db.start()
    try:
        async with db.transaction() as tx:
            await tx.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")

        def insert(tx: BlockingTx, value: int, fail: bool = False) -> int:
            tx.execute("INSERT INTO t (x) VALUES ($1)", value)
            if fail:
                raise ValueError(value)
            return value

        outcomes = await asyncio.gather(
            db.write_at_once(lambda tx: insert(tx, 1)),
            db.write_at_once(lambda tx: insert(tx, 2, fail=True)),
            db.write_at_once(lambda tx: insert(tx, 1)),  # the primary key refuses it: a write conflict
            db.write_at_once(lambda tx: insert(tx, 3)),
            return_exceptions=True,
        )

        assert outcomes[0] == 1 and outcomes[3] == 3
        assert isinstance(outcomes[1], ValueError) and isinstance(outcomes[2], WriteConflict)
        async with db.reader() as tx:
            assert [row["x"] for row in await tx.fetch("SELECT x FROM t ORDER BY x")] == [1, 3]
    finally:
        await db.close()


async def test_a_sqlite_write_at_once_inside_a_transaction_is_part_of_it(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'userio.sqlite3'}")
    await db.start()
    try:
        async with db.transaction() as tx:
            await tx.execute("CREATE TABLE t (x INTEGER)")

        async def fail_after_both() -> None:
            async with db.transaction() as tx:
                await tx.execute("INSERT INTO t VALUES (1)")
                await db.write_at_once(lambda blocking: blocking.execute("INSERT INTO t VALUES (2)"))
                raise RuntimeError("the enclosing transaction fails")

        with pytest.raises(RuntimeError):
            await fail_after_both()

        async with db.reader() as tx:
            assert await tx.fetch("SELECT x FROM t") == []
    finally:
        await db.close()


async def test_a_sqlite_write_at_once_cancelled_while_it_waits_for_the_write_lock_writes_nothing(tmp_path):
    """Its statements run in the connection's thread, past the caller's reach: a caller cancelled while SQLite's
    busy handler waited (another process held the write lock) rolls them back, and leaves no connection open."""
    import sqlite3

    path = tmp_path / "userio.sqlite3"
    db = Database(f"sqlite:///{path}")
    await db.start()
    try:
        async with db.transaction() as tx:
            await tx.execute("CREATE TABLE t (x INTEGER)")
        before = set(sqlite_connection_threads())
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        task = asyncio.create_task(db.write_at_once(lambda tx: tx.execute("INSERT INTO t VALUES (1)")))
        await asyncio.sleep(0.5)  # its BEGIN IMMEDIATE waits in the connection's thread
        task.cancel()
        await asyncio.sleep(0.2)  # the cancellation reached it, while the write lock is still held
        holder.execute("ROLLBACK")
        holder.close()
        with pytest.raises(asyncio.CancelledError):
            await task

        for _ in range(100):
            if not set(sqlite_connection_threads()) - before:
                break
            await asyncio.sleep(0.05)
        assert set(sqlite_connection_threads()) - before == set()
        async with db.reader() as tx:
            assert await tx.fetch("SELECT x FROM t") == []
    finally:
        await db.close()


async def test_a_sqlite_point_read_sees_the_last_commit_and_reads_on_a_thread_while_the_file_is_locked(tmp_path):
    """`point_read` runs on the event loop: it sees every committed write at once; a file another process holds
    locked (exclusive locking mode: WAL readers wait for nothing else) is waited for on a thread, the loop free."""
    import sqlite3

    path = tmp_path / "userio.sqlite3"

    async def names(tx: Tx) -> list[str]:
        return [row["name"] for row in await tx.fetch("SELECT name FROM t ORDER BY x")]

    db = Database(f"sqlite:///{path}")
    await db.start()
    try:
        async with db.transaction() as tx:
            await tx.execute("CREATE TABLE t (x INTEGER PRIMARY KEY, name TEXT)")
        assert await db.point_read(names) == []
        await db.write_at_once(lambda tx: tx.execute("INSERT INTO t VALUES (1, 'ada')"))
        assert await db.point_read(names) == ["ada"]
    finally:
        await db.close()

    db = Database(f"sqlite:///{path}")
    await db.start()
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("INSERT INTO t VALUES (2, 'grace')")
        holder.execute("COMMIT")  # the exclusive lock stays until the connection closes
        reading = asyncio.create_task(db.point_read(names))
        started = asyncio.get_running_loop().time()
        for _ in range(20):  # 0.4 s of a loop that keeps running while the read waits
            await asyncio.sleep(0.02)
        assert asyncio.get_running_loop().time() - started < 2
        assert not reading.done()
        holder.close()
        assert await asyncio.wait_for(reading, 30) == ["ada", "grace"]
    finally:
        holder.close()
        await db.close()
