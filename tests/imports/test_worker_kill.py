"""A real arq worker process killed (SIGKILL) in the middle of a chunk: nothing lost, nothing applied twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from litestar_userio.projects.settings import ProjectSettings
from tests.conftest import Backend
from tests.helpers import IMPORT
from tests.imports.test_chunks import canonical_state, run, workload

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.mark.slow
async def test_worker_killed_mid_chunk_loses_nothing_and_applies_nothing_twice(
    postgres_url, redis_url, make_env, tmp_path
):
    backend = Backend("postgres-arq", postgres_url, redis_url)
    records = workload(seed=11, size=3000, clusters=600)
    reference_project, reference = await run(await make_env(backend, imports={"chunk_size": 10_000}), records)

    env = await make_env(backend, imports={"chunk_size": 40})
    project = await env.make_project(ProjectSettings(create_unknown_roles_on_import=True))
    response = await project.post(IMPORT, {"identifier": "email", "upsert": True, "records": records})
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

    assert result["summary"] == reference["summary"]
    assert sum(result["summary"][k] for k in ("inserted", "updated", "skipped", "failed")) == len(records)
    assert await canonical_state(project, result["details"]) == await canonical_state(
        reference_project, reference["details"]
    )
