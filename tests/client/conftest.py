"""Live example apps for the `userio` client: real processes, real HTTPS, both deployments.

`deployment` starts `python -m example_app` once per session for each deployment: the embedded default
(SQLite file in a temporary USERIO_HOME, in-process jobs) and production (PostgreSQL + Redis with two
`litestar userio worker` processes on their own queue). Each test makes its own project (own domain, own
admin key in USERIO_HOME) and drives the CLI as a user does: `userio ...` (the `cli` extra's console script).

Export download URLs point at a small HTTP proxy on another host name (127.0.0.1, plain HTTP, like a local S3)
that records what it receives and can refuse or corrupt a download on request.
"""

from __future__ import annotations

import asyncio
import collections
import http.server
import json
import os
import random
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import uuid
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from litestar_userio.db.engine import Database
from litestar_userio.projects.project_service import ProjectService
from litestar_userio.projects.settings import ProjectSettings
from tests.click_runner import run_click
from tests.conftest import admin_key, own_postgres_database
from tests.helpers import HASH_2B
from userio_core.clock import SystemClock

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
USERIO = str(Path(sys.executable).parent / "userio")
"""The `userio` console script, as `pip install litestar-userio-client` (or the server's `cli` extra) installs it."""
ROLES = ("admin", "editor", "viewer")
GROUPS = ("staff", "customers")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class DownloadProxy:
    """A storage host stand-in: forwards GETs to the app's download route, records the headers it got.

    `actions` is a queue of what to do with the next downloads: "refuse" (403, as an expired URL), "corrupt"
    (flip the last byte) or "stall" (send half the body, set `stalled`, wait for `resume` before the rest).
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.upstream = ""
        self.cert: Path | None = None
        self.seen: list[dict[str, str]] = []
        self.actions: collections.deque[str] = collections.deque()
        self.stalled = threading.Event()
        self.resume = threading.Event()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                proxy.seen.append({k.lower(): v for k, v in self.headers.items()})
                action = proxy.actions.popleft() if proxy.actions else "pass"
                if action == "refuse":
                    body = b'{"error":{"name":"Forbidden","reason":"Forbidden","message":"expired","code":403}}'
                    self.send_response(403)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                context = ssl.create_default_context(cafile=str(proxy.cert))
                upstream = httpx.get(proxy.upstream + self.path, verify=context, timeout=60)
                body = upstream.content
                if action == "corrupt" and body:
                    body = body[:-1] + bytes([body[-1] ^ 1])
                self.send_response(upstream.status_code)
                self.send_header("Content-Type", upstream.headers.get("content-type", "application/octet-stream"))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if action == "stall":
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    proxy.stalled.set()
                    proxy.resume.wait(60)
                    body = body[len(body) // 2 :]
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@dataclass
class CLIResult:
    returncode: int
    stdout: str
    stderr: str
    elapsed: float


@dataclass
class Project:
    id: str
    host: str

    def args(self, deployment: Deployment) -> list[str]:
        return ["--url", deployment.url, "--project", self.id, "--host", self.host]


@dataclass
class Deployment:
    """A running example app (and its workers) plus a database connection for setting up and checking."""

    name: str
    url: str
    home: Path
    env: dict[str, str]
    db: Database
    proxy: DownloadProxy
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def cacert(self) -> Path:
        return self.home / "tls" / "localhost.crt"

    async def make_project(self, settings: ProjectSettings | None = None) -> Project:
        """A fresh project with its own domain, the demo's roles and groups, and an admin key in USERIO_HOME."""
        project_id = f"m{uuid.uuid4().hex[:10]}"
        host = f"{project_id}.test"
        key = admin_key()
        projects = ProjectService(self.db, SystemClock())
        await projects.create(project_id, [host], settings)
        await projects.add_admin_key(project_id, key.kid, key.public_pem)
        await projects.add_keys(project_id, "userio_role", ROLES)
        await projects.add_keys(project_id, "userio_group", GROUPS)
        path = self.home / f"{project_id}-admin-key.pem"
        path.write_text(key.private_pem)
        path.chmod(0o600)
        return Project(project_id, host)

    async def user_count(self, project: Project) -> int:
        async with self.db.reader() as tx:
            rows = await tx.fetch("SELECT COUNT(*) AS n FROM userio_user WHERE project_id = $1", project.id)
        return int(rows[0]["n"])

    async def fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        async with self.db.reader() as tx:
            return await tx.fetch(sql, *args)

    def command(self, *args: str) -> list[str]:
        return [USERIO, *args]

    def cli(
        self,
        *args: str,
        cwd: Path,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 240,
        process: bool = False,
    ) -> CLIResult:
        """Runs `userio ARGS` in this process through click's runner, or as a real process with `process=True`.

        A real process costs seconds to start on a busy machine; keep it for what only a process shows (the
        console script itself, environment read at start, signals, terminals).
        """
        environment = {**self.env, **(env or {})}
        started = time.monotonic()
        if process:
            result = subprocess.run(
                self.command(*args), cwd=cwd, env=environment, input=stdin, capture_output=True, timeout=timeout
            )
            return CLIResult(
                result.returncode, result.stdout.decode(), result.stderr.decode(), time.monotonic() - started
            )
        from userio_client.main import main

        ran = run_click(main, args, environment, cwd=cwd, prog_name="userio", timeout=timeout, stdin=stdin)
        return CLIResult(ran.returncode, ran.stdout, ran.stderr, time.monotonic() - started)

    def popen(self, *args: str, cwd: Path, log: Path) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.command(*args), cwd=cwd, env=self.env, stdout=log.open("wb"), stderr=subprocess.STDOUT
        )


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def _wait_until_up(url: str, cert: Path, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the example app exited: {log.read_text()[-2000:]}")
        if cert.exists():
            try:
                async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(cert))) as client:
                    if (await client.get(url + "/")).status_code == 200:
                        return
            except (httpx.HTTPError, OSError, ssl.SSLError):
                pass
        await asyncio.sleep(0.2)
    raise RuntimeError(f"the example app did not start: {log.read_text()[-2000:]}")


async def start_deployment(
    name: str,
    home: Path,
    database_url: str | None,
    redis_url: str | None,
    workers: int = 2,
    download_base_url: bool = True,
) -> Deployment:
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    proxy = DownloadProxy()
    url = f"https://localhost:{port}"
    env = {
        **os.environ,
        "USERIO_HOME": str(home),
        "USERIO_DATABASE_URL": database_url or "",
        "USERIO_REDIS_URL": redis_url or "",
        "USERIO_QUEUE_NAME": f"userio:migration:{uuid.uuid4().hex[:8]}",
        "USERIO_DOWNLOAD_BASE_URL": proxy.url if download_base_url else "",
        "PORT": str(port),
        "LOG_LEVEL": "warning",
        "PYTHONUNBUFFERED": "1",
    }
    log = home / "server.log"
    server = subprocess.Popen(
        [sys.executable, "-m", "example_app"], cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )
    processes = [server]
    try:
        await _wait_until_up(url, home / "tls" / "localhost.crt", server, log)
        if redis_url:
            for i in range(workers):
                worker_log = (home / f"worker-{i}.log").open("wb")
                processes.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "litestar", "--app", "example_app.app:app", "userio", "worker"],
                        cwd=ROOT,
                        env=env,
                        stdout=worker_log,
                        stderr=subprocess.STDOUT,
                    )
                )
    except BaseException:
        _stop(processes)
        proxy.close()
        raise
    proxy.upstream = url
    proxy.cert = home / "tls" / "localhost.crt"
    db = Database(database_url or f"sqlite:///{(home / 'userio.sqlite3').resolve()}")
    await db.start()
    return Deployment(name, url, home, env, db, proxy, processes)


DEPLOYMENTS = ["sqlite-inprocess", "postgres-arq"]


async def _session_deployment(name: str, home: Path, database_url: str | None, redis_url: str | None):
    running = await start_deployment(name, home, database_url, redis_url)
    try:
        yield running
    finally:
        _stop(running.processes)
        running.proxy.close()
        await running.db.close()


@pytest.fixture(scope="session")
async def sqlite_deployment(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Deployment]:
    """The embedded default: SQLite file in USERIO_HOME, jobs in the web process."""
    async for running in _session_deployment("sqlite-inprocess", tmp_path_factory.mktemp("home-sqlite"), None, None):
        yield running


@pytest.fixture(scope="session")
async def postgres_deployment(
    tmp_path_factory: pytest.TempPathFactory, postgres_url: str, redis_url: str
) -> AsyncIterator[Deployment]:
    """Production: PostgreSQL, arq on Redis with two worker processes (stopped before the database goes).

    It has a database of its own (`postgres_url` is asked for to skip or fail as every PostgreSQL test does): its
    workers live until the session ends and sweep with the real clock, so on the
    tests' shared database they purged the finished work of later tests whose frozen clocks are months back (their
    task answered 404, their file was gone) and took over the pending work of others.
    """
    home = tmp_path_factory.mktemp("home-postgres")
    async with own_postgres_database("userio_deployment") as database_url:
        async for running in _session_deployment("postgres-arq", home, database_url, redis_url):
            yield running


@pytest.fixture(scope="session")
async def direct_deployment(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Deployment]:
    """The embedded default with no public base URL configured: download URLs come from the request."""
    home = tmp_path_factory.mktemp("home-direct")
    running = await start_deployment("sqlite-direct", home, None, None, download_base_url=False)
    try:
        yield running
    finally:
        _stop(running.processes)
        running.proxy.close()
        await running.db.close()


@pytest.fixture(params=DEPLOYMENTS)
def deployment(request: pytest.FixtureRequest) -> Deployment:
    """The example app on each deployment (each started once per session)."""
    fixture = "postgres_deployment" if request.param == "postgres-arq" else "sqlite_deployment"
    running: Deployment = request.getfixturevalue(fixture)
    return running


@pytest.fixture
def embedded(sqlite_deployment: Deployment) -> Deployment:
    """The embedded default alone, for the CLI's own behaviour (exit codes, layouts, messages)."""
    return sqlite_deployment


# Workloads.

FIRST = ["Ada", "Grace", "Zoë", "José", "Björk", "Łukasz", "Chloé", "Ngozi", "Hiroshi", "Søren", "Nadia", "Ken"]
LAST = ["Lovelace", "Hopper", "Müller", "García", "Nakamura", "Øvergaard", "Okafor", "Dvořák", "Liskov", "Ritchie"]
ZONES = ["Europe/London", "America/New_York", "Asia/Tokyo", "Europe/Paris", "Africa/Lagos"]
LOCALES = ["en", "en-US", "fr-FR", "ja-JP", "de", "pl"]


@dataclass
class Workload:
    """An ndjson file of users and the outcome each line must get (upsert false, empty project)."""

    path: Path
    lines: list[bytes]
    expected: list[str]
    duplicates: frozenset[int] = frozenset()
    """Lines repeating an earlier line's email: failed as its duplicate (the CLI's DuplicateInFile); `updated` with
    upsert."""

    @property
    def inserted(self) -> int:
        return self.expected.count("inserted")

    def failed_lines(self, *, upsert: bool = False) -> list[bytes]:
        return [
            line
            for i, (line, outcome) in enumerate(zip(self.lines, self.expected, strict=True))
            if outcome == "failed" and not (upsert and i in self.duplicates)
        ]


def user(i: int, rng: random.Random, tag: str = "") -> dict[str, Any]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    record: dict[str, Any] = {
        "email": f"{tag}user{i}@example.com",
        "email_verified": rng.random() < 0.8,
        "name": f"{first} {last}",
        "given_name": first,
        "family_name": last,
        "zoneinfo": rng.choice(ZONES),
        "locale": rng.choice(LOCALES),
        "roles": rng.sample(ROLES, rng.randint(0, 2)),
        "custom_attributes": {"plan": rng.choice(["free", "pro", "team"]), "since": rng.randint(2010, 2026)},
        "password": {"type": "bcrypt", "password_hash": HASH_2B},
    }
    if rng.random() < 0.5:
        offset = zlib.crc32(tag.encode()) % 300 * 20_000  # workloads with different tags never share numbers
        record["phone_number"] = f"+1415{2_000_000 + offset + i:07d}"
        record["phone_number_verified"] = True
    if rng.random() < 0.1:
        record["groups"] = [rng.choice(GROUPS)]
    return record


_BREAKAGE = [
    ("email", "{i}-not-an-email"),
    ("zoneinfo", "Mars/Olympus"),
    ("password", {"type": "bcrypt", "password_hash": "$2b$04$tooshort"}),
    ("roles", ["superuser"]),
]


def make_workload(path: Path, count: int, seed: int = 7, tag: str = "") -> Workload:
    """`count` users; every 101st is invalid (four kinds), every 397th repeats the email 3 lines up (a duplicate).

    Lines mix compact and spaced JSON, raw UTF-8, and some end in CRLF: the failed file must give them back
    byte for byte.
    """
    rng = random.Random(seed)
    lines: list[bytes] = []
    expected: list[str] = []
    duplicates: set[int] = set()
    for i in range(count):
        record = user(i, rng, tag)
        outcome = "inserted"
        if i % 101 == 3:
            key, value = _BREAKAGE[(i // 101) % len(_BREAKAGE)]
            record[key] = value.format(i=i) if isinstance(value, str) else value
            outcome = "failed"
        elif i % 397 == 11 and expected[i - 3] == "inserted":
            record["email"] = json.loads(lines[i - 3])["email"].upper()
            record.pop("phone_number", None)
            record.pop("phone_number_verified", None)
            outcome = "failed"
            duplicates.add(i)
        if i % 7 == 0:
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
        else:
            line = json.dumps(record, ensure_ascii=False).encode()
        if outcome == "failed" and i % 2 == 1 and i not in duplicates:
            line += b"\r"
        lines.append(line)
        expected.append(outcome)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return Workload(path, lines, expected, frozenset(duplicates))


@pytest.fixture(scope="session")
def workload_20k(tmp_path_factory: pytest.TempPathFactory) -> Workload:
    """20 000 users (about 8 MB of ndjson), with invalid records and duplicates."""
    return make_workload(tmp_path_factory.mktemp("workload") / "users.ndjson", 20_000)


# Reading what the CLI wrote.


@dataclass
class Report:
    header: dict[str, Any]
    details: dict[int, dict[str, Any]]
    tasks: dict[str, tuple[int, int]]
    submits: list[tuple[int, int]]
    duplicates: list[int]


def read_report(path: Path) -> Report:
    header: dict[str, Any] = {}
    details: dict[int, dict[str, Any]] = {}
    tasks: dict[str, tuple[int, int]] = {}
    submits: list[tuple[int, int]] = []
    duplicates: list[int] = []
    for raw in path.read_bytes().splitlines():
        line = json.loads(raw)
        if "run" in line:
            header = header or line["run"]
        elif "index" in line:
            if line["index"] in details:
                duplicates.append(line["index"])
            details[line["index"]] = line
        elif "submit" in line:
            submits.append(tuple(line["submit"]))
        elif "task" in line:
            tasks[line["task"]] = tuple(line["indices"])
    return Report(header, details, tasks, submits, duplicates)
