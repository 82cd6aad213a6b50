"""Two deployments misconfigured onto one Redis queue (the same Redis database and `queue_name`), issue 46.

Deployment A (PostgreSQL) and B (SQLite), each with its own database, and real arq workers of each reading the one
queue. Before, a worker that took the other deployment's chunk job found no chunk in its own database and counted
the job as done: that task stayed pending until a sweep. Now each job carries its deployment's id; a worker that
takes another deployment's job says so in one log line naming both and puts the job back for its owner.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

import pytest

from litestar_userio import QueueConfig
from tests.conftest import Backend
from tests.helpers import IMPORT, until

pytestmark = [pytest.mark.engine, pytest.mark.slow]


async def test_a_worker_leaves_another_deployments_job_to_it_and_names_both(
    postgres_url, sqlite_url, redis_url, make_env
):
    shared = {"queue_name": f"userio:test:shared:{uuid.uuid4().hex[:8]}"}
    a = await make_env(Backend("postgres-arq", postgres_url, redis_url), queue=dict(shared))
    b = await make_env(Backend("sqlite-arq", sqlite_url, redis_url), queue=dict(shared))
    ids = [env.services.queue.deployment_id for env in (a, b)]
    assert None not in ids and ids[0] != ids[1], "each deployment has its own id, stored in its own database"
    projects = [await env.make_project() for env in (a, b)]
    lines: list[str] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("litestar_userio.worker").addHandler(handler)

    posted = []
    for project in projects:
        response = await project.post(
            IMPORT, {"identifier": "email", "records": [{"email": "x@example.com"}, {"email": "y@example.com"}]}
        )
        assert response.status_code == 202, response.text
        posted.append(response.headers["location"])

    def shared_queue_lines() -> list[str]:
        return [line for line in lines if "shared by two deployments" in line]

    # B's worker meets A's job first: it must not take it as done. Both burst workers run in this test's one event
    # loop beside both apps, passing the other's jobs back and forth until their owner takes them; at a load of 15
    # on 2 cores the test once took over a minute (CI). They poll at the shipped interval rather than in a busy
    # loop (`drain`'s default), which took the loop from the jobs and apps; the deadlines bound a hang (each waits
    # on an event, not a timer) and time nothing.
    poll = {"poll_delay": QueueConfig.worker_poll_delay.total_seconds()}
    b_workers = asyncio.create_task(b.drain(**poll))
    try:
        # (or B's worker to have ended: awaited below, its error is the test's)
        await until(lambda: bool(shared_queue_lines()) or b_workers.done(), "B's worker to name A's job", timeout=180)
        await asyncio.wait_for(a.drain(**poll), 300)
        await asyncio.wait_for(b_workers, 300)
    finally:
        b_workers.cancel()
        logging.getLogger("litestar_userio.worker").removeHandler(handler)

    for project, location in zip(projects, posted, strict=True):
        body = (await project.get(location)).json()
        assert body["status"] == "completed", body
        assert body["summary"]["inserted"] == 2
    assert len(shared_queue_lines()) <= 2, "one line per worker that met the other deployment's jobs"
    line = shared_queue_lines()[0]
    assert ids[0] in line and ids[1] in line and shared["queue_name"] in line
    assert "queue_name" in line  # says what to change
