"""DECISIONS 15: the probes answer `{"status": ...}` only, by IP over plain HTTP, without an admin JWT."""

from __future__ import annotations

import os
import subprocess

import httpx
import pytest

from tests.server_cli import run_userio

pytestmark = pytest.mark.engine

LIVE = "/_userio/health/live"
READY = "/_userio/health/ready"


def probe_client(env) -> httpx.AsyncClient:
    """What an orchestrator's probe looks like: plain HTTP to an address, no `Host` of a project, no token."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=env.app), base_url="http://10.0.0.7:8000")


async def take_database_away(env, backend) -> None:
    """The database stops answering: the pool is closed and reconnecting leads nowhere (as tests/test_unavailable)."""
    await env.services.db.close()
    if backend.database_url.startswith("postgresql"):
        env.services.db.engine.config["dsn"] = "postgresql://root@127.0.0.1:1/nowhere"
        await env.services.db.engine.start_connection_pool(min_size=0, max_size=1)
    else:
        env.services.db.engine.connection_kwargs["database"] = "/nonexistent/dir/userio.sqlite3"


async def test_live_answers_ok_by_ip_over_plain_http(env):
    async with probe_client(env) as client:
        response = await client.get(LIVE)

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_ready_answers_ok_when_database_queue_and_hook_pool_work(env):
    async with probe_client(env) as client:
        response = await client.get(READY)

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_ready_answers_503_and_nothing_else_when_the_database_is_unreachable(backend, make_env):
    env = await make_env(backend)
    await take_database_away(env, backend)

    async with probe_client(env) as client:
        ready = await client.get(READY)
        live = await client.get(LIVE)

    assert ready.status_code == 503
    assert ready.json() == {"status": "unavailable"}
    assert live.status_code == 200, "the process itself still answers"


async def test_ready_answers_503_when_the_queue_is_unreachable(postgres_url, make_env):
    from tests.conftest import Backend

    env = await make_env(Backend("postgres-arq", postgres_url, "redis://127.0.0.1:1/0"))

    async with probe_client(env) as client:
        response = await client.get(READY)

    assert response.status_code == 503
    assert response.json() == {"status": "unavailable"}


async def test_probes_can_be_turned_off(backend, make_env):
    env = await make_env(backend, health_path=None)

    async with probe_client(env) as client:
        response = await client.get(LIVE)

    assert response.status_code == 404


def worker_check(env, tmp_path, redis_url: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "USERIO_HOME": str(tmp_path),
        "USERIO_DATABASE_URL": env.config.database_url,
        "USERIO_REDIS_URL": redis_url,
    }
    return run_userio(environment, "worker", "--check")


async def test_worker_check_exits_0_when_database_and_redis_answer_and_1_when_redis_does_not(
    postgres_url, redis_url, make_env, tmp_path
):
    from tests.conftest import Backend

    env = await make_env(Backend("postgres-arq", postgres_url, redis_url))

    up = worker_check(env, tmp_path, redis_url)
    down = worker_check(env, tmp_path, "redis://127.0.0.1:1/0")

    assert (up.returncode, up.stdout.strip()) == (0, "ok"), up.stderr
    assert (down.returncode, down.stdout.strip()) == (1, "unavailable"), down.stderr
