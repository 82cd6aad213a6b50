"""Two deployments can share one Redis: every key either writes carries its own queue name (issue 9.9).

Deployment A (PostgreSQL) and B (SQLite) use one private Redis with two queue names, and hold a project with the
same id. Imports and exports run in both; A's `UserExport` bucket does not count B's exports (buckets live in each
deployment's database); afterwards every key in that Redis (arq's jobs and results, leases, the sweeper's lease)
names one of the two queues.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import redis.asyncio as aioredis

from litestar_userio import RateLimit
from tests.conftest import Backend, Env, Project, admin_key
from tests.exports.helpers import export_and_wait, initiate
from tests.faults.test_faults import PrivateRedis
from tests.helpers import run_import


async def same_project(env: Env, project_id: str) -> Project:
    host = f"{project_id}.example.test"
    key = admin_key()
    await env.services.projects.create(project_id, [host], None)
    await env.services.projects.add_admin_key(project_id, key.kid, key.public_pem)
    return Project(project_id, host, key, env)


async def test_two_deployments_on_one_redis_keep_their_buckets_jobs_and_leases_apart(
    postgres_url, sqlite_url, make_env, tmp_path
):
    redis = PrivateRedis(tmp_path)
    redis.start()
    try:
        one_export_a_day = {"rate_limit": RateLimit(1, timedelta(hours=24))}
        deployments = [
            await make_env(Backend("postgres-arq", postgres_url, redis.url), exports=dict(one_export_a_day)),
            await make_env(Backend("sqlite-arq", sqlite_url, redis.url), exports=dict(one_export_a_day)),
        ]
        project_id = f"p{uuid.uuid4().hex[:12]}"
        projects = [await same_project(env, project_id) for env in deployments]

        for project in projects:
            body = await run_import(project, [{"email": "a@example.com"}, {"email": "b@example.com"}])
            assert body["summary"]["inserted"] == 2
            result = await export_and_wait(project, {"format": "ndjson"})
            assert result["record_count"] == 2, "B's export is not counted in A's bucket"
        refused = [await initiate(project, {"format": "ndjson"}) for project in projects]

        client = aioredis.from_url(redis.url)
        try:
            keys = [key.decode() async for key in client.scan_iter()]
        finally:
            await client.aclose()
    finally:
        redis.stop()

    assert [r.json()["error"]["reason"] for r in refused] == ["RateLimited", "RateLimited"], "each bucket still counts"
    queues = [env.config.queue.queue_name for env in deployments]
    assert keys
    assert [key for key in keys if not any(queue in key for queue in queues)] == []
    for queue in queues:
        assert any(key.startswith(f"arq:result:{queue}:") for key in keys), (queue, keys)
