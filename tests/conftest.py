"""Test harness: real PostgreSQL, SQLite, Redis (arq) and the in-process runner; no mocks.

`env` is parametrized over the two deployments: the embedded default (SQLite + in-process runner) and
production (PostgreSQL + arq workers on Redis). `env_all` adds the two mixed pairs for the core paths.
`make test` runs a test on each only where it is marked `engine`; `tests/tiers.py` says which tier runs what.
With USERIO_REQUIRE_SERVICES=1 (CI) a missing PostgreSQL or Redis fails the tests instead of skipping them.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import os
import sys
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg
import httpx
import pytest
import redis.asyncio as aioredis
from litestar import Litestar
from litestar.logging.config import LoggingConfig

from litestar_userio import (
    ExportConfig,
    HookConfig,
    ImportConfig,
    LocalStorageConfig,
    QueueConfig,
    UserIOConfig,
    UserIOPlugin,
)
from litestar_userio.db.engine import Database
from litestar_userio.db.migrate import migrate
from litestar_userio.errors import DatabaseUnavailable
from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.services import Services
from litestar_userio.web.providers import SERVICES_STATE_KEY
from litestar_userio.worker import build_worker
from tests import tiers
from tests.tiers import pytest_terminal_summary, pytest_testnodedown  # noqa: F401 (pytest finds hooks here)
from userio_core.admin_keys import KeyPair, generate_key_pair, sign_admin_token
from userio_core.clock import FrozenClock

_WITHOUT_ADVANCED_ALCHEMY = Path(__file__).resolve().parent / "without_advanced_alchemy"
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_WITHOUT_ADVANCED_ALCHEMY), os.environ.get("PYTHONPATH")]))
"""The processes the tests start import Litestar without advanced-alchemy, as a user's install does (see there)."""

PG_SERVER = os.environ.get("USERIO_TEST_PG", "postgresql://root@127.0.0.1:5432")
REDIS_URL = os.environ.get("USERIO_TEST_REDIS", "redis://127.0.0.1:6379/0")
REQUIRE_SERVICES = os.environ.get("USERIO_REQUIRE_SERVICES") == "1"

# Litestar's default logging hands records to a listener thread that lives until the process exits: one per app,
# and the suite builds thousands. The same loggers with a plain handler keep none.
TEST_LOGGING = LoggingConfig(handlers={"queue_listener": {"class": "logging.StreamHandler", "formatter": "standard"}})

# Generating RSA keys costs ~50 ms; projects reuse a few.
_KEYS: list[KeyPair] = []


def admin_key() -> KeyPair:
    if len(_KEYS) < 3:
        _KEYS.append(generate_key_pair())
    return _KEYS[len(_KEYS) - 1]


def _unavailable(what: str, error: BaseException) -> None:
    message = f"{what} is not reachable: {error}"
    if REQUIRE_SERVICES:
        pytest.fail(message)
    pytest.skip(message)


async def _migrated(url: str) -> None:
    """Bring the database at `url` to the newest schema."""
    db = Database(url)
    await db.start()
    await migrate(db)
    await db.close()


@asynccontextmanager
async def own_postgres_database(prefix: str = "userio_test") -> AsyncIterator[str]:
    """A fresh, migrated PostgreSQL database, dropped at the end."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    try:
        admin = await asyncpg.connect(f"{PG_SERVER}/postgres", timeout=30)
    except (OSError, asyncpg.PostgresError) as exc:
        _unavailable("PostgreSQL", exc)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
        url = f"{PG_SERVER}/{name}"
        await _migrated(url)
        yield url
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()


@pytest.fixture(scope="session")
async def postgres_url() -> AsyncIterator[str]:
    """A fresh, migrated PostgreSQL database for the session's tests.

    Only what a test starts and stops itself may use it: a process that outlived its test, with its own clock,
    would sweep every later test's work (see `tests/client/conftest.py`'s deployments).
    """
    async with own_postgres_database() as url:
        yield url


@pytest.fixture(scope="session")
async def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A migrated SQLite file for the session."""
    url = f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'userio.sqlite3'}"
    await _migrated(url)
    return url


@pytest.fixture(scope="session")
async def redis_url() -> str:
    client = aioredis.from_url(REDIS_URL)
    try:
        await client.ping()
    except (OSError, aioredis.RedisError) as exc:
        _unavailable("Redis", exc)
    finally:
        await client.aclose()
    return REDIS_URL


@dataclass
class Project:
    """A project made for one test, with a way to call the admin API as it."""

    id: str
    host: str
    key: KeyPair
    env: Env

    def token(self, **kwargs: Any) -> str:
        return sign_admin_token(self.key.private_pem, self.id, clock=self.env.clock, **kwargs)

    def headers(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.token()}", "Host": self.host}

    async def post(self, path: str, body: Any, **kwargs: Any) -> httpx.Response:
        headers = {**self.headers(), **kwargs.pop("headers", {})}
        return await self.env.client.post(path, json=body, headers=headers, **kwargs)

    async def get(self, path: str, **kwargs: Any) -> httpx.Response:
        headers = {**self.headers(), **kwargs.pop("headers", {})}
        return await self.env.client.get(path, headers=headers, **kwargs)

    async def fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        async with self.env.services.db.reader() as tx:
            return await tx.fetch(sql, *args)


@dataclass
class Env:
    """One deployment under test: app, services, HTTP client, job runner."""

    name: str
    config: UserIOConfig
    app: Litestar
    services: Services
    client: httpx.AsyncClient
    clock: FrozenClock
    projects: list[Project] = field(default_factory=list)

    @property
    def uses_arq(self) -> bool:
        return self.config.queue.redis_url is not None

    @property
    def in_process_queue(self) -> Any:
        """The in-process runner's own controls (pause, join), for deployments without Redis."""
        return self.services.queue

    def hold_jobs(self) -> None:
        """Keep enqueued jobs from running until `drain` (arq jobs only run in `drain` anyway)."""
        if not self.uses_arq:
            self.in_process_queue.pause()

    async def drain(self, workers: int = 1, **worker_options: Any) -> None:
        """Run every queued job to completion: `workers` arq burst workers at once, or the in-process runner."""
        if not self.uses_arq:
            await self.in_process_queue.join()
            return
        options = {"burst": True, "poll_delay": 0, "handle_signals": False, **worker_options}
        running = [build_worker(self.config, **options) for _ in range(workers)]
        try:
            await asyncio.gather(*(worker.async_run() for worker in running))
        finally:
            for worker in running:
                await worker.close()

    async def forget_unfinished_work(self) -> None:
        """Delete the pending import chunks and exports of this test's projects, at its end.

        The tests of a session share one database, and every sweep and every in-process runner's start adopts the
        pending work of every project, as it should in production. A chunk a test left pending (posted, never
        drained) was run by a later test's jobs 3 minutes on, into that test's counters: in a parallel run,
        `test_metrics` counted 3 records inserted by an import of 2.
        """
        ids = [project.id for project in self.projects]
        if not ids:
            return
        # A test that took its database down left nothing anyone can run.
        with contextlib.suppress(DatabaseUnavailable):
            async with self.services.db.transaction() as tx:
                mine = tx.any("project_id", 1)
                await tx.execute(
                    f"DELETE FROM userio_import_chunk WHERE status = 'pending'"
                    f" AND task_id IN (SELECT id FROM userio_import_task WHERE {mine})",
                    tx.array(ids),
                )
                await tx.execute(f"DELETE FROM userio_export_task WHERE status = 'pending' AND {mine}", tx.array(ids))
                # Their change log too: another test's app (its events consumer polls every project) would emit
                # this test's changes into its own listeners.
                await tx.execute(f"DELETE FROM userio_change WHERE {mine}", tx.array(ids))

    async def make_project(self, settings: ProjectSettings | None = None, roles: tuple[str, ...] = ()) -> Project:
        project_id = f"p{uuid.uuid4().hex[:12]}"
        host = f"{project_id}.example.test"
        key = admin_key()
        await self.services.projects.create(project_id, [host], settings)
        await self.services.projects.add_admin_key(project_id, key.kid, key.public_pem)
        if roles:
            await self.services.projects.add_keys(project_id, "userio_role", roles)
        project = Project(project_id, host, key, self)
        self.projects.append(project)
        return project


BACKENDS = {
    "sqlite-inprocess": ("sqlite_url", False),
    "postgres-arq": ("postgres_url", True),
    "postgres-inprocess": ("postgres_url", False),
    "sqlite-arq": ("sqlite_url", True),
}
DEPLOYMENTS = ["sqlite-inprocess", "postgres-arq"]


@dataclass
class Backend:
    name: str
    database_url: str
    redis_url: str | None


def _backend(request: pytest.FixtureRequest) -> Backend:
    database_fixture, uses_arq = BACKENDS[request.param]
    database_url = request.getfixturevalue(database_fixture)
    redis = request.getfixturevalue("redis_url") if uses_arq else None
    return Backend(request.param, database_url, redis)


@pytest.fixture(params=DEPLOYMENTS)
def backend(request: pytest.FixtureRequest) -> Backend:
    """The embedded default and the production deployment."""
    return _backend(request)


@pytest.fixture(params=list(BACKENDS))
def backend_all(request: pytest.FixtureRequest) -> Backend:
    """Both databases with both runners."""
    return _backend(request)


class AppLifespan:
    """The app's own lifespan (the plugin's start-up and shut-down among its parts), run in a task of its own as a
    server runs it: Litestar's event emitter holds an anyio task group, which must be left by the task that entered
    it, and a fixture's set-up and tear-down run in different tasks."""

    def __init__(self, app: Litestar) -> None:
        self.app = app
        self._started = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        async with self.app.lifespan():
            self._started.set()
            await self._stopping.wait()

    async def start(self) -> None:
        """Return once every start-up step has run; a step that fails raises here."""
        self._task = asyncio.create_task(self._run(), name="test:lifespan")
        started = asyncio.create_task(self._started.wait())
        await asyncio.wait({self._task, started}, return_when=asyncio.FIRST_COMPLETED)
        started.cancel()
        if self._task.done():
            self._task.result()

    async def stop(self) -> None:
        """Run the shut-down steps; one that fails raises here."""
        if self._task is not None:
            self._stopping.set()
            await self._task


class ReboundPlugin(UserIOPlugin):
    """The plugin, whose configuration a later test replaces before the app's lifespan starts again."""

    def bind(self, config: UserIOConfig) -> None:
        self._config = config


@dataclass
class _BuiltApp:
    shape: tuple[UserIOConfig, list[Any], list[Any]]
    app: Litestar
    plugin: ReboundPlugin


class AppPool:
    """Apps built once per route shape and handed to one test at a time.

    Building the app (Litestar registering the plugin's ~75 handlers) cost ~150 ms, more than most tests; a test's
    own configuration differs from another's only in what the plugin reads when its lifespan starts (the queue's
    name, the clock, the export folder), so an app whose configuration is equal in everything else is reused: the
    test binds its configuration, then runs the app's lifespan, which starts its own services. The host's route
    handlers and listeners a test adds are part of the shape.
    """

    _SHAPE_CLOCK = FrozenClock()

    def __init__(self, size: int = 12) -> None:
        self._idle: list[_BuiltApp] = []
        self._size = size

    @classmethod
    def _config_shape(cls, config: UserIOConfig) -> UserIOConfig:
        """The configuration without what only the lifespan reads."""
        storage = config.exports.storage
        if isinstance(storage, LocalStorageConfig):
            storage = replace(storage, directory=Path("shape"))
        return replace(
            config,
            clock=cls._SHAPE_CLOCK,
            queue=replace(config.queue, queue_name="shape"),
            exports=replace(config.exports, storage=storage),
        )

    def take(self, config: UserIOConfig, route_handlers: list[Any], listeners: list[Any]) -> _BuiltApp:
        shape = (self._config_shape(config), route_handlers, listeners)
        for built in self._idle:
            if built.shape == shape:
                self._idle.remove(built)
                built.plugin.bind(config)
                return built
        plugin = ReboundPlugin(config)
        app = Litestar(route_handlers, listeners=listeners, plugins=[plugin], logging_config=TEST_LOGGING)
        return _BuiltApp(shape, app, plugin)

    def give_back(self, built: _BuiltApp) -> None:
        self._idle.insert(0, built)
        del self._idle[self._size :]


_APPS = AppPool()


@pytest.fixture
async def make_env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    """Factory: `await make_env(backend, **UserIOConfig overrides)`; closed at the end of the test."""
    closing = AsyncExitStack()  # each client, then its app's lifespan; every one even if another fails

    async def factory(backend: Backend, **overrides: Any) -> Env:
        route_handlers = overrides.pop("route_handlers", [])
        listeners = overrides.pop("listeners", [])
        clock = overrides.pop("clock", None) or FrozenClock()
        queue_overrides = overrides.pop("queue", {})
        if "hooks" in overrides:
            overrides["hooks"] = HookConfig(**overrides["hooks"])
        if "imports" in overrides:
            overrides["imports"] = ImportConfig(**overrides["imports"])
        exports = overrides.pop("exports", {})
        if "storage" not in exports:
            exports["storage"] = LocalStorageConfig(directory=tmp_path_factory.mktemp("exports"))
        overrides["exports"] = ExportConfig(**exports)
        queue = QueueConfig(
            **{"redis_url": backend.redis_url, "queue_name": f"userio:test:{uuid.uuid4().hex[:8]}", **queue_overrides}
        )
        config = UserIOConfig(database_url=backend.database_url, queue=queue, clock=clock, **overrides)
        built = _APPS.take(config, route_handlers, listeners)
        app = built.app
        closing.callback(_APPS.give_back, built)
        lifespan = AppLifespan(app)
        await lifespan.start()
        closing.push_async_callback(lifespan.stop)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="https://testserver")
        closing.push_async_callback(client.aclose)
        env = Env(backend.name, config, app, app.state[SERVICES_STATE_KEY], client, clock)
        closing.push_async_callback(env.forget_unfinished_work)
        return env

    async with closing:
        yield factory


@pytest.fixture
async def env(backend: Backend, make_env: Any) -> Env:
    """The plugin on one deployment, with default settings."""
    return await make_env(backend)


@pytest.fixture
async def env_all(backend_all: Backend, make_env: Any) -> Env:
    """The plugin on each database with each runner."""
    return await make_env(backend_all)


@pytest.fixture
async def project(env: Env) -> Project:
    """A fresh project on `env`."""
    return await env.make_project()


def wait(coro: Any, timeout: float = 30) -> Any:
    return asyncio.wait_for(coro, timeout)


_THREAD_ORIGIN: dict[threading.Thread, str] = {}
"""The test during which each SQLite connection thread started, for the report below."""


def sqlite_connection_threads() -> list[threading.Thread]:
    """aiosqlite's connection threads still running (non-daemon: each keeps the process from exiting)."""
    return [
        thread
        for thread in threading.enumerate()
        if thread.is_alive()
        and not thread.daemon
        and "aiosqlite" in getattr(getattr(thread, "_target", None), "__module__", "")
    ]


def pytest_runtest_logfinish(nodeid: str) -> None:
    for thread in sqlite_connection_threads():
        _THREAD_ORIGIN.setdefault(thread, nodeid)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Schemathesis' items get ids of their own, then the tier picks its tests (`tests/tiers.py`); last, so that
    the tier counts only what `-m` left."""
    _give_each_item_its_own_node_id(items)
    tiers.select(config, items)


def _give_each_item_its_own_node_id(items: list[pytest.Item]) -> None:
    """Schemathesis (4.32 on pytest 9.2) names its items `test[GET /path]` but gives them all the test function's
    node id. pytest-xdist schedules by node id, so in a parallel run only the first of the 28 operations ran (2 590
    results where the serial run has 2 617). Each such item gets its name as its id, as a parametrized item has;
    pytest has no public way to set an id, hence its private attribute (`_id` from 9.2, `_nodeid` before)."""
    seen = collections.Counter(item.nodeid for item in items)
    for item in items:
        if seen[item.nodeid] > 1 and item.parent is not None:
            if hasattr(item, "_id"):
                item._id = item.parent.id.child(item.name)
            else:
                item._nodeid = f"{item.parent.nodeid}::{item.name}"
    repeated = sorted(nodeid for nodeid, n in collections.Counter(item.nodeid for item in items).items() if n > 1)
    if repeated:
        raise pytest.UsageError(f"tests share a node id, so a parallel run would run only one: {repeated[:3]}")


_ROOT = Path(__file__).resolve().parents[1]
_TOOL_CACHES = frozenset({".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache", "__pycache__"})
"""Caches of tools, no test's state: `__pycache__` is `hatch_build.py`'s bytecode, written when the packaging tests
build the wheels from this tree (git ignores it)."""
_ROOT_BEFORE: set[str] = set()
"""What the repository's top folder held when the session started."""


def pytest_sessionstart(session: pytest.Session) -> None:
    _ROOT_BEFORE.update(entry.name for entry in _ROOT.iterdir())


def pytest_sessionfinish(session: pytest.Session) -> None:
    _fail_on_files_left_in_the_repository(session)
    _fail_on_sqlite_threads_left(session)


def _fail_on_files_left_in_the_repository(session: pytest.Session) -> None:
    """A test that writes into the working directory (a default `userio-exports/`, the example app's `.userio/`)
    leaves state behind that the next run, or the developer's own demo, picks up: each test keeps its files under
    `tmp_path`."""
    new = sorted({entry.name for entry in _ROOT.iterdir()} - _ROOT_BEFORE - _TOOL_CACHES)
    if new:
        sys.stderr.write(f"\nthe tests left files in the repository's top folder: {', '.join(new)}\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _fail_on_sqlite_threads_left(session: pytest.Session) -> None:
    """An SQLite connection nobody closed is a non-daemon thread that keeps pytest from exiting: CI would hang
    until its timeout with every test passed. Name each one, with what still holds it, and fail the run instead."""
    left = sqlite_connection_threads()
    if not left:
        return
    report = [f"{len(left)} SQLite connection thread(s) still running after the tests:"]
    connections = [o for o in gc.get_objects() if isinstance(o, aiosqlite.Connection) and o._running]
    for connection in connections:
        report.append(f"  open connection {id(connection):#x}, held by: {_holders(connection, connections)}")
        connection.stop()  # lets the process exit once this report is out
    # Thread names only: `sys._current_frames()` here deadlocked CPython 3.11 (a collection during it freed a
    # thread-local that waits on the lock it holds).
    report.extend(
        f"  {thread.name}, started during {_THREAD_ORIGIN.get(thread, 'the session set-up')}" for thread in left
    )
    sys.stderr.write("\n".join(report) + "\n")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _holders(value: object, ignore: object, depth: int = 2) -> list[str]:
    """What refers to `value`, and what refers to those (types and, for functions and frames, names)."""
    found = []
    for holder in gc.get_referrers(value):
        if holder is ignore:
            continue
        name = getattr(holder, "f_code", None) or getattr(holder, "__qualname__", None)
        label = f"{type(holder).__qualname__}{f' {name}' if name else ''}"
        if depth > 1 and isinstance(holder, dict | list | tuple):
            label += f" <- {_holders(holder, ignore, depth - 1)}"
        found.append(label)
    return found[:8]
