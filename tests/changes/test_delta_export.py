"""Snapshots and deltas that add up (DECISIONS 16, issue 42 item 4): every export names its watermark; an export
`since` one holds the users changed after it and a tombstone per deleted one; applied in order, snapshot and deltas
equal a fresh full export, also while writers are busy."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from typing import Any

import pytest

from tests.changes.test_log import USERS, call
from tests.exports.helpers import export_and_wait, exported_bytes, initiate

pytestmark = pytest.mark.engine  # the export's snapshot and the log's order are each engine's


@pytest.fixture
async def project(env):
    return await env.make_project()


async def create(project, email: str, **attributes: Any) -> dict[str, Any]:
    response = await call(project, "POST", USERS, {"email": email, **attributes})
    assert response.status_code == 201, response.text
    return response.json()["result"]


def lines(data: bytes) -> dict[str, bytes]:
    """sub -> its ndjson line."""
    return {json.loads(line)["sub"]: line for line in data.splitlines()}


def apply(state: dict[str, bytes], delta: bytes) -> dict[str, bytes]:
    state = dict(state)
    for line in delta.splitlines():
        member = json.loads(line)
        if member.get("deleted") is True and set(member) == {"sub", "deleted"}:
            state.pop(member["sub"], None)
        else:
            state[member["sub"]] = line
    return state


async def snapshot(project, **body: Any) -> tuple[bytes, str]:
    result = await export_and_wait(project, {"format": "ndjson", **body})
    data = await exported_bytes_of(project, result)
    return data, result["watermark"]


async def exported_bytes_of(project, result: dict[str, Any]) -> bytes:
    from tests.exports.helpers import download

    response = await download(project, result["download_url"])
    assert response.status_code == 200, response.text
    return response.content


async def test_a_delta_holds_the_changed_users_and_a_tombstone_per_deleted_one(project):
    kept = await create(project, "kept@example.com")
    changed = await create(project, "changed@example.com")
    gone = await create(project, "gone@example.com")
    full, watermark = await snapshot(project)
    assert set(lines(full)) == {kept["sub"], changed["sub"], gone["sub"]}

    await call(project, "PATCH", f"{USERS}/{changed['sub']}", {"name": "Changed"})
    await call(project, "DELETE", f"{USERS}/{gone['sub']}")
    new = await create(project, "new@example.com")
    brief = await create(project, "brief@example.com")
    await call(project, "DELETE", f"{USERS}/{brief['sub']}")

    delta, next_watermark = await snapshot(project, since=watermark)

    members = [json.loads(line) for line in delta.splitlines()]
    assert [m["sub"] for m in members] == sorted(m["sub"] for m in members)
    assert {m["sub"] for m in members} >= {changed["sub"], gone["sub"], new["sub"], brief["sub"]}
    by_sub = {m["sub"]: m for m in members}
    assert by_sub[gone["sub"]] == {"sub": gone["sub"], "deleted": True}
    assert by_sub[brief["sub"]] == {"sub": brief["sub"], "deleted": True}  # created and deleted in between
    assert by_sub[changed["sub"]]["name"] == "Changed"
    fresh, _ = await snapshot(project)
    assert apply(lines(full), delta) == lines(fresh)  # byte for byte per user line
    again, _ = await snapshot(project, since=next_watermark)  # nothing changed since: at most a repeat
    assert apply(lines(fresh), again) == lines(fresh)


async def test_a_csv_delta_ends_each_row_with_deleted(project):
    user = await create(project, "a@example.com")
    gone = await create(project, "gone@example.com")
    _, watermark = await snapshot(project)
    await call(project, "PATCH", f"{USERS}/{user['sub']}", {"name": "A"})
    await call(project, "DELETE", f"{USERS}/{gone['sub']}")

    fields = [{"pointer": "/sub", "field_name": "sub"}, {"pointer": "/name", "field_name": "name"}]
    data = await exported_bytes(project, {"format": "csv", "csv": {"fields": fields}, "since": watermark})

    rows = list(csv.reader(io.StringIO(data.decode())))
    expected = sorted([[user["sub"], "A", "false"], [gone["sub"], "", "true"]])
    assert rows == [["sub", "name", "deleted"], *expected]


async def test_since_is_checked_at_initiate(project, env):
    other = await env.make_project()
    _, foreign = await snapshot(other)
    response = await initiate(project, {"format": "ndjson", "since": foreign})
    assert response.status_code == 400
    assert response.json()["error"]["reason"] == "InvalidCursor"
    response = await initiate(project, {"format": "ndjson", "since": "garbage"})
    assert (response.status_code, response.json()["error"]["reason"]) == (400, "InvalidCursor")


async def test_snapshot_and_deltas_add_up_while_writers_are_busy(project, env):
    for i in range(20):
        await create(project, f"seed{i}@example.com")
    stop = asyncio.Event()
    errors: list[BaseException] = []

    async def writer(n: int) -> None:
        i = 0
        try:
            while not stop.is_set():
                user = await create(project, f"w{n}-{i}@example.com")
                await call(project, "PATCH", f"{USERS}/{user['sub']}", {"name": f"n{i}"})
                if i % 3 == 0:
                    await call(project, "DELETE", f"{USERS}/{user['sub']}")
                i += 1
                await asyncio.sleep(0)
        except BaseException as error:  # pragma: no cover  # reported below
            errors.append(error)

    writers = [asyncio.create_task(writer(n)) for n in range(3)]
    first, watermark = await snapshot(project)
    state = lines(first)
    for _ in range(3):
        delta, watermark = await snapshot(project, since=watermark)
        state = apply(state, delta)
    stop.set()
    await asyncio.gather(*writers)
    assert errors == []
    delta, watermark = await snapshot(project, since=watermark)
    state = apply(state, delta)

    fresh, _ = await snapshot(project)
    assert state == lines(fresh)
    assert len(state) > 20
