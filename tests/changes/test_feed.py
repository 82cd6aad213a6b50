"""The feed's cursors and retention (DECISIONS 16): `latest`, a foreign or forged cursor (400), an expired one
(410), purged by the sweep."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from litestar_userio.changes.cursors import encode_cursor
from litestar_userio.changes.entries import Position
from litestar_userio.config import ChangeLogConfig
from litestar_userio.jobs import sweep
from litestar_userio.queue.queue_protocol import CONTEXT_KEY
from tests.changes.test_log import CHANGES, USERS, all_entries, call, feed

RETENTION = timedelta(days=2)


@pytest.fixture
async def env(backend, make_env):
    return await make_env(backend, changes=ChangeLogConfig(retention=RETENTION))


@pytest.fixture
async def project(env):
    return await env.make_project()


async def create(project, email: str) -> dict[str, Any]:
    response = await call(project, "POST", USERS, {"email": email})
    assert response.status_code == 201, response.text
    return response.json()["result"]


async def error(project, **params: Any) -> tuple[int, dict[str, Any]]:
    response = await project.get(CHANGES, params=params)
    return response.status_code, response.json()["error"]


async def test_latest_follows_from_now(project):
    await create(project, "a@example.com")
    await all_entries(project, 1)
    latest = await feed(project, cursor="latest")
    assert latest["items"] == [] and latest["has_more"] is False
    await create(project, "b@example.com")
    await all_entries(project, 2)
    after = await feed(project, cursor=latest["next_cursor"])
    assert [e["user"]["email"] for e in after["items"]] == ["b@example.com"]
    assert (await feed(project, cursor=after["next_cursor"]))["items"] == []


async def test_each_entry_cursor_resumes_right_after_it(project):
    for i in range(3):
        await create(project, f"u{i}@example.com")
    entries = await all_entries(project, 3)
    rest = await feed(project, cursor=entries[0]["cursor"])
    assert [e["id"] for e in rest["items"]] == [e["id"] for e in entries[1:]]


async def test_an_empty_page_keeps_its_cursor(project):
    page = await feed(project)
    assert page == {"items": [], "next_cursor": page["next_cursor"], "has_more": False}
    assert (await feed(project, cursor=page["next_cursor"]))["items"] == []


async def test_a_cursor_of_another_project_is_refused(project, env):
    other = await env.make_project()
    cursor = (await feed(other, cursor="latest"))["next_cursor"]
    status, body = await error(project, cursor=cursor)
    assert (status, body["name"], body["reason"]) == (400, "Invalid", "InvalidCursor")


@pytest.mark.parametrize("cursor", ["not-a-cursor", "AAAA", "x" * 40])
async def test_a_forged_cursor_is_refused(project, cursor):
    status, body = await error(project, cursor=cursor)
    assert (status, body["name"], body["reason"]) == (400, "Invalid", "InvalidCursor")


async def test_a_cursor_with_a_changed_position_is_refused(project):
    cursor = (await feed(project, cursor="latest"))["next_cursor"]
    forged = encode_cursor(project.id, Position(0, 7))[:-2] + cursor[-2:]
    assert forged != cursor
    status, body = await error(project, cursor=forged)
    assert (status, body["reason"]) == (400, "InvalidCursor")


@pytest.mark.parametrize("limit", [0, 1001])
async def test_limit_is_bounded(project, limit):
    response = await project.get(CHANGES, params={"limit": limit})
    assert response.status_code == 400


async def test_the_sweep_purges_entries_past_retention_and_an_older_cursor_answers_410(project, env):
    start = (await feed(project, cursor="latest"))["next_cursor"]  # before the first entry
    await create(project, "old@example.com")
    old = await all_entries(project, 1)
    env.clock.advance(RETENTION - timedelta(hours=1))
    await create(project, "kept@example.com")
    await all_entries(project, 2)
    env.clock.advance(timedelta(hours=2))  # the first entry is now past retention, the second is not

    await sweep({CONTEXT_KEY: env.services})

    kept = await feed(project)
    assert [e["user"]["email"] for e in kept["items"]] == ["kept@example.com"]
    status, body = await error(project, cursor=start)
    assert (status, body["name"], body["reason"]) == (410, "Gone", "ChangeCursorExpired")
    resumed = await feed(project, cursor=old[0]["cursor"])  # a consumer that saw the purged entry misses nothing
    assert [e["user"]["email"] for e in resumed["items"]] == ["kept@example.com"]
