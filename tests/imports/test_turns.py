"""A process applies `ImportConfig.chunks_at_once` chunks at a time; the others wait for a turn, leases held."""

from __future__ import annotations

import asyncio

import pytest
from asyncpg import connect

from litestar_userio.config import ImportConfig
from tests.helpers import IMPORT, until


def test_a_process_needs_at_least_one_turn():
    with pytest.raises(ValueError, match="chunks_at_once must be at least 1, got 0"):
        ImportConfig(chunks_at_once=0)


async def waits_on(project, session):
    """Whether some session waits on a lock `session` holds (read from another session: a transaction sees the
    activity view as it was when it first read it)."""
    rows = await project.fetch(
        "SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", session.get_server_pid()
    )
    return bool(rows)


async def chunk_rows(project, task_id):
    return await project.fetch(
        "SELECT seq, status, attempts FROM userio_import_chunk WHERE task_id = $1 ORDER BY seq", task_id
    )


@pytest.mark.parametrize("backend", ["postgres-arq"], indirect=True)
async def test_a_chunk_waits_for_the_turn_without_counting_a_run_then_completes(backend, make_env):
    """With one turn, chunk 0 holds it while blocked on its row (locked here); chunk 1 waits, uncounted."""
    env = await make_env(backend, imports={"chunk_size": 2, "chunks_at_once": 1})
    project = await env.make_project()
    records = [{"email": f"u{i}@example.com"} for i in range(4)]
    response = await project.post(IMPORT, {"identifier": "email", "records": records})
    task_id = response.headers["location"].rsplit("/", 1)[1]
    imports = env.services.imports

    blocker = await connect(env.config.database_url, server_settings={"search_path": env.config.database_schema})
    try:
        locked = blocker.transaction()
        await locked.start()
        await blocker.execute("SELECT 1 FROM userio_import_chunk WHERE task_id = $1 AND seq = 0 FOR UPDATE", task_id)
        first = asyncio.create_task(imports.process_chunk(task_id, 0))
        await until(lambda: waits_on(project, blocker), "chunk 0 takes the turn and waits on its row")
        second = asyncio.create_task(imports.process_chunk(task_id, 1))
        leases = [f"import:{task_id}:{seq}" for seq in (0, 1)]

        async def both_held():  # no other worker takes them
            return await imports.queue.leases.lapsed(leases) == set()

        await until(both_held, "chunk 1 holds its lease, waiting for the turn")

        assert not first.done() and not second.done()
        assert [dict(r) for r in await chunk_rows(project, task_id)] == [
            {"seq": 0, "status": "pending", "attempts": 0},
            {"seq": 1, "status": "pending", "attempts": 0},
        ]
        await locked.rollback()
    finally:
        await blocker.close()

    await asyncio.wait_for(asyncio.gather(first, second), timeout=30)
    assert [dict(r) for r in await chunk_rows(project, task_id)] == [
        {"seq": 0, "status": "done", "attempts": 1},
        {"seq": 1, "status": "done", "attempts": 1},
    ]
    body = (await project.get(response.headers["location"])).json()
    assert body["summary"] == {"total": 4, "inserted": 4, "updated": 0, "skipped": 0, "failed": 0}
