"""The database: a Piccolo engine for the plugin's tables, and the transactions the repositories query in.

Piccolo defines the tables, runs the migration and builds the ordinary queries (`Tx.run`). Every query goes
through `Tx`, from the repositories only: one transaction can then span repositories, which Piccolo's own
`run()` (a connection per query outside its transaction context) could not join. So `Tx.run` has Piccolo
compile the query for the transaction's engine and sends it on the transaction's connection. The measured bulk
paths (docs/architecture.md) keep hand-tuned SQL (`Tx.fetch`, `$n` placeholders on both engines)
and COPY (`Tx.insert_many`): inserting 1000 rows through Piccolo model instances took 88 ms, through COPY 7 ms.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sqlite3
import threading
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from datetime import timedelta
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qs, urlsplit

from piccolo.apps.migrations.tables import Migration
from piccolo.engine.base import Engine
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine, SQLiteTransaction, TransactionType, dict_factory
from piccolo.query.base import Query
from piccolo.query.methods.select import Select
from piccolo.table import Table

from litestar_userio.db.tables import TABLES
from litestar_userio.errors import DatabaseUnavailable, UnstorableText, UserIOError, WriteConflict
from litestar_userio.extras import require

__all__ = ["DEFAULT_SCHEMA", "BlockingTx", "Database", "Dialect", "Row", "Tx", "driver_errors", "in_batches"]

Dialect = Literal["postgres", "sqlite"]
Row = Mapping[str, Any]
"""A result row: `row["column"]`, `row.get(...)`, `row.values()`."""

_PLACEHOLDER = re.compile(r"\$(\d+)")
_T = TypeVar("_T")
_APPLICATION_NAME = "litestar-userio"
"""Our sessions in `pg_stat_activity` unless the database URL names them (`?application_name=...`): how
`end_silent_sessions` tells them from other applications'."""
_IDLE_SQLITE_READERS = 4
_INLINE_BUSY_MS = 20
"""How long a `point_read` on the event loop waits for a busy SQLite file before it reads on a thread instead."""
DEFAULT_SCHEMA = "userio"
"""`UserIOConfig.database_schema`'s default."""
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_POOL_CLOSE_TIMEOUT = 10.0

logger = logging.getLogger("litestar_userio.db")


_CONFLICT_SQLSTATES = {"23505", "40001", "40P01", "55P03"}
"""unique_violation, serialization_failure, deadlock_detected, lock_not_available (a `lock_timeout` ran out)."""
_UNAVAILABLE_SQLSTATE_CLASSES = ("08", "53", "57")
"""connection_exception, insufficient_resources, operator_intervention (admin shutdown, terminated backend)."""
_UNSTORABLE_SQLSTATES = {"22021", "22P05"}
"""character_not_in_repertoire (U+0000 in text: "invalid byte sequence for encoding UTF8: 0x00") and
untranslatable_character (U+0000 in JSONB: "unsupported Unicode escape sequence"): a value, not the database."""
_SQLITE_UNAVAILABLE = ("unable to open", "locked", "busy", "disk I/O")


def _postgres_client_errors() -> tuple[type[Exception], ...]:
    """The PostgreSQL client's connection-gone errors, then the rest; none without the `postgres` extra."""
    if find_spec("asyncpg") is None:
        return ()
    import asyncpg

    return (asyncpg.InterfaceError, asyncpg.InternalClientError, asyncpg.PostgresError)


_PG_ERRORS = _postgres_client_errors()
_PG_CONNECTION_ERRORS = _PG_ERRORS[:2]
_DRIVER_ERRORS: tuple[type[Exception], ...] = (*_PG_ERRORS, sqlite3.Error)


def _translated(error: BaseException) -> UserIOError | None:
    """Our error for a driver error that means "try again", "the database is away", or "a value no database stores".

    `WriteConflict`, `DatabaseUnavailable`, `UnstorableText` (U+0000: the caller's input, a 400, never a 500).
    """
    sqlstate = getattr(error, "sqlstate", None)
    if isinstance(sqlstate, str):
        if sqlstate in _UNSTORABLE_SQLSTATES:
            return UnstorableText()
        if sqlstate in _CONFLICT_SQLSTATES:
            return WriteConflict()
        if sqlstate[:2] in _UNAVAILABLE_SQLSTATE_CLASSES:
            return DatabaseUnavailable()
        return None
    if isinstance(error, _PG_CONNECTION_ERRORS):
        return DatabaseUnavailable()  # the connection is closed or broken
    if isinstance(error, sqlite3.IntegrityError) and "UNIQUE" in str(error):
        return WriteConflict()
    if isinstance(error, sqlite3.OperationalError) and any(text in str(error) for text in _SQLITE_UNAVAILABLE):
        return DatabaseUnavailable()
    return None


@contextmanager
def driver_errors() -> Iterator[None]:
    """The database boundary: driver errors meaning conflict or outage leave as our own errors.

    `WriteConflict`, `DatabaseUnavailable` or `UnstorableText`; any other error (a bug) leaves unchanged.
    """
    try:
        yield
    except _DRIVER_ERRORS as error:
        ours = _translated(error)
        if ours is None:
            raise
        raise ours from error


_BINDING = threading.Lock()
"""Piccolo reads the engine type from the tables' class-level binding while it builds a query (placeholders,
serial defaults); two databases of different engines can live in one process (an app and its tests, an embedded
app beside a served one), so a query is built with the tables bound to its own engine, one build at a time."""


def compile_query(engine: Engine[Any], build: Callable[[], Query[Any, Any]]) -> list[tuple[str, list[Any]]]:
    """The statements (SQL in the engine's placeholder style, with arguments) of the query `build` makes."""
    tables: tuple[type[Table], ...] = TABLES
    with _BINDING:
        bound = [table._meta._db for table in tables]
        for table in tables:
            table._meta._db = engine
        try:
            return [q.compile_string(engine_type=engine.engine_type) for q in build().querystrings]
        finally:
            for table, previous in zip(tables, bound, strict=True):
                table._meta._db = previous


_IDS_PER_STATEMENT = 1000


def in_batches(values: Sequence[Any]) -> Iterator[list[Any]]:
    """`values` a thousand at a time, for `IN (...)` lists: each is a bound parameter, and drivers cap them."""
    for start in range(0, len(values), _IDS_PER_STATEMENT):
        yield list(values[start : start + _IDS_PER_STATEMENT])


class Tx:
    """One open transaction: Piccolo queries (`run`, `insert`), or SQL with `$1`-style placeholders."""

    def __init__(self, connection: Any, engine: Engine[Any]) -> None:
        self.connection = connection
        self.engine = engine
        """The Piccolo engine `run` builds queries for."""
        self.dialect: Dialect = "postgres" if isinstance(engine, PostgresEngine) else "sqlite"

    async def run(self, query: Query[Any, Any] | Callable[[], Query[Any, Any]]) -> list[Row]:
        """Run a query built with Piccolo's query builder; the rows of its last statement.

        Pass a function that builds the query when it makes rows (`Table(...)`, as `insert` does): a row takes
        its defaults (a serial id) from the engine, so it is made under the same binding as the SQL.
        Rows hold the raw column values, as `fetch` returns them: JSON columns as text, no Piccolo output options.
        """
        build = query if callable(query) else lambda: query
        return await self._send(compile_query(self.engine, build))

    def locking(self, query: Select[Any]) -> Select[Any]:
        """The select with a row lock on PostgreSQL; SQLite has one writer, taken at BEGIN IMMEDIATE."""
        return query.lock_rows() if self.dialect == "postgres" else query

    async def first(self, query: Query[Any, Any] | Callable[[], Query[Any, Any]]) -> Row | None:
        """The first row of a Piccolo query, or None."""
        rows = await self.run(query)
        return rows[0] if rows else None

    async def insert(
        self, table: type[Table], *rows: Mapping[str, Any], on_conflict: Literal["DO NOTHING"] | None = None
    ) -> None:
        """Insert rows given as {column name: value}; columns left out take the table's defaults.

        `on_conflict="DO NOTHING"` skips the rows that would break a unique constraint.
        """
        if not rows:
            return

        def build() -> Query[Any, Any]:
            query = table.insert(*(table(**row) for row in rows))
            return query.on_conflict(action="DO NOTHING") if on_conflict else query

        await self.run(build)

    async def _send(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[Row]:
        """Run statements already in the engine's placeholder style; the rows of the last.

        Rows are not copied into dicts: for the export's pages that copy cost more than the query.
        """
        rows: list[Row] = []
        for sql, args in statements:
            with driver_errors():
                if self.dialect == "postgres":
                    rows = await self.connection.fetch(sql, *args)
                else:  # one trip to the connection's thread, not three (execute, fetchall, close)
                    rows = list(await self.connection.execute_fetchall(sql, args))
        return rows

    @property
    def for_update(self) -> str:
        """Row-lock suffix: PostgreSQL locks rows; SQLite has one writer, taken at BEGIN IMMEDIATE."""
        return " FOR UPDATE" if self.dialect == "postgres" else ""

    def any(self, column: str, param: int) -> str:
        """`column` is one of the values of array parameter `param` (pass the values through `array`)."""
        if self.dialect == "postgres":
            return f"{column} = ANY(${param})"
        return f"{column} IN (SELECT value FROM json_each(${param}))"

    def json_rows(self, *columns: str) -> str:
        """An aggregate: the rows' `columns` as a JSON array of arrays (NULL when there are no rows)."""
        if self.dialect == "postgres":
            return f"json_agg(json_build_array({', '.join(columns)}))"
        return f"json_group_array(json_array({', '.join(columns)}))"

    def json_values(self, column: str) -> str:
        """An aggregate: the rows' `column` as a JSON array (NULL when there are no rows)."""
        return f"json_agg({column})" if self.dialect == "postgres" else f"json_group_array({column})"

    def array(self, values: Iterable[Any]) -> Any:
        """Encode a list for a parameter used with `any`."""
        values = list(values)
        return values if self.dialect == "postgres" else json.dumps(values)

    def _sql(self, sql: str) -> str:
        return sql if self.dialect == "postgres" else _PLACEHOLDER.sub(r"?\1", sql)

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        """Run hand-written SQL and return its rows (asyncpg records or SQLite rows: both read like mappings)."""
        return await self._send([(self._sql(sql), args)])

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        """Run a query and return its first row, or None."""
        rows = await self.fetch(sql, *args)
        return rows[0] if rows else None

    async def execute(self, sql: str, *args: Any) -> None:
        """Run a statement."""
        with driver_errors():
            if self.dialect == "postgres":
                await self.connection.execute(sql, *args)
            else:
                await self.connection.execute(self._sql(sql), args)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run a statement once per parameter row."""
        if not rows:
            return
        with driver_errors():
            if self.dialect == "postgres":
                await self.connection.executemany(sql, rows)
            else:
                await self.connection.executemany(self._sql(sql), rows)

    async def insert_many(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Bulk insert: COPY on PostgreSQL, `executemany` on SQLite. JSON columns take JSON strings."""
        if not rows:
            return
        if self.dialect == "postgres":
            with driver_errors():
                await self.connection.copy_records_to_table(table, records=rows, columns=list(columns))
            return
        marks = ", ".join(f"${i}" for i in range(1, len(columns) + 1))
        await self.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)

    @asynccontextmanager
    async def savepoint(self) -> AsyncIterator[None]:
        """A nested transaction: an error inside undoes only what was done inside, and the transaction goes on."""
        if self.dialect == "postgres":
            with driver_errors():
                async with self.connection.transaction():
                    yield
            return
        await self.execute("SAVEPOINT userio_record")
        try:
            yield
        except BaseException:
            await self.execute("ROLLBACK TO SAVEPOINT userio_record")
            await self.execute("RELEASE SAVEPOINT userio_record")
            raise
        await self.execute("RELEASE SAVEPOINT userio_record")

    async def delete_in(self, table: str, column: str, values: Sequence[Any]) -> None:
        """Delete the rows whose `column` is one of `values`."""
        if values:
            await self.execute(f"DELETE FROM {table} WHERE {self.any(column, 1)}", self.array(values))


class BlockingTx:
    """An SQLite write transaction run whole in its connection's thread (`Database.write_at_once`).

    Its statements are plain calls: no trip to the event loop and back between them, none for BEGIN or COMMIT.
    Same `$1`-style placeholders as `Tx`.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def execute(self, sql: str, *args: Any) -> int:
        """Run a statement; how many rows it changed."""
        return int(self._connection.execute(_PLACEHOLDER.sub(r"?\1", sql), args).rowcount)


async def _reset_connection(connection: Any) -> None:
    """Nothing beyond asyncpg's own release step, which already rolls back a transaction left open.

    asyncpg's default reset also runs `pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL` on every
    release: a round trip each time (measured: 246 against 145 us per acquire, query and release). The
    plugin takes no session locks, cursors, listeners or settings (its one advisory lock is per transaction).
    """


class _InlineSQLite:
    """An SQLite connection used on the event loop itself (`Database.point_read`), shaped as `Tx` uses aiosqlite's.

    Statements run in autocommit: each is its own read, finished before the call returns, so the one connection
    serves every caller in turn.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    async def execute_fetchall(self, sql: str, args: Sequence[Any]) -> list[Any]:
        return self._connection.execute(sql, args).fetchall()

    def close(self) -> None:
        self._connection.close()


class _NoVersionBanner(logging.Filter):
    """Piccolo logs "Running Sqlite version 3.4" at INFO each time an engine is made: every CLI command printed it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        return not (message.startswith("Running ") and " version " in message)


def _quiet_piccolo() -> None:
    """Drop Piccolo's version banner, once per process; its other messages (warnings) pass as before."""
    logger = logging.getLogger("piccolo.engine.base")
    if not any(isinstance(f, _NoVersionBanner) for f in logger.filters):
        logger.addFilter(_NoVersionBanner())


class _WriterTransaction(SQLiteTransaction):
    """Piccolo's BEGIN IMMEDIATE transaction on the connection the database keeps for its writes (`_idle_writer`).

    Piccolo's own opens a connection for each transaction and closes it after: a new thread in aiosqlite, the
    file opened, `PRAGMA foreign_keys`, then the thread stopped, four trips to a thread, in the one writer's
    turn that every other write waits for. This one gives its connection back once COMMIT or ROLLBACK went
    through; a connection whose COMMIT or ROLLBACK failed or was cancelled stays with the transaction, which
    `Database.transaction` closes.
    """

    __slots__ = ("_database",)

    def __init__(self, database: Database) -> None:
        assert isinstance(database.engine, SQLiteEngine)
        super().__init__(database.engine, transaction_type=TransactionType.immediate)
        self._database = database

    async def get_connection(self) -> Any:
        return await self._database._writer_connection()

    async def __aexit__(self, exception_type: Any, exception: BaseException | None, traceback: Any) -> bool:
        if self._parent:
            return exception is None
        if exception is not None:
            if not self._rolled_back:
                await self.rollback()  # type: ignore[no-untyped-call]  # Piccolo leaves it untyped
        elif not self._committed and not self._rolled_back:
            await self.commit()  # type: ignore[no-untyped-call]
        connection, self.connection = self.connection, None
        self.engine.current_transaction.reset(self.context)
        await self._database._give_back_writer(connection)
        return exception is None


class _Write:
    """A `Database.write_at_once` call waiting for its batch: its work, and (done, its result or error)."""

    __slots__ = ("abandoned", "outcome", "work")

    def __init__(self, work: Callable[[BlockingTx], Any], outcome: asyncio.Future[tuple[bool, Any]]) -> None:
        self.work = work
        self.outcome = outcome
        self.abandoned = threading.Event()
        """Set when its caller was cancelled: the batch skips it if it has not run yet."""


def _run_writes(connection: sqlite3.Connection, writes: list[_Write]) -> list[tuple[bool, Any]]:
    """In the connection's thread: the writes as one transaction, each in a savepoint; (done, result or error) each."""
    outcomes: list[tuple[bool, Any]] = []
    connection.execute("BEGIN IMMEDIATE")
    try:
        for write in writes:
            if write.abandoned.is_set():
                outcomes.append((False, asyncio.CancelledError()))
                continue
            connection.execute("SAVEPOINT userio_write")
            try:
                outcomes.append((True, write.work(BlockingTx(connection))))
            except Exception as error:  # its own failure: its statements are undone, the others' kept
                if not connection.in_transaction:  # SQLite rolled the whole transaction back (a full disk)
                    raise
                connection.execute("ROLLBACK TO SAVEPOINT userio_write")
                outcomes.append((False, error))
            connection.execute("RELEASE SAVEPOINT userio_write")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:  # SQLite rolls some errors back itself (a full disk)
            connection.execute("ROLLBACK")
        raise
    return outcomes


class Database:
    """The plugin's database, chosen by URL: `postgresql://...` or `sqlite:///path`."""

    def __init__(
        self,
        url: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        pool_size: int = 10,
        silent_transaction_timeout: timedelta | None = None,
    ) -> None:
        if not _SCHEMA_NAME.fullmatch(schema):
            raise ValueError(f"database_schema must be a lower-case SQL name (letters, digits, _), got {schema!r}")
        self.url = url
        self.schema = schema
        """PostgreSQL: the only schema our connections see (`search_path`), where `migrate` puts our tables."""
        self.pool_size = pool_size
        self.silent_transaction_timeout = silent_transaction_timeout
        """`UserIOConfig.db_silent_transaction_timeout`."""
        self._idle_readers: list[Any] = []
        self._inline: _InlineSQLite | None = None
        """SQLite: the connection `point_read` uses on the event loop, opened on first use."""
        self._abandoned: set[asyncio.Task[None]] = set()
        """SQLite: openings whose caller was cancelled, closing their connection once open; `close` waits for them."""
        self._writers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()
        """SQLite: this process's write transactions, one at a time per event loop (`_sqlite_writer`)."""
        self._pending_writes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[_Write]] = (
            weakref.WeakKeyDictionary()
        )
        """SQLite: `write_at_once` calls waiting for the next batch, per event loop."""
        self._batches: set[asyncio.Task[None]] = set()
        """SQLite: the batch tasks of `write_at_once` running now; `close` waits for them."""
        self._idle_writer: Any = None
        """SQLite: the connection the last write transaction gave back, for the next (`_WriterTransaction`)."""
        self._closed = False
        scheme = urlsplit(url).scheme
        self.engine: Engine[Any]
        _quiet_piccolo()
        if scheme in {"postgres", "postgresql"}:
            require("asyncpg", "postgres", "a PostgreSQL database_url")
            self.dialect: Dialect = "postgres"
            # Every connection, pooled or not (Piccolo's migration runner opens its own), sees our schema only.
            self.engine = PostgresEngine(config={"dsn": url, "server_settings": {"search_path": schema}})
        elif scheme == "sqlite":
            self.dialect = "sqlite"
            # aiosqlite logs every statement with its parameters at DEBUG, password hashes of imported records
            # included: keep its logger at INFO whatever the host's root level (SECURITY.md).
            quiet = logging.getLogger("aiosqlite")
            if quiet.level < logging.INFO:
                quiet.setLevel(logging.INFO)
            path = url.removeprefix("sqlite://").removeprefix("/") if url.startswith("sqlite:///") else ""
            if not path:
                raise ValueError(f"expected sqlite:///path, got {url!r}")
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.engine = SQLiteEngine(path=path, timeout=60)
        else:
            raise ValueError(f"unsupported database URL {url!r}: use postgresql://... or sqlite:///path")

    def bind(self) -> None:
        """Point the plugin's tables (and Piccolo's migration table) at this engine."""
        tables: tuple[type[Table], ...] = (*TABLES, Migration)
        for table in tables:
            table._meta.db = self.engine

    async def start(self) -> None:
        """Open the connection pool (PostgreSQL) or set the journal mode (SQLite); queries go through `Tx`."""
        self._closed = False
        try:
            with driver_errors():
                if isinstance(self.engine, PostgresEngine):
                    settings = {"search_path": self.schema}
                    if "application_name" not in parse_qs(urlsplit(self.url).query):
                        settings["application_name"] = _APPLICATION_NAME
                    if self.silent_transaction_timeout is not None:
                        milliseconds = max(1, int(self.silent_transaction_timeout.total_seconds() * 1000))
                        settings["idle_in_transaction_session_timeout"] = str(milliseconds)
                    await self.engine.start_connection_pool(
                        min_size=1, max_size=self.pool_size, reset=_reset_connection, server_settings=settings
                    )
                else:
                    await self.engine.run_ddl("PRAGMA journal_mode=WAL")
        except (OSError, TimeoutError) as error:  # the server refused or did not answer the connection
            raise DatabaseUnavailable() from error

    async def close(self) -> None:
        """Close the pool: connections still in use get a few seconds to come back, then are closed."""
        self._closed = True
        while self._idle_readers:
            await self._idle_readers.pop().close()
        if self._inline is not None:
            inline, self._inline = self._inline, None
            inline.close()
        if self._idle_writer is not None:
            writer, self._idle_writer = self._idle_writer, None
            await writer.close()
        await asyncio.gather(*self._batches, *self._abandoned, return_exceptions=True)
        if isinstance(self.engine, PostgresEngine) and self.engine.pool is not None:
            pool, self.engine.pool = self.engine.pool, None
            try:
                await asyncio.wait_for(pool.close(), _POOL_CLOSE_TIMEOUT)
            except TimeoutError:
                logger.warning("database connections still busy after %.0f s; closing them", _POOL_CLOSE_TIMEOUT)
                pool.terminate()

    async def ready(self) -> bool:
        """Whether the database answers a trivial query now (readiness probe)."""
        try:
            async with self.reader() as tx:
                await tx.fetch("SELECT 1")
        except Exception:  # any failure means not ready; the probe says no more than that
            return False
        return True

    async def end_silent_sessions(self) -> int:
        """End our sessions stuck in the middle of a statement whose client has been silent for the silent timeout.

        A client that stops between the messages of one statement (a frozen worker, a cut link: the rest of an
        extended-protocol request, COPY data) leaves its session "active", waiting for it:
        `idle_in_transaction_session_timeout` does not apply, nor is a statement timeout acted on while
        PostgreSQL waits for the client, and the session's locks (its chunk, the users it writes) would stop every
        other worker touching them until TCP gives up, hours later. Only terminating the session frees them. Our
        driver sends a statement's messages at once, so one waiting this long has no live client. Returns how
        many ended.
        """
        if self.silent_transaction_timeout is None or not isinstance(self.engine, PostgresEngine):
            return 0
        async with self.reader() as tx:
            rows = await tx.fetch(
                "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity"
                " WHERE application_name = current_setting('application_name') AND application_name <> ''"
                " AND datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'"
                " AND wait_event = 'ClientRead' AND state_change < now() - $1::interval",
                self.silent_transaction_timeout,
            )
        ended = sum(1 for row in rows if row["ended"])
        if ended:
            logger.warning("ended %d database session(s) whose client went silent in the middle of a statement", ended)
        return ended

    async def deployment_id(self) -> str:
        """This deployment's id: random, stored once in its own database (`userio_deployment`).

        The same for every process of the deployment, whichever starts first. Jobs carry it (`queue/arq.py`), so a
        worker sharing a queue with another deployment leaves that one's jobs to it.
        """
        async with self.transaction() as tx:
            await tx.execute(
                "INSERT INTO userio_deployment (singleton, id) VALUES ('this', $1) ON CONFLICT (singleton) DO NOTHING",
                str(uuid.uuid4()),
            )
            row = await tx.fetchrow("SELECT id FROM userio_deployment WHERE singleton = 'this'")
        assert row is not None
        return str(row["id"])

    @asynccontextmanager
    async def reader(self) -> AsyncIterator[Tx]:
        """A connection for reads outside a transaction (no write lock on SQLite).

        SQLite read connections are kept for reuse: opening one (a thread in aiosqlite) cost about 1 ms, more
        than the queries of a token issuance.
        """
        if isinstance(self.engine, SQLiteEngine):
            with driver_errors():
                connection = self._idle_readers.pop() if self._idle_readers else await self._open_sqlite()
            try:
                yield Tx(connection, self.engine)
            finally:
                # A reader still out when the database closed is closed too: an SQLite connection is a thread
                # that keeps the process from exiting until it is closed.
                if (
                    not self._closed
                    and len(self._idle_readers) < _IDLE_SQLITE_READERS
                    and not connection.in_transaction
                ):
                    self._idle_readers.append(connection)
                else:
                    await connection.close()
        else:
            async with self._pg_connection() as connection:
                yield Tx(connection, self.engine)

    async def point_read(self, read: Callable[[Tx], Awaitable[_T]]) -> _T:
        """`read(tx)` for a lookup of a few rows by an index (a refresh grant's): on SQLite, run on the event loop.

        A trip to an aiosqlite connection's thread cost about 200 us against 30 us for the lookup itself, more on a
        busy loop, where the thread waits for the GIL to hand its rows back. A WAL reader does not wait for the
        writer; one that finds the file busy all the same (a checkpoint, another process opening it) waits no
        longer than `_INLINE_BUSY_MS` and reads again on `reader`. Anything that may scan uses `reader`.
        """
        if not isinstance(self.engine, SQLiteEngine) or self._closed:
            async with self.reader() as tx:
                return await read(tx)
        try:
            with driver_errors():
                if self._inline is None:
                    self._inline = self._open_inline()
            return await read(Tx(self._inline, self.engine))
        except DatabaseUnavailable:
            async with self.reader() as tx:
                return await read(tx)

    def _open_inline(self) -> _InlineSQLite:
        """SQLite: the connection `point_read` uses, set up as Piccolo sets up its own (rows as dicts)."""
        assert isinstance(self.engine, SQLiteEngine)
        kwargs = {**self.engine.connection_kwargs, "timeout": _INLINE_BUSY_MS / 1000, "check_same_thread": False}
        connection = sqlite3.connect(**kwargs)
        connection.row_factory = dict_factory
        return _InlineSQLite(connection)

    @asynccontextmanager
    async def snapshot(self) -> AsyncIterator[Tx]:
        """A read-only transaction that sees one consistent state of the database however long it runs.

        PostgreSQL: REPEATABLE READ. SQLite in WAL mode: a read transaction keeps its snapshot until it ends.
        """
        if isinstance(self.engine, SQLiteEngine):
            with driver_errors():
                connection = await self._open_sqlite()
            try:
                with driver_errors():
                    await connection.execute("BEGIN DEFERRED")
                yield Tx(connection, self.engine)
            finally:
                try:
                    with driver_errors():
                        await connection.execute("ROLLBACK")
                finally:  # a ROLLBACK cancelled or refused must not leave the connection's thread running
                    await connection.close()
        else:
            async with self._pg_connection() as connection:
                with driver_errors():
                    async with connection.transaction(isolation="repeatable_read", readonly=True):
                        if self.silent_transaction_timeout is not None:  # it waits on storage between pages
                            await connection.execute("SET LOCAL idle_in_transaction_session_timeout = 0")
                        yield Tx(connection, self.engine)

    @asynccontextmanager
    async def transaction(self, *, lock_timeout: timedelta | None = None) -> AsyncIterator[Tx]:
        """A write transaction. On SQLite it takes the write lock at once (BEGIN IMMEDIATE).

        `lock_timeout`: on PostgreSQL a statement that waits longer than this for a row lock fails with
        `WriteConflict` instead of waiting on (housekeeping that can try again on its next round).
        """
        if isinstance(self.engine, SQLiteEngine):
            async with self._sqlite_writer():
                # Piccolo's transaction, so that Piccolo's own queries inside it (the migrations) run in it.
                transaction = _WriterTransaction(self)
                try:
                    with driver_errors():
                        async with transaction as txn:
                            yield Tx(txn.connection, self.engine)
                finally:
                    # Piccolo closes its connection only when BEGIN, and COMMIT or ROLLBACK, went through: cancelled
                    # or failed in one of them (a job cancelled while it waited for the write lock), the connection,
                    # a non-daemon thread, stayed open for good and kept the process from exiting.
                    connection = getattr(transaction, "connection", None)
                    if connection is not None:
                        await connection.close()
        else:
            # Not Piccolo's transaction: when the server drops the connection its rollback raises before the
            # connection goes back to the pool, and the pool then waits forever on close. asyncpg's own
            # release copes with a broken connection.
            async with self._pg_connection() as connection:
                with driver_errors():
                    async with connection.transaction():
                        if lock_timeout is not None:
                            milliseconds = max(1, int(lock_timeout.total_seconds() * 1000))
                            await connection.execute(f"SET LOCAL lock_timeout = {milliseconds}")
                        yield Tx(connection, self.engine)

    async def write_at_once(self, work: Callable[[BlockingTx], _T]) -> _T:
        """SQLite: run `work` as a write transaction in the writer connection's thread; what `work` returns.

        `transaction()` goes to the connection's thread and back for each statement and for BEGIN and COMMIT, and
        holds the process's one writer turn (`_sqlite_writer`) over all those trips: under concurrent requests
        each trip also waits for the busy event loop, and every other write waits for it. Here the turn lasts one
        trip, and the calls waiting for it meanwhile share the next one: one BEGIN IMMEDIATE, each call's `work`
        in a savepoint of its own, one COMMIT (one sync of the WAL to disk for them all; each call returns once
        its work is durable, as after its own COMMIT). `work` must not block on anything but the database; an
        error in it undoes only its own statements; a caller cancelled before its `work` ran writes nothing.
        Inside an open transaction, `work` joins it (no BEGIN or COMMIT of its own).
        """
        assert isinstance(self.engine, SQLiteEngine), "write_at_once is for SQLite"
        enclosing = self.engine.current_transaction.get()
        if enclosing is not None:
            with driver_errors():
                joined: _T = await enclosing.connection._execute(lambda: work(BlockingTx(enclosing.connection._conn)))
            return joined
        loop = asyncio.get_running_loop()
        pending = self._pending_writes.setdefault(loop, [])
        write = _Write(work, loop.create_future())
        pending.append(write)
        if len(pending) == 1:  # the first since the last batch left: it starts the next
            batch = asyncio.ensure_future(self._write_batch(loop))
            self._batches.add(batch)
            batch.add_done_callback(self._batches.discard)
        try:
            done, outcome = await asyncio.shield(write.outcome)
        except asyncio.CancelledError:
            write.abandoned.set()
            raise
        if not done:
            with driver_errors():
                raise outcome
        result: _T = outcome
        return result

    async def _write_batch(self, loop: asyncio.AbstractEventLoop) -> None:
        """SQLite: in the writer's turn, the `write_at_once` calls waiting by then, as one transaction."""
        writes: list[_Write] = []
        try:
            async with self._sqlite_writer():
                writes = self._pending_writes.pop(loop, [])
                connection = await self._writer_connection()
                try:
                    # aiosqlite's own call of a function in the connection's thread (its `execute` is one too).
                    outcomes = await connection._execute(_run_writes, connection._conn, writes)
                except BaseException:
                    # BEGIN, COMMIT or ROLLBACK failed, or the batch was cancelled: the connection is not kept.
                    await connection.close()
                    raise
                await self._give_back_writer(connection)
        except BaseException as error:  # no writer turn (DatabaseUnavailable), or the transaction failed: all fail
            for write in writes or self._pending_writes.pop(loop, []):
                if not write.outcome.done():
                    write.outcome.set_result((False, error))
            if not isinstance(error, Exception):
                raise
            return
        for write, outcome in zip(writes, outcomes, strict=True):
            if not write.outcome.done():
                write.outcome.set_result(outcome)

    async def _writer_connection(self) -> Any:
        """SQLite: the connection kept for write transactions, or a new one."""
        assert isinstance(self.engine, SQLiteEngine)
        writer, self._idle_writer = self._idle_writer, None
        if writer is not None:
            return writer
        with driver_errors():
            return await self._open_sqlite()

    async def _open_sqlite(self) -> Any:
        """SQLite: a new connection, which is a non-daemon thread in aiosqlite: none may outlive `close`.

        Piccolo opens it in two steps (connect, then `PRAGMA foreign_keys`); a task cancelled between them (a job
        stopped at shutdown) dropped a connection whose thread kept the process from exiting. The opening is
        shielded, and closed once done if its caller went away; `close` waits for those. (Closing the connections
        still in use at `close` instead stranded their users: a test hung on it.)
        """
        assert isinstance(self.engine, SQLiteEngine)
        opening = asyncio.ensure_future(self.engine.get_connection())
        try:
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            closing = asyncio.ensure_future(self._close_when_open(opening))
            self._abandoned.add(closing)
            closing.add_done_callback(self._abandoned.discard)
            raise

    @staticmethod
    async def _close_when_open(opening: asyncio.Future[Any]) -> None:
        with suppress(Exception):  # an opening that failed left no connection
            await (await opening).close()

    async def _give_back_writer(self, connection: Any) -> None:
        """Keep a write transaction's connection for the next one; one is kept, and none once closed."""
        if self._closed or self._idle_writer is not None or connection.in_transaction:
            await connection.close()
        else:
            self._idle_writer = connection

    @asynccontextmanager
    async def _sqlite_writer(self) -> AsyncIterator[None]:
        """SQLite: wait for this process's other write transactions here, in turn, before BEGIN IMMEDIATE.

        SQLite has one writer. Left to SQLite, a BEGIN IMMEDIATE that finds the write lock taken sleeps and
        retries (its busy handler: 1, 2, 5, 10, 15, 20, 25, 50, 100 ms...), so under concurrent writes the lock
        stood free most of the time while the waiters slept: 8 concurrent refresh grants made 19 a second. Waiting
        in this queue instead, each starts as soon as the previous one commits; another process's writer is still
        waited for by SQLite's busy timeout. A transaction opened inside another (Piccolo joins it to the outer
        one) does not queue; waiting longer than the busy timeout is `DatabaseUnavailable`, as SQLite's own
        "database is locked" is.
        """
        assert isinstance(self.engine, SQLiteEngine)
        if self.engine.current_transaction.get() is not None:  # joins the enclosing transaction
            yield
            return
        loop = asyncio.get_running_loop()
        writer = self._writers.get(loop)
        if writer is None:
            writer = self._writers[loop] = asyncio.Lock()
        try:
            async with asyncio.timeout(self.engine.connection_kwargs.get("timeout", 5.0)):
                await writer.acquire()
        except TimeoutError:
            raise DatabaseUnavailable() from None
        try:
            yield
        finally:
            writer.release()

    @asynccontextmanager
    async def _pg_connection(self) -> AsyncIterator[Any]:
        """A pooled PostgreSQL connection; a server that cannot be reached is `DatabaseUnavailable`."""
        assert isinstance(self.engine, PostgresEngine)
        pool = self.engine.pool
        if pool is None:
            raise DatabaseUnavailable()
        try:
            with driver_errors():
                connection = await pool.acquire()
        except (OSError, TimeoutError) as error:  # refused or unanswered while opening a connection
            raise DatabaseUnavailable() from error
        try:
            yield connection
        finally:
            await pool.release(connection)
