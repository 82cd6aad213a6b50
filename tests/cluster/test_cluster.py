"""Across hosts: PostgreSQL + Redis, S3, the app and two arq workers each on their own network namespace.

`make test-cluster` (root only; skipped elsewhere unless USERIO_REQUIRE_SERVICES=1). A 100 000-record import
runs through the app; when 30 % of it is applied, one worker host's link is cut for 30 s and restored. Every
record must be applied exactly once, and an export afterwards must give the whole file. The stall the cut
caused is printed (`-s` shows it). Nothing here depends on how fast a dead worker's chunks are taken over:
the cut worker keeps its TCP connections and resumes, or its work is taken over, and either way the counts hold.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from itertools import pairwise
from pathlib import Path

import asyncpg
import httpx
import msgspec
import pytest

from bench.generate import split_requests, users
from tests.cluster.hosts import Cluster, cluster_unavailable, free_port, pg_binary, wait_for_port
from tests.conftest import REQUIRE_SERVICES
from userio_core.admin_keys import sign_admin_token

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
RECORDS = int(os.environ.get("USERIO_CLUSTER_RECORDS", "100000"))
CUT_AT = 0.3
CUT_SECONDS = 30.0
STUCK_SECONDS = 300.0
DEADLINE_SECONDS = 1200.0
BUCKET = "userio-cluster"


@dataclass
class Deployment:
    cluster: Cluster
    database_url: str
    api: str
    tls: ssl.SSLContext
    token: str
    workers: dict[str, int]
    """Worker host -> pid of its worker process."""
    logs: Path


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    reason = cluster_unavailable()
    if reason is not None:
        if REQUIRE_SERVICES:
            pytest.fail(f"the cluster test cannot run: {reason}")
        pytest.skip(reason)
    # A run stopped by SIGTERM (a CI timeout) still tears the cluster down.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with Cluster.build(["db", "s3", "app", "w1", "w2"]) as built:
            yield built
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture
async def deployment(cluster: Cluster, tmp_path: Path) -> Deployment:
    """PostgreSQL and Redis on `db`, moto on `s3`, the example app on `app`, a worker on `w1` and on `w2`."""
    hosts = cluster.hosts
    logs = tmp_path

    data = cluster.folder("pgdata", owner="postgres")
    initdb = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", pg_binary("initdb")]
    initdb += ["-D", str(data), "-U", "root", "-A", "trust", "-E", "UTF8", "--no-sync"]
    subprocess.run(initdb, check=True, capture_output=True, cwd=data, timeout=120)
    with (data / "pg_hba.conf").open("a") as hba:
        hba.write(f"host all all {cluster.subnet}.0/24 trust\n")
    pg_port = free_port()
    postgres = cluster.spawn(
        "db",
        [
            pg_binary("postgres"),
            "-D",
            str(data),
            "-p",
            str(pg_port),
            "-c",
            f"listen_addresses={hosts['db'].address}",
            "-c",
            f"unix_socket_directories={data}",
            "-c",
            "fsync=off",
        ],
        logs / "postgres.log",
        user="postgres",
        cwd=data,
    )
    wait_for_port(hosts["db"].address, pg_port, postgres, logs / "postgres.log")
    server_url = f"postgresql://root@{hosts['db'].address}:{pg_port}"
    admin = await asyncpg.connect(f"{server_url}/postgres")
    await admin.execute("CREATE DATABASE userio")
    await admin.close()

    redis_port = free_port()
    redis = cluster.spawn(
        "db",
        [
            "redis-server",
            "--bind",
            hosts["db"].address,
            "--port",
            str(redis_port),
            "--protected-mode",
            "no",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        logs / "redis.log",
    )
    wait_for_port(hosts["db"].address, redis_port, redis, logs / "redis.log")

    s3_port = free_port()
    moto = cluster.spawn(
        "s3",
        [str(Path(sys.executable).parent / "moto_server"), "-H", hosts["s3"].address, "-p", str(s3_port)],
        logs / "moto.log",
    )
    wait_for_port(hosts["s3"].address, s3_port, moto, logs / "moto.log")
    s3_url = f"http://{hosts['s3'].address}:{s3_port}"
    async with httpx.AsyncClient() as client:
        (await client.put(f"{s3_url}/{BUCKET}")).raise_for_status()

    app_port = free_port()
    env = {
        **os.environ,
        "USERIO_DATABASE_URL": f"{server_url}/userio",
        "USERIO_REDIS_URL": f"redis://{hosts['db'].address}:{redis_port}/0",
        "USERIO_QUEUE_NAME": f"userio:cluster:{uuid.uuid4().hex[:8]}",
        "USERIO_S3_ENDPOINT_URL": s3_url,
        "USERIO_S3_BUCKET": BUCKET,
        "USERIO_S3_ACCESS_KEY_ID": "cluster",
        "USERIO_S3_SECRET_ACCESS_KEY": "cluster",
        "HOST": hosts["app"].address,
        "PORT": str(app_port),
        "LOG_LEVEL": "warning",
    }
    home = cluster.folder("app")
    app = cluster.spawn(
        "app", [sys.executable, "-m", "example_app"], logs / "app.log", env={**env, "USERIO_HOME": str(home)}, cwd=ROOT
    )
    wait_for_port(hosts["app"].address, app_port, app, logs / "app.log")
    workers = {}
    for name in ("w1", "w2"):
        worker = cluster.spawn(
            name,
            [sys.executable, "-m", "litestar", "--app", "example_app.app:app", "userio", "worker"],
            logs / f"worker-{name}.log",
            env={**env, "USERIO_HOME": str(cluster.folder(name))},
            cwd=ROOT,
        )
        workers[name] = worker.pid

    tls = ssl.create_default_context(cafile=str(home / "tls" / "localhost.crt"))
    tls.check_hostname = False  # the demo certificate names localhost; the chain is still verified
    token = sign_admin_token((home / "demo-admin-key.pem").read_text(), "demo", ttl=timedelta(hours=1))
    return Deployment(
        cluster, f"{server_url}/userio", f"https://{hosts['app'].address}:{app_port}", tls, token, workers, logs
    )


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def test_import_and_export_survive_a_worker_host_cut_off(deployment: Deployment) -> None:
    records = list(users(RECORDS, seed=11))
    bodies = split_requests(records)
    headers = {"Authorization": f"Bearer {deployment.token}", "Host": "localhost"}
    db = await asyncpg.connect(deployment.database_url, server_settings={"search_path": "userio"})
    async with httpx.AsyncClient(base_url=deployment.api, verify=deployment.tls, headers=headers, timeout=120) as api:
        started = time.monotonic()
        semaphore = asyncio.Semaphore(4)

        async def post(body: bytes) -> str:
            async with semaphore:
                response = await api.post(
                    "/_api/admin/users/import", content=body, headers={"Content-Type": "application/json"}
                )
                assert response.status_code == 202, response.text
                return str(response.json()["id"])

        posting = asyncio.gather(*(post(body) for body in bodies))

        # Watch progress (one query on the database host); cut w1 off once CUT_AT of the records are applied.
        timeline: list[tuple[float, int]] = []
        cut_at = restored_at = None
        spent: dict[str, float] = {}
        moved_at = 0.0
        cpu_before = {name: cpu_seconds(pid) for name, pid in deployment.workers.items()}
        while True:
            now = time.monotonic() - started
            processed = await db.fetchval("SELECT coalesce(sum(processed), 0) FROM userio_import_task")
            timeline.append((now, processed))
            if cut_at is None and processed >= RECORDS * CUT_AT:
                # Both poll alike; one that applies chunks spends seconds, an idle one a few hundredths.
                spent = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in deployment.workers.items()}
                assert spent["w1"] > spent["w2"] / 4, f"w1 did no share of the work before the cut: {spent}"
                deployment.cluster.cut("w1")
                cut_at = now
            if cut_at is not None and restored_at is None and now >= cut_at + CUT_SECONDS:
                deployment.cluster.restore("w1")
                restored_at = now
            if restored_at is not None and posting.done() and processed >= RECORDS:
                break
            if len(timeline) > 1 and processed > timeline[-2][1]:
                moved_at = now
            assert now - moved_at < STUCK_SECONDS, f"stuck at {processed} of {RECORDS}; logs in {deployment.logs}"
            await asyncio.sleep(0.25)
        task_ids = await posting

        # Exactly once, as the user sees it: every record inserted once, one distinct user each.
        user_ids: list[str] = []
        for task_id in task_ids:
            body = (await api.get(f"/_api/admin/users/import/{task_id}")).json()
            assert body["status"] == "completed"
            summary = body["summary"]
            assert summary["inserted"] == summary["total"], summary
            assert [d["outcome"] for d in body["details"]] == ["inserted"] * summary["total"]
            user_ids.extend(d["user_id"] for d in body["details"])
        assert len(user_ids) == RECORDS
        assert len(set(user_ids)) == RECORDS
        assert await db.fetchval("SELECT count(*) FROM userio_user WHERE project_id = 'demo'") == RECORDS
        assert (
            await db.fetchval(
                "SELECT count(DISTINCT normalized_value) FROM userio_identity WHERE login_id_key = 'email'"
            )
            == RECORDS
        )

        # The export, through the same cluster: the whole file, every user once.
        export_started = time.monotonic()
        response = await api.post("/_api/admin/users/export", json={"format": "ndjson"})
        assert response.status_code == 202, response.text
        location = response.headers["location"]
        while (result := (await api.get(location)).json()["result"])["status"] != "completed":
            assert time.monotonic() - export_started < DEADLINE_SECONDS, "the export did not finish"
            await asyncio.sleep(0.25)
        export_seconds = time.monotonic() - export_started
    await db.close()
    assert "error" not in result, result
    async with httpx.AsyncClient(timeout=120) as storage:
        download = await storage.get(result["download_url"])
    assert download.status_code == 200
    content = download.content
    assert len(content) == result["size"]
    assert hashlib.sha256(content).hexdigest() == result["sha256"]
    lines = content.splitlines()
    assert len(lines) == RECORDS
    exported = [msgspec.json.decode(line) for line in lines]
    assert sorted(u["sub"] for u in exported) == sorted(user_ids)
    assert sorted(u["email"] for u in exported) == sorted(r["email"] for r in records)

    report_stall(timeline, cut_at, restored_at, export_seconds, spent)


def report_stall(
    timeline: list[tuple[float, int]],
    cut_at: float | None,
    restored_at: float | None,
    export_seconds: float,
    spent: dict[str, float],
) -> None:
    """Print what the cut cost: the rate before, during and after it, and the longest wait without progress."""
    assert cut_at is not None and restored_at is not None

    def applied_at(moment: float) -> int:
        return max((p for t, p in timeline if t <= moment), default=0)

    first = next(t for t, p in timeline if p > 0)
    # The watch goes on until the link is back, so the import's own end is read off the timeline.
    done_at = next(t for t, p in timeline if p >= RECORDS)
    during_end = min(done_at, restored_at)
    before = applied_at(cut_at) / max(cut_at - first, 1e-9)
    during = (applied_at(during_end) - applied_at(cut_at)) / max(during_end - cut_at, 1e-9)
    after = (
        f", after it {(RECORDS - applied_at(restored_at)) / max(done_at - restored_at, 1e-9):.0f}"
        if done_at > restored_at
        else f"; all applied {done_at - cut_at:.1f} s after the cut, before the link came back"
    )
    increments = [t for (_, p0), (t, p) in pairwise(timeline) if p > p0]
    longest, longest_from = max(((b - a, a) for a, b in pairwise(increments)), default=(0.0, 0.0))
    expected = first + RECORDS / before
    print(
        f"\ncluster: {RECORDS} records imported in {done_at:.1f} s, exported in {export_seconds:.1f} s"
        f"\n  w1 cut off at {cut_at:.1f} s ({applied_at(cut_at)} applied) for {restored_at - cut_at:.0f} s"
        f" (CPU spent before the cut: w1 {spent['w1']:.2f} s, w2 {spent['w2']:.2f} s)"
        f"\n  rate before the cut {before:.0f} records/s, during it {during:.0f}{after}"
        f"\n  longest time without a record applied: {longest:.1f} s, from {longest_from:.1f} s,"
        f" with {applied_at(longest_from)} applied (polled every 0.25 s)"
        f"\n  stall: finished {done_at - expected:.1f} s later than the pre-cut rate predicts"
    )
