"""An import chunk's entries are one row of the log (migration 2026-12-02T03), and read as entries everywhere: the
feed pages through it from inside, the sweep purges it whole, a delta export starts inside it."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from litestar_userio.config import ChangeLogConfig, PasswordConfig
from litestar_userio.jobs import sweep
from litestar_userio.queue.queue_protocol import CONTEXT_KEY
from tests.changes.test_delta_export import snapshot
from tests.changes.test_log import USERS, all_entries, call, feed
from tests.helpers import run_import

pytestmark = pytest.mark.engine  # the bulk row's positions are each engine's (an identity's block, SQLite's max)

RETENTION = timedelta(days=2)
IMPORTED = 40  # above the bulk append's 32


@pytest.fixture
async def env(backend, make_env):
    return await make_env(
        backend, passwords=PasswordConfig(bcrypt_cost=4), changes=ChangeLogConfig(retention=RETENTION)
    )


@pytest.fixture
async def project(env):
    return await env.make_project()


async def create(project, email: str) -> None:
    assert (await call(project, "POST", USERS, {"email": email})).status_code == 201


async def import_users(project) -> None:
    await run_import(project, [{"email": f"user{i}@example.com"} for i in range(IMPORTED)])


async def test_a_consumer_pages_through_an_imports_entries_from_inside_its_one_row(project):
    await create(project, "before@example.com")
    await import_users(project)
    await create(project, "after@example.com")

    entries = await all_entries(project, IMPORTED + 2)  # pages of 2: most cursors point inside the import's row
    emails = [e["user"]["email"] for e in entries]
    assert emails == ["before@example.com", *(f"user{i}@example.com" for i in range(IMPORTED)), "after@example.com"]
    assert len({e["id"] for e in entries}) == len({e["cursor"] for e in entries}) == IMPORTED + 2
    assert {e["origin"]["kind"] for e in entries[1:-1]} == {"import"}
    assert {e["type"] for e in entries} == {"user.created"}
    for index in (0, 1, 17, IMPORTED):  # each entry's cursor resumes right after it, inside the row too
        page = await feed(project, cursor=entries[index]["cursor"], limit=3)
        assert [e["id"] for e in page["items"]] == [e["id"] for e in entries[index + 1 : index + 4]]
    rows = await project.fetch("SELECT entries FROM userio_change WHERE project_id = $1", project.id)
    assert sorted(r["entries"] or 1 for r in rows) == [1, 1, IMPORTED]  # the import's entries: one row


async def test_the_sweep_purges_an_imports_row_and_a_cursor_inside_it_answers_410(project, env):
    await import_users(project)
    inside = (await all_entries(project, IMPORTED))[9]["cursor"]
    env.clock.advance(RETENTION + timedelta(hours=1))
    await create(project, "kept@example.com")
    await all_entries(project, IMPORTED + 1)

    await sweep({CONTEXT_KEY: env.services})

    assert [e["user"]["email"] for e in (await feed(project))["items"]] == ["kept@example.com"]
    response = await project.get("/_api/admin/users/changes", params={"cursor": inside})
    assert response.status_code == 410, response.text
    assert response.json()["error"]["reason"] == "ChangeCursorExpired"


async def test_a_delta_since_a_cursor_inside_an_imports_row_holds_the_users_after_it(project):
    await import_users(project)
    entries = await all_entries(project, IMPORTED)

    data, _ = await snapshot(project, since=entries[9]["cursor"])

    emails = sorted(json.loads(line)["email"] for line in data.splitlines() if line)
    assert emails == sorted(f"user{i}@example.com" for i in range(10, IMPORTED))
