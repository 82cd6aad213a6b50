"""A real arq worker process killed (SIGKILL) in the middle of a chunk: nothing lost, nothing applied twice.

A killed worker's chunks run again as soon as their leases lapse (issue 9.8), not after arq's in-progress timeout
(`job_timeout` + 10 s) or the stale rule (`stale_after`, 3 minutes): the workers here run with the default timings.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from litestar_userio import QueueConfig
from litestar_userio.projects.settings import ProjectSettings
from tests.conftest import Backend
from tests.helpers import IMPORT
from tests.imports.test_chunks import canonical_state, run, workload
from tests.operations.test_prometheus import free_port

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TIMINGS = {
    "USERIO_STALE_AFTER": str(QueueConfig.stale_after.total_seconds()),
    "USERIO_SWEEP_INTERVAL": str(QueueConfig.sweep_interval.total_seconds()),
    "USERIO_LEASE_TTL": str(QueueConfig.lease_ttl.total_seconds()),
}
"""A worker with the shipped lease, sweep and stale timings (`start_worker` shortens the stale rule by default)."""


def start_worker(env, tmp_path: Path, name: str, extra: dict[str, str] | None = None) -> subprocess.Popen:
    environment = {
        **os.environ,
        "USERIO_HOME": str(tmp_path),
        "USERIO_DATABASE_URL": env.config.database_url,
        "USERIO_REDIS_URL": env.config.queue.redis_url,
        "USERIO_QUEUE_NAME": env.config.queue.queue_name,
        "USERIO_CHUNK_SIZE": str(env.config.imports.chunk_size),
        "USERIO_STALE_AFTER": "2",
        "USERIO_SWEEP_INTERVAL": "1",
        "USERIO_WORKER_MAX_JOBS": "4",
        **(extra or {}),
    }
    log = (tmp_path / f"{name}.log").open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "litestar", "--app", "example_app.app:app", "userio", "worker"],
        cwd=ROOT,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


async def wait_for(predicate, timeout: float = 90, interval: float = 0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := await predicate():
            return result
        await asyncio.sleep(interval)
    raise AssertionError("timed out")


async def import_beside_a_clean_run(postgres_url, redis_url, make_env, records):
    """A clean run (all records in one chunk) as the reference, and the same import started in 40-record chunks,
    waiting for the workers the test starts: (env, project, response, reference_project, reference)."""
    backend = Backend("postgres-arq", postgres_url, redis_url)
    reference_project, reference = await run(await make_env(backend, imports={"chunk_size": 10_000}), records)
    env = await make_env(backend, imports={"chunk_size": 40})
    project = await env.make_project(ProjectSettings(create_unknown_roles_on_import=True))
    response = await project.post(IMPORT, {"identifier": "email", "upsert": True, "records": records})
    return env, project, response, reference_project, reference


@pytest.mark.slow
async def test_worker_killed_mid_chunk_loses_nothing_and_applies_nothing_twice(
    postgres_url, redis_url, make_env, tmp_path
):
    records = workload(seed=11, size=3000, clusters=600)
    env, project, response, reference_project, reference = await import_beside_a_clean_run(
        postgres_url, redis_url, make_env, records
    )
    task_id = response.json()["id"]

    async def in_flight():
        rows = await project.fetch(
            "SELECT COUNT(*) FILTER (WHERE status = 'done') AS done,"
            " COUNT(*) FILTER (WHERE status = 'pending' AND attempts > 0) AS running"
            " FROM userio_import_chunk WHERE task_id = $1",
            task_id,
        )
        return rows[0] if rows[0]["done"] >= 3 and rows[0]["running"] > 0 else None

    killed_in_flight = 0
    for attempt in range(3):
        worker = start_worker(env, tmp_path, f"worker-{attempt}")
        try:
            await wait_for(in_flight)
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait()
        rows = await project.fetch(
            "SELECT COUNT(*) AS n FROM userio_import_chunk WHERE task_id = $1 AND status = 'pending' AND attempts > 0",
            task_id,
        )
        killed_in_flight += rows[0]["n"]
        status = (await project.get(response.headers["location"])).json()
        if status["status"] == "completed":
            break
    assert killed_in_flight > 0, "no chunk was in flight when the worker died"

    survivor = start_worker(env, tmp_path, "survivor")
    try:

        async def completed():
            body = (await project.get(response.headers["location"])).json()
            return body if body["status"] == "completed" else None

        result = await wait_for(completed, timeout=120, interval=0.2)
    finally:
        survivor.send_signal(signal.SIGTERM)
        survivor.wait(timeout=30)

    assert sum(result["summary"][k] for k in ("inserted", "updated", "skipped", "failed")) == len(records)
    await assert_same_outcome(project, result, reference_project, reference)


async def _worker_samples(port: int, name: str, **labels: str) -> dict[str, float]:
    """A worker's metric `name` with these labels, as Prometheus scrapes it: its samples by suffix (`_count`...)."""
    async with httpx.AsyncClient(timeout=60) as client:
        response = await client.get(f"http://127.0.0.1:{port}/metrics")
    return {
        sample.name.removeprefix(name): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
        if sample.name.startswith(name) and labels.items() <= sample.labels.items()
    }


async def assert_same_outcome(project, result, reference_project, reference) -> None:
    """The interrupted import ended as the clean run did: the same counts, the same users, rows and details."""
    assert result["summary"] == reference["summary"]
    assert await canonical_state(project, result["details"]) == await canonical_state(
        reference_project, reference["details"]
    )


async def _chunk_locks_of(project, ports: list[int], *, state: str | None = None) -> int:
    """Sessions of the client ports given (one worker's connections) holding a lock on the chunk table, in `state`.

    Only that worker's: another session idle between two statements of its own transaction (a sweep reading the
    chunks) is no frozen worker, and on a busy machine such moments last long enough to be seen.
    """
    rows = await project.fetch(
        "SELECT COUNT(DISTINCT a.pid) AS n FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid"
        " WHERE l.relation = 'userio_import_chunk'::regclass AND a.client_port = ANY($1::int[])"
        " AND ($2::text IS NULL OR a.state = $2)",
        ports,
        state,
    )
    return int(rows[0]["n"])


async def _frozen_locks(project, ports: list[int]) -> list[dict]:
    """What the sessions of these client ports are doing, and their locks on the chunk table."""
    return await project.fetch(
        "SELECT a.pid, a.state, a.wait_event_type, a.wait_event, now() - a.state_change AS since,"
        " now() - a.xact_start AS in_transaction, left(a.query, 120) AS query, l.mode, l.locktype, l.granted"
        " FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid"
        " WHERE a.client_port = ANY($1::int[]) AND l.relation = 'userio_import_chunk'::regclass",
        ports,
    )


def _client_ports(pid: int) -> list[int]:
    """The local ports of a process's TCP sockets (its database connections among them), from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


@pytest.mark.slow
async def test_a_silent_worker_holds_no_chunk_past_the_silent_transaction_timeout(
    postgres_url, redis_url, make_env, tmp_path
):
    """A worker frozen mid-chunk (SIGSTOP: a host cut off from the network looks the same to PostgreSQL) keeps
    its connection open; its transaction is ended after the silent timeout (by the database between statements,
    by the sweep when it froze in the middle of one), and another worker finishes the import while the frozen one
    is still stopped. Resumed, it applies nothing twice."""
    env, project, response, reference_project, reference = await import_beside_a_clean_run(
        postgres_url, redis_url, make_env, workload(seed=12, size=2000, clusters=400)
    )
    timings = {"USERIO_LEASE_TTL": "2", "USERIO_SILENT_TRANSACTION_TIMEOUT": "2"}

    frozen = start_worker(env, tmp_path, "frozen", timings)
    survivor = None
    try:
        for _ in range(50):
            await wait_for(lambda: _any_chunk_open(project), interval=0.005)
            frozen.send_signal(signal.SIGSTOP)
            await asyncio.sleep(0.3)
            frozen_ports = _client_ports(frozen.pid)
            if await _chunk_locks_of(project, frozen_ports, state="idle in transaction"):
                break
            frozen.send_signal(signal.SIGCONT)
        else:
            raise AssertionError("the worker was never caught inside a chunk's transaction")

        survivor = start_worker(env, tmp_path, "survivor", timings)

        async def completed():
            body = (await project.get(response.headers["location"])).json()
            return body if body["status"] == "completed" else None

        result = await wait_for(completed, timeout=90, interval=0.2)
        # In any state, none left to the frozen worker once the silent timeout (2 s) and one more sweep (1 s) have
        # passed: a session frozen mid-statement that blocks no chunk of this import (its sweep reading the chunks)
        # may outlive the import by that much. Twice beside busy loops on 2026-11-24 one was still there the moment
        # the import completed; should one stay longer, the message says what it holds.
        deadline = time.monotonic() + 2 + 1 + 2
        while await _chunk_locks_of(project, frozen_ports) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert await _chunk_locks_of(project, frozen_ports) == 0, await _frozen_locks(project, frozen_ports)
    finally:
        frozen.send_signal(signal.SIGCONT)
        for worker in (frozen, survivor):
            if worker is not None:
                worker.send_signal(signal.SIGTERM)
                worker.wait(timeout=30)

    await assert_same_outcome(project, result, reference_project, reference)


async def _any_chunk_open(project) -> bool:
    rows = await project.fetch(
        "SELECT COUNT(*) AS n FROM pg_locks WHERE relation = 'userio_import_chunk'::regclass"
        " AND pid <> pg_backend_pid() AND mode = 'RowShareLock'"
    )
    return int(rows[0]["n"]) > 0


class StallMeter:
    """Watches the progress a user sees (the status endpoint) and keeps the longest time without any."""

    def __init__(self, project, locations: list[str]) -> None:
        self.project = project
        self.locations = locations
        self.longest = 0.0
        self._task = asyncio.ensure_future(self._watch())

    async def _processed(self) -> tuple[int, bool]:
        processed, pending = 0, False
        for location in self.locations:
            body = (await self.project.get(location)).json()
            processed += body["summary"]["total"] if body["status"] == "completed" else body["progress"]["processed"]
            pending = pending or body["status"] == "pending"
        return processed, pending

    async def _watch(self) -> None:
        last, since = -1, time.monotonic()
        while True:
            try:
                processed, pending = await self._processed()
            except (KeyError, ValueError):  # a 503 while the shared server is out of connections for a moment
                await asyncio.sleep(0.1)
                continue
            now = time.monotonic()
            if processed != last:
                last, since = processed, now
            self.longest = max(self.longest, now - since)
            if not pending:
                return
            await asyncio.sleep(0.1)

    async def stop(self) -> float:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        return self.longest


@pytest.mark.slow
async def test_a_killed_workers_chunks_run_again_once_their_leases_lapse(postgres_url, redis_url, make_env, tmp_path):
    backend = Backend("postgres-arq", postgres_url, redis_url)
    records = workload(seed=17, size=2000, clusters=400)
    reference_project, reference = await run(await make_env(backend, imports={"chunk_size": 10_000}), records)
    env = await make_env(backend, imports={"chunk_size": 20})
    project = await env.make_project(ProjectSettings(create_unknown_roles_on_import=True))
    response = await project.post(IMPORT, {"identifier": "email", "upsert": True, "records": records})
    task_id = response.json()["id"]

    async def started_chunks() -> set[int]:
        rows = await project.fetch(
            "SELECT seq FROM userio_import_chunk WHERE task_id = $1 AND status = 'pending' AND attempts > 0", task_id
        )
        return {row["seq"] for row in rows}

    async def victim_busy():
        done = await project.fetch(
            "SELECT COUNT(*) AS n FROM userio_import_chunk WHERE task_id = $1 AND status = 'done'", task_id
        )
        return done[0]["n"] >= 3 and await started_chunks()

    async def victim_stopped_busy():
        """Busy, and still so once stopped: a worker applies two chunks at a time, and chunks of 20 are quick."""
        if not await victim_busy():
            return False
        victim.send_signal(signal.SIGSTOP)
        await asyncio.sleep(0.05)  # a commit already sent lands before the look
        if await started_chunks():
            return True
        victim.send_signal(signal.SIGCONT)
        return False

    victim = start_worker(env, tmp_path, "victim", DEFAULT_TIMINGS)
    try:
        await wait_for(victim_stopped_busy)
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()
    killed_at = time.monotonic()
    killed = await started_chunks()
    assert killed, "no chunk was in flight when the worker died"

    metrics_port = free_port()
    survivor = start_worker(env, tmp_path, "survivor", {**DEFAULT_TIMINGS, "USERIO_METRICS_PORT": str(metrics_port)})
    try:

        async def killed_chunks_done():
            return not (killed & await started_chunks() | killed & await pending_chunks())

        async def pending_chunks() -> set[int]:
            rows = await project.fetch(
                "SELECT seq FROM userio_import_chunk WHERE task_id = $1 AND status = 'pending'", task_id
            )
            return {row["seq"] for row in rows}

        # Well before arq's own re-run of the dead job (job_timeout + 10 s = 130 s) or the 180 s stale rule.
        await wait_for(killed_chunks_done, timeout=60, interval=0.1)
        print(
            f"\nthe killed worker's {len(killed)} chunks were applied again {time.monotonic() - killed_at:.1f} s after kill -9"
        )
        # The survivor timed its takeovers (issue 30): each at least a lease TTL after the victim's last renewal.
        takeover = await _worker_samples(metrics_port, "userio_lease_takeover_seconds", kind="import_chunk")
        assert takeover.get("_count", 0.0) >= 1, takeover
        assert takeover["_sum"] >= takeover["_count"] * QueueConfig.lease_ttl.total_seconds()

        async def completed():
            body = (await project.get(response.headers["location"])).json()
            return body if body["status"] == "completed" else None

        result = await wait_for(completed, timeout=120, interval=0.2)
    finally:
        survivor.send_signal(signal.SIGTERM)
        survivor.wait(timeout=30)

    assert result["summary"] == reference["summary"]
    assert await canonical_state(project, result["details"]) == await canonical_state(
        reference_project, reference["details"]
    )
