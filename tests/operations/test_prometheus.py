"""Issue 30.4: a real Prometheus (Debian's package) scrapes the example app and two arq workers during an import,
and the figures come back through Prometheus' own HTTP API.

Skipped when the `prometheus` binary is missing, failed instead under USERIO_REQUIRE_SERVICES=1 (.ci/run installs it).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.conftest import REQUIRE_SERVICES

ROOT = Path(__file__).resolve().parents[2]
RECORDS = 2000
CHUNK = 10
"""200 chunks: at least 5 s of work for two workers taking one job at a time (arq's 50 ms poll between jobs), so
scrapes each second see chunks waiting also on a fast machine (1 200 records in chunks of 20 once ended between two)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def prometheus_binary() -> str:
    found = shutil.which("prometheus")
    if found is None:
        message = "Prometheus is missing: apt-get install prometheus"
        if REQUIRE_SERVICES:
            pytest.fail(message)
        pytest.skip(message)
    return found


async def until(predicate, what: str, timeout: float = 90, processes=()):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process, log in processes:
            if process.poll() is not None:
                raise AssertionError(f"{log.name} exited while waiting for {what}: {log.read_text()[-2000:]}")
        try:
            if result := await predicate():
                return result
        except (httpx.HTTPError, OSError):
            pass
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def prometheus_config(web_port: int, worker_ports: list[int]) -> str:
    workers = ", ".join(f"'127.0.0.1:{port}'" for port in worker_ports)
    return f"""
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: userio-web
    scheme: https
    tls_config: {{insecure_skip_verify: true}}
    static_configs: [{{targets: ['127.0.0.1:{web_port}']}}]
  - job_name: userio-worker
    static_configs: [{{targets: [{workers}]}}]
"""


@pytest.mark.slow
async def test_prometheus_scrapes_the_app_and_two_workers_during_an_import(postgres_url, redis_url, tmp_path):
    binary = prometheus_binary()
    web_port, prometheus_port = free_port(), free_port()
    worker_ports = [free_port(), free_port()]
    env = {
        **os.environ,
        "USERIO_HOME": str(tmp_path / "home"),
        "USERIO_DATABASE_URL": postgres_url,
        "USERIO_REDIS_URL": redis_url,
        "USERIO_QUEUE_NAME": f"userio:prometheus:{uuid.uuid4().hex[:8]}",
        # Chunks that wait, whatever the machine's speed: the import is queued before a worker runs, each worker
        # takes one chunk at a time, and each reports the queue every half second (a scrape each second reads it).
        "USERIO_CHUNK_SIZE": str(CHUNK),
        "USERIO_WORKER_MAX_JOBS": "1",
        "USERIO_SWEEP_INTERVAL": "0.5",
        "PORT": str(web_port),
        "LOG_LEVEL": "warning",
    }
    (tmp_path / "prometheus.yml").write_text(prometheus_config(web_port, worker_ports))
    running: list[tuple[subprocess.Popen, Path]] = []

    def start(name: str, command: list[str], **extra: str) -> None:
        log = tmp_path / f"{name}.log"
        process = subprocess.Popen(
            command, cwd=ROOT, env={**env, **extra}, stdout=log.open("wb"), stderr=subprocess.STDOUT
        )
        running.append((process, log))

    worker = [sys.executable, "-m", "litestar", "--app", "example_app.app:app", "userio", "worker"]
    try:
        start("app", [sys.executable, "-m", "example_app"])
        start(
            "prometheus",
            [
                binary,
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prometheus_port}",
                "--log.level=warn",
            ],
        )
        base = f"https://localhost:{web_port}"
        async with httpx.AsyncClient(verify=False, timeout=60) as web, httpx.AsyncClient(timeout=60) as prometheus:
            token_file = tmp_path / "home" / "admin-token.jwt"
            await until(
                lambda: _ok(web, f"{base}/_userio/health/ready") if token_file.exists() else _false(),
                "the example app",
                processes=running,
            )
            headers = {"Authorization": f"Bearer {token_file.read_text().strip()}", "Host": "localhost"}
            records = [{"email": f"user{i}@example.com", "name": f"User {i}"} for i in range(RECORDS)]
            records[7] = {"email": "not an email"}
            created = await web.post(
                f"{base}/_api/admin/users/import",
                json={"identifier": "email", "upsert": True, "records": records},
                headers=headers,
            )
            assert created.status_code == 202, created.text
            for index, port in enumerate(worker_ports):
                start(f"worker-{index}", [*worker, "--metrics-port", str(port)])

            async def completed():
                status = (await web.get(base + created.headers["location"], headers=headers)).json()
                return status if status["status"] == "completed" else None

            status = await until(completed, "the import", processes=running)

            async def query(promql: str) -> dict[str, float]:
                answer = await prometheus.get(
                    f"http://127.0.0.1:{prometheus_port}/api/v1/query", params={"query": promql}
                )
                data = answer.json()["data"]["result"]
                return {
                    ",".join(f"{k}={v}" for k, v in sorted(r["metric"].items())): float(r["value"][1]) for r in data
                }

            async def all_records_scraped():
                figures = await query('sum by (outcome) (userio_import_records_total{job="userio-worker"})')
                return figures if sum(figures.values()) == RECORDS else None

            by_outcome = await until(all_records_scraped, "Prometheus to see every record", processes=running)

            async def every_target_up():
                # A worker that starts while the import runs may be scraped before its port answers: its `up` is 0
                # until the next scrape, so wait for that scrape rather than read one moment.
                figures = await query("up")
                return figures if sorted(figures.values()) == [1, 1, 1] else None

            up = await until(every_target_up, "Prometheus to scrape the app and both workers", processes=running)
            failed = await query('sum by (reason) (userio_import_records_total{outcome="failed"})')
            chunks = await query('sum(userio_import_chunk_seconds_count{job="userio-worker"})')
            queue = await query(
                'max(max_over_time(userio_queue_jobs{job="userio-worker",kind="import_chunk",state="pending"}[5m]))'
            )
    finally:
        for process, _ in running:
            process.send_signal(signal.SIGTERM)
        for process, _ in running:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()

    assert status["summary"] == {"total": RECORDS, "inserted": RECORDS - 1, "updated": 0, "skipped": 0, "failed": 1}
    assert by_outcome == {"outcome=failed": 1, "outcome=inserted": RECORDS - 1}
    assert list(failed.values()) == [1] and "reason=" in next(iter(failed))
    assert list(chunks.values()) == [RECORDS / CHUNK]
    assert sorted(up.values()) == [1, 1, 1], up
    assert len([k for k in up if "job=userio-worker" in k]) == 2
    assert max(queue.values()) >= 1, "the workers reported chunks waiting during the import"


async def _ok(client: httpx.AsyncClient, url: str) -> bool:
    return (await client.get(url)).status_code == 200


async def _false() -> bool:
    return False
