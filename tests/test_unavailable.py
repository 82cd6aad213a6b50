"""A dependency that is down gives 503 with a clear error, never a 500 with a stack trace (issue 6)."""

from __future__ import annotations

from tests.exports.helpers import EXPORT
from tests.helpers import IMPORT


async def test_database_down_is_503_in_each_envelope(backend, make_env):
    env = await make_env(backend)
    project = await env.make_project()
    await env.services.db.close()  # the pool is gone: every query fails to connect
    if backend.database_url.startswith("postgresql"):
        env.services.db.engine.config["dsn"] = "postgresql://root@127.0.0.1:1/nowhere"
        await env.services.db.engine.start_connection_pool(min_size=0, max_size=1)
    else:
        env.services.db.engine.connection_kwargs["database"] = "/nonexistent/dir/userio.sqlite3"

    imported = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}]})
    exported = await project.post(EXPORT, {"format": "csv"})

    assert imported.status_code == 503
    assert imported.json() == {"error": "the database is unavailable; try again shortly"}
    assert imported.headers["retry-after"] == "5"
    assert exported.status_code == 503
    assert exported.json()["error"]["name"] == "ServiceUnavailable"
    assert exported.json()["error"]["info"] == {"dependency": "database"}
    assert "Traceback" not in imported.text + exported.text


async def test_queue_down_keeps_the_import_and_refuses_exports_with_503(postgres_url, make_env):
    from tests.conftest import Backend

    env = await make_env(Backend("postgres-arq", postgres_url, "redis://127.0.0.1:1/0"))
    project = await env.make_project()

    imported = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}]})
    exported = await project.post(EXPORT, {"format": "csv"})

    assert imported.status_code == 202, "the task is stored; the sweeper enqueues it when Redis is back"
    rows = await project.fetch("SELECT status FROM userio_import_task WHERE id = $1", imported.json()["id"])
    assert rows[0]["status"] == "pending"
    assert exported.status_code == 503
    assert exported.json()["error"]["info"] == {"dependency": "queue"}


async def test_a_connection_dropped_inside_a_transaction_goes_back_to_the_pool(postgres_url):
    """A worker shuts down promptly after PostgreSQL dropped one of its transactions (it used to hang on close)."""
    import asyncio

    import asyncpg
    import pytest

    from litestar_userio.db.engine import Database
    from litestar_userio.errors import unavailable_dependency

    db = Database(postgres_url, pool_size=2)
    await db.start()
    admin = await asyncpg.connect(postgres_url)

    async def dropped_in_the_middle() -> None:
        async with db.transaction() as tx:
            pid = (await tx.fetchrow("SELECT pg_backend_pid() AS pid"))["pid"]
            await admin.execute("SELECT pg_terminate_backend($1)", pid)
            await tx.execute("SELECT 1")

    try:
        with pytest.raises(Exception) as dropped:  # noqa: PT011 (asyncpg raises one of several classes here)
            await dropped_in_the_middle()
        assert unavailable_dependency(dropped.value) == "database", "the job is retried, not failed"
        async with db.transaction() as tx:
            assert (await tx.fetchrow("SELECT 1 AS one"))["one"] == 1
    finally:
        await admin.close()
    await asyncio.wait_for(db.close(), timeout=5)
