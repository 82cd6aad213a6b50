"""Faults with real processes, PostgreSQL and Redis: nothing lost, nothing applied twice (issue 6).

- `kill -9` of the arq worker at random moments of a 20 000-record import, ten times;
- the same during an export: the file still has every user exactly once;
- Redis shut down and started again, and every PostgreSQL connection terminated, in the middle of jobs.

The database after a faulty run is compared with the one a clean run of the same records produces.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import socket
import subprocess
import time
from pathlib import Path

import asyncpg
import pytest

from litestar_userio import LocalStorageConfig
from litestar_userio.errors import ServiceUnavailable
from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.users.user_repository import user_rows_query
from tests.conftest import PG_SERVER, Backend
from tests.exports.helpers import download, initiate
from tests.helpers import IMPORT
from tests.imports.test_chunks import workload
from tests.imports.test_worker_kill import DEFAULT_TIMINGS, StallMeter, start_worker, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.hard]

REQUESTS = 5


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PrivateRedis:
    """A Redis of our own on a free port, which a test may shut down and start again."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.process = None


@pytest.fixture
def private_redis(tmp_path):
    redis = PrivateRedis(tmp_path)
    redis.start()
    yield redis
    redis.stop()


def split_by_cluster(records: list[dict], requests: int, clusters: int) -> list[list[dict]]:
    """Requests whose records never interact across requests, so every run has one right answer."""
    bodies: list[list[dict]] = [[] for _ in range(requests)]
    for record in records:
        cluster = int(record["email"].lower().split("@")[0][1:-1])
        bodies[cluster % requests].append(record)
    return bodies


async def canonical_users(project) -> list[tuple]:
    """Every user of the project, ids left out, in a stable order: what a clean run must also produce."""
    async with project.env.services.db.reader() as tx:
        rows = await tx.fetch(user_rows_query(tx, "u.project_id = $1"), project.id)
    users = []
    for row in rows:
        identities = sorted((i[0], i[2]) for i in json.loads(row["identities"] or "[]"))
        factors = sorted((a[0], a[1], a[3] or "") for a in json.loads(row["authenticators"] or "[]"))
        users.append(
            (
                json.dumps(json.loads(row["standard_attributes"]), sort_keys=True),
                json.dumps(json.loads(row["custom_attributes"]), sort_keys=True),
                bool(row["is_disabled"]),
                tuple(identities),
                tuple(factors),
                tuple(json.loads(row["roles"] or "[]")),
            )
        )
    return sorted(users)


async def submit(project, bodies) -> list[str]:
    locations = []
    for records in bodies:
        response = await project.post(IMPORT, {"identifier": "email", "upsert": True, "records": records})
        assert response.status_code == 202, response.text
        locations.append(response.headers["location"])
    return locations


async def outcomes(project, locations) -> list[list[tuple]]:
    """Each task's details without user ids (they differ between runs), once every task completed."""
    result = []
    for location in locations:
        body = (await project.get(location)).json()
        assert body["status"] == "completed", body
        total = body["summary"]
        assert total["total"] == total["inserted"] + total["updated"] + total["skipped"] + total["failed"]
        assert [d["index"] for d in body["details"]] == list(range(total["total"]))
        result.append(
            [(d["outcome"], json.dumps(d.get("warnings")), json.dumps(d.get("errors"))) for d in body["details"]]
        )
    return result


async def any_progress(project, locations) -> bool:
    response = await project.get(locations[0])
    return response.status_code == 200 and response.json().get("progress", {}).get("processed", 0) > 0


async def all_completed(project, locations) -> bool:
    for location in locations:
        response = await project.get(location)
        if response.status_code != 200 or response.json()["status"] != "completed":
            return False  # a 503 while the database or Redis is away counts as not yet
    return True


@pytest.fixture
async def clean_run(postgres_url, redis_url, make_env):
    """The reference: the same requests, run by the in-process runner without faults."""

    async def run(bodies):
        env = await make_env(Backend("postgres-inprocess", postgres_url, None))
        project = await env.make_project(ProjectSettings(create_unknown_roles_on_import=True))
        locations = await submit(project, bodies)
        await env.drain()
        return await canonical_users(project), await outcomes(project, locations)

    return run


async def log_shows_a_job(log: Path) -> bool:
    """Whether the worker writing this log has started a job (it is past its start-up)."""
    return log.exists() and "userio_import_chunk(" in log.read_text()


async def log_shows_a_running_job(log: Path) -> bool:
    """Whether the worker writing this log is running a chunk job now (arq logs `→` as one starts, `←` as it ends)."""
    text = log.read_text()
    return text.count(":userio_import_chunk(") > text.count(":userio_import_chunk ●")


class RecoveryMeter:
    """After each kill, how long until every chunk the dead worker had started runs again (or is done)."""

    def __init__(self, project, task_ids: list[str]) -> None:
        self.project = project
        self.task_ids = task_ids
        self.kills: list[tuple[float, dict[tuple[str, int], int]]] = []
        self.longest = 0.0
        self.chunks = 0
        self._task = asyncio.ensure_future(self._watch())

    async def _pending(self) -> dict[tuple[str, int], int]:
        """Pending chunks and how many times each was started."""
        rows = await self.project.fetch(
            "SELECT task_id, seq, attempts FROM userio_import_chunk WHERE status = 'pending' AND task_id IN"
            f" ({', '.join(repr(t) for t in self.task_ids)})"
        )
        return {(r["task_id"], r["seq"]): r["attempts"] for r in rows}

    async def killed(self) -> None:
        in_flight = {chunk: attempts for chunk, attempts in (await self._pending()).items() if attempts > 0}
        self.chunks += len(in_flight)
        self.kills.append((time.monotonic(), in_flight))

    async def _watch(self) -> None:
        while True:
            try:
                pending = await self._pending()
            except ServiceUnavailable:  # the shared server is out of connections for a moment
                await asyncio.sleep(0.1)
                continue
            now = time.monotonic()
            for kill in list(self.kills):
                at, chunks = kill
                if all(pending.get(chunk, attempts + 1) > attempts for chunk, attempts in chunks.items()):
                    self.longest = max(self.longest, now - at)
                    self.kills.remove(kill)
            await asyncio.sleep(0.1)

    async def stop(self) -> float:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        return self.longest


async def test_ten_worker_kills_during_an_import_lose_nothing_and_apply_nothing_twice(
    postgres_url, redis_url, make_env, clean_run, tmp_path
):
    records = workload(seed=23, size=20_000, clusters=4_000)
    bodies = split_by_cluster(records, REQUESTS, 4_000)
    expected_users, expected_outcomes = await clean_run(bodies)
    env = await make_env(Backend("postgres-arq", postgres_url, redis_url), imports={"chunk_size": 50})
    project = await env.make_project(ProjectSettings(create_unknown_roles_on_import=True))
    locations = await submit(project, bodies)
    task_ids = [location.rsplit("/", 1)[1] for location in locations]
    rng = random.Random(5)
    meter = StallMeter(project, locations)
    recovery = RecoveryMeter(project, task_ids)

    # Workers with the shipped lease, sweep and stale timings, looking for jobs only every 0.5 s so that the import
    # outlasts ten kills. An anchor (one job at a time) works throughout; a victim is killed at work ten times, and
    # each time a replacement starts at once. The dead victim's chunks run again when their leases lapse, on
    # whichever worker is free.
    timings = {**DEFAULT_TIMINGS, "USERIO_WORKER_POLL_DELAY": "0.5"}
    anchor = start_worker(env, tmp_path, "anchor", {**timings, "USERIO_WORKER_MAX_JOBS": "1"})
    victim = start_worker(env, tmp_path, "victim-0", timings)
    try:
        for kill in range(10):
            log = tmp_path / f"victim-{kill}.log"
            await wait_for(lambda log=log: log_shows_a_job(log), timeout=120, interval=0.1)
            await asyncio.sleep(rng.uniform(0.2, 1.0))
            await wait_for(lambda log=log: log_shows_a_running_job(log), timeout=60, interval=0.005)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            await recovery.killed()
            assert not await all_completed(project, locations), f"the import finished before kill {kill + 1}"
            victim = start_worker(env, tmp_path, f"victim-{kill + 1}", timings)
        await wait_for(lambda: all_completed(project, locations), timeout=240, interval=0.5)
    finally:
        for worker in (anchor, victim):
            worker.send_signal(signal.SIGTERM)
        for worker in (anchor, victim):
            worker.wait(timeout=60)
    print(
        f"\nten kill -9 during a 20 000-record import: {recovery.chunks} chunks were in flight; the longest wait"
        f" until a killed worker's chunks ran again {await recovery.stop():.1f} s; longest stall of the progress"
        f" {await meter.stop():.1f} s"
    )

    assert recovery.chunks > 0, "no kill caught a chunk in flight"
    assert await outcomes(project, locations) == expected_outcomes
    assert await canonical_users(project) == expected_users


async def test_worker_kills_during_an_export_never_offer_a_partial_file(postgres_url, redis_url, make_env, tmp_path):
    env = await make_env(
        Backend("postgres-arq", postgres_url, redis_url),
        exports={"storage": LocalStorageConfig(directory=tmp_path / "exports"), "page_size": 25},
    )
    project = await env.make_project()
    emails = [f"user{i}@example.com" for i in range(6_000)]
    for start in range(0, len(emails), 2_000):
        response = await project.post(
            IMPORT, {"identifier": "email", "records": [{"email": e} for e in emails[start : start + 2_000]]}
        )
        assert response.status_code == 202
    await env.drain(workers=2)
    response = await initiate(project, {"format": "ndjson"})
    location = response.headers["location"]
    rng = random.Random(9)

    for kill in range(5):
        worker = start_worker(env, tmp_path, f"export-victim-{kill}", {"USERIO_EXPORT_PAGE_SIZE": "25"})
        await asyncio.sleep(rng.uniform(2.5, 4.0))
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        status = (await project.get(location)).json()["result"]
        if status["status"] == "pending":
            assert "download_url" not in status
            assert list((tmp_path / "exports").rglob("*.ndjson")) == [], "a partial file is visible"
    survivor = start_worker(env, tmp_path, "export-survivor", {"USERIO_EXPORT_PAGE_SIZE": "25"})
    try:

        async def completed():
            result = (await project.get(location)).json()["result"]
            return result if result["status"] == "completed" else None

        result = await wait_for(completed, timeout=180, interval=0.3)
    finally:
        survivor.send_signal(signal.SIGTERM)
        survivor.wait(timeout=60)

    assert "failed_at" not in result, result
    lines = (await download(project, result["download_url"])).content.splitlines()
    assert sorted(json.loads(line)["email"] for line in lines) == sorted(emails)


async def test_redis_down_and_back_in_the_middle_of_an_import(
    postgres_url, private_redis, make_env, clean_run, tmp_path
):
    records = workload(seed=31, size=6_000, clusters=1_500)
    bodies = split_by_cluster(records, 3, 1_500)
    expected_users, expected_outcomes = await clean_run(bodies)
    env = await make_env(Backend("postgres-arq", postgres_url, private_redis.url), imports={"chunk_size": 50})
    project = await env.make_project(ProjectSettings(create_unknown_roles_on_import=True))
    locations = await submit(project, bodies)
    worker = start_worker(env, tmp_path, "through-redis-outage")
    try:
        await asyncio.sleep(2.5)
        private_redis.stop()
        down = await initiate(project, {"format": "ndjson"})
        stored = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "late@example.com"}]})
        await asyncio.sleep(3)
        private_redis.start()
        locations.append(stored.headers["location"])
        try:
            await wait_for(lambda: all_completed(project, locations), timeout=180, interval=0.5)
        except AssertionError:
            log = (tmp_path / "through-redis-outage.log").read_text()
            raise AssertionError(f"the import did not complete; the worker's log ends:\n{log[-6000:]}") from None
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)

    assert down.status_code == 202, "an export is stored while Redis is down (its bucket is in the database)"
    assert stored.status_code == 202, "an import is stored even while Redis is down"
    assert (await outcomes(project, locations))[:-1] == expected_outcomes
    assert len(await canonical_users(project)) == len(expected_users) + 1
    assert [u for u in await canonical_users(project) if "late@example.com" not in u[0]] == expected_users


async def test_postgres_connections_terminated_in_the_middle_of_jobs(
    postgres_url, redis_url, make_env, clean_run, tmp_path
):
    records = workload(seed=41, size=6_000, clusters=1_500)
    bodies = split_by_cluster(records, 3, 1_500)
    expected_users, expected_outcomes = await clean_run(bodies)
    env = await make_env(Backend("postgres-arq", postgres_url, redis_url), imports={"chunk_size": 10})
    project = await env.make_project(ProjectSettings(create_unknown_roles_on_import=True))
    locations = await submit(project, bodies)
    database = postgres_url.rsplit("/", 1)[1]
    admin = await asyncpg.connect(f"{PG_SERVER}/postgres")
    # The worker's connections carry a name, so only they are terminated, and only while they work.
    worker = start_worker(
        env, tmp_path, "through-terminations", {"USERIO_DATABASE_URL": f"{postgres_url}?application_name=userio-victim"}
    )
    log = tmp_path / "through-terminations.log"
    terminated = rounds = 0
    try:
        deadline = time.monotonic() + 180
        while not await all_completed(project, locations):
            assert time.monotonic() < deadline, "the import did not complete"
            if rounds < 8:  # a few outages, not so many that a chunk exhausts its attempts
                busy = await admin.fetch(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1"
                    " AND application_name = 'userio-victim' AND state IN ('active', 'idle in transaction')",
                    database,
                )
                terminated += len(busy)
                rounds += bool(busy)
                await asyncio.sleep(0.5 if busy else 0.01)
            else:
                await asyncio.sleep(0.2)
    finally:
        await admin.close()
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)

    assert terminated > 0
    assert "↻" in log.read_text() or "restarting" in log.read_text(), "no job was interrupted by the terminations"
    assert await outcomes(project, locations) == expected_outcomes
    assert await canonical_users(project) == expected_users
