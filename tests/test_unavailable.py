"""A dependency that is down gives 503 with a clear error, never a 500 with a stack trace (issue 6)."""

from __future__ import annotations

import pytest

from tests.exports.helpers import EXPORT
from tests.helpers import IMPORT

pytestmark = pytest.mark.engine


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


async def test_queue_down_keeps_the_import_and_the_export(postgres_url, make_env):
    from tests.conftest import Backend

    env = await make_env(Backend("postgres-arq", postgres_url, "redis://127.0.0.1:1/0"))
    project = await env.make_project()

    imported = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}]})
    exported = await project.post(EXPORT, {"format": "csv"})

    assert imported.status_code == 202, "the task is stored; the sweeper enqueues it when Redis is back"
    rows = await project.fetch("SELECT status FROM userio_import_task WHERE id = $1", imported.json()["id"])
    assert rows[0]["status"] == "pending"
    assert exported.status_code == 202, "likewise: its rate-limit bucket is in the database, not in Redis"
    rows = await project.fetch("SELECT status FROM userio_export_task WHERE id = $1", exported.json()["result"]["id"])
    assert rows[0]["status"] == "pending"
