"""A consumer following `next_cursor` sees every committed entry exactly once, in one order, while many writers
commit at once (DECISIONS 16, issue 42 item 2; docs/changes.md#order).

PostgreSQL is the subject: its writers commit concurrently, and an entry whose position was drawn early may commit
late. Two slow writers append first and commit only after the fast writers (the single-user API and an import)
committed theirs; the reader follows with pages of 3 throughout.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from litestar_userio.changes.change_repository import ChangeRepository
from litestar_userio.changes.entries import ChangeOrigin, UserChange
from tests.changes.test_log import CHANGES, read_all
from tests.helpers import IMPORT

pytestmark = pytest.mark.engine

FAST_WRITERS = 6
CHANGES_EACH = 15
IMPORTED = 300


@pytest.mark.parametrize("backend", ["postgres-inprocess"], indirect=True)
async def test_a_reader_with_small_pages_sees_every_entry_once_in_order_under_concurrent_writers(env):
    project = await env.make_project()
    record = await env.services.projects.get(project.id)
    assert record is not None
    fast_done = asyncio.Event()
    slow_appended = 0

    async def fast(writer: int) -> None:
        for i in range(CHANGES_EACH):
            body = f'{{"email": "w{writer}-{i}@example.com"}}'.encode()
            await env.services.user_admin.create(record, body)

    async def slow(writer: int) -> None:
        nonlocal slow_appended
        async with env.services.db.transaction() as tx:
            change = UserChange(f"slow-{writer}", "updated", b"{}")
            await ChangeRepository().append(tx, project.id, [change], ChangeOrigin("cli"), env.clock.now())
            slow_appended += 1
            await fast_done.wait()  # drawn before every fast entry, committed after them all

    async def writers() -> None:
        slow_tasks = [asyncio.create_task(slow(w)) for w in range(2)]
        while slow_appended < 2:
            await asyncio.sleep(0)
        response = await project.post(
            IMPORT, {"identifier": "email", "records": [{"email": f"i{i}@example.com"} for i in range(IMPORTED)]}
        )
        assert response.status_code == 202, response.text
        await asyncio.gather(*(fast(w) for w in range(FAST_WRITERS)), env.drain())
        fast_done.set()
        await asyncio.gather(*slow_tasks)

    seen: list[dict[str, Any]] = []
    expected = FAST_WRITERS * CHANGES_EACH + IMPORTED + 2

    async def reader() -> None:
        cursor: str | None = None
        while len(seen) < expected:
            params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
            response = await project.get(CHANGES, params=params)
            assert response.status_code == 200, response.text
            page = response.json()["result"]
            seen.extend(page["items"])
            cursor = page["next_cursor"]
            if not page["items"]:
                await asyncio.sleep(0.005)  # let the writers run; the loop's end is the count, not the time

    await asyncio.wait_for(asyncio.gather(writers(), reader()), timeout=120)

    ids = [entry["id"] for entry in seen]
    assert len(ids) == len(set(ids)) == expected
    final = await read_all(project)
    assert [entry["id"] for entry in final] == ids  # one order: what the follower saw is the log's order
    assert {entry["user_id"] for entry in seen} >= {"slow-0", "slow-1"}
    page = (await project.get(CHANGES, params={"cursor": seen[-1]["cursor"]})).json()["result"]
    assert page["items"] == []
