"""The `userio.change` event (docs/reference.md#events, docs/changes.md#consumers): each committed change of a user,
as the feed's entry (its `id` drops a duplicate), beside the `userio.user.<kind>` events, whose argument stays the
exported record. A real Litestar app and real listeners; none for a change that rolled back, none for an import."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.events import listener

from litestar_userio.changes.entries import ADMIN_API
from litestar_userio.config import PasswordConfig
from litestar_userio.users.user_repository import UserRepository
from tests.changes.test_log import USERS, all_entries, call, marker
from tests.helpers import run_import, until

CHANGES: list[dict[str, Any]] = []
UPDATED: list[Any] = []


@listener("userio.change")
async def on_change(entry: dict[str, Any]) -> None:
    CHANGES.append(entry)


@listener("userio.user.updated")
async def on_updated(user: Any) -> None:  # a host's listener of one user event, written as before `userio.change`
    UPDATED.append(user)


@pytest.fixture
async def env(backend, make_env):
    CHANGES.clear()
    UPDATED.clear()
    return await make_env(backend, passwords=PasswordConfig(bcrypt_cost=4), listeners=[on_change, on_updated])


@pytest.fixture
async def project(env):
    return await env.make_project()


def emitted(*user_ids: str) -> list[dict[str, Any]]:
    """The `userio.change` events of these users (another test's app may emit into these lists: docs/changes.md)."""
    return [entry for entry in CHANGES if entry["user_id"] in user_ids]


async def test_each_change_emits_its_feed_entry_with_the_same_id(project):
    user = (await call(project, "POST", USERS, {"email": "ada@example.com"})).json()["result"]
    path = f"{USERS}/{user['sub']}"
    assert (await call(project, "PATCH", path, {"name": "Ada"})).status_code == 200
    assert (await call(project, "PUT", f"{path}/password", {"password": "secret words"})).status_code == 204
    assert (await call(project, "POST", f"{path}/disable", {"reason": "left the company"})).status_code == 200
    assert (await call(project, "POST", f"{path}/enable")).status_code == 200
    assert (await call(project, "DELETE", path)).status_code == 204

    await until(lambda: len(emitted(user["sub"])) >= 6, "six userio.change events delivered")
    feed = await all_entries(project, 6)

    events = emitted(user["sub"])
    assert [e["id"] for e in events] == [e["id"] for e in feed]
    assert len({e["id"] for e in events}) == 6
    assert events == feed  # the entry exactly as the feed serializes it: cursor, type, origin, user (null: deleted)
    assert [e["type"] for e in events] == [
        "user.created",
        "user.profile.updated",
        "user.profile.updated",
        "user.disabled",
        "user.reenabled",
        "user.deleted",
    ]
    assert events[0]["origin"] == {"kind": "admin_api"} and events[-1]["user"] is None
    assert "secret words" not in repr(events) and "$2b$" not in repr(events) and "left the company" not in repr(events)


async def test_a_listener_of_one_user_event_still_gets_the_bare_record(project):
    user = (await call(project, "POST", USERS, {"email": "ada@example.com"})).json()["result"]
    patched = (await call(project, "PATCH", f"{USERS}/{user['sub']}", {"name": "Ada"})).json()["result"]

    await until(lambda: len(emitted(user["sub"])) >= 2, "the update's userio.change delivered")
    await until(lambda: any(u.get("sub") == user["sub"] for u in UPDATED), "userio.user.updated delivered")

    assert [u for u in UPDATED if u.get("sub") == user["sub"]] == [patched]  # the record itself, not an entry


async def delete_then_roll_back(env, project_id: str, user: dict[str, Any]) -> None:
    """The user's deletion and its entry written in a transaction that then fails: both roll back."""
    async with env.services.db.transaction() as tx:
        await UserRepository().delete_user(tx, project_id, user["sub"], last=user, origin=ADMIN_API, at=env.clock.now())
        raise RuntimeError("rolled back")


async def test_a_change_that_rolled_back_emits_none(project, env):
    user = (await call(project, "POST", USERS, {"email": "ada@example.com"})).json()["result"]
    await until(lambda: emitted(user["sub"]), "the creation's userio.change delivered")
    with pytest.raises(RuntimeError, match="rolled back"):
        await delete_then_roll_back(env, project.id, user)
    env.services.changes.wake(project.id)
    await marker(project)

    entries = await all_entries(project, 2)
    await until(lambda: emitted(entries[-1]["user_id"]), "the marker's userio.change delivered")  # emitted in order

    assert [e["type"] for e in entries] == ["user.created", "user.created"]
    assert [e["type"] for e in emitted(user["sub"])] == ["user.created"]
    assert (await call(project, "GET", f"{USERS}/{user['sub']}")).status_code == 200


async def test_an_imports_records_emit_none(project):
    await run_import(project, [{"email": f"u{i}@example.com"} for i in range(3)])
    await marker(project)

    entries = await all_entries(project, 4)
    await until(lambda: emitted(entries[-1]["user_id"]), "the marker's userio.change delivered")

    assert [e["origin"]["kind"] for e in entries] == ["import"] * 3 + ["admin_api"]
    assert emitted(*(e["user_id"] for e in entries)) == entries[-1:]
