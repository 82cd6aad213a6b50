"""The change log written with every change (DECISIONS 16, docs/changes.md): one entry per committed change, from
every path, in the change's transaction; none for a no-op, a rollback or a skipped record; never a secret."""

from __future__ import annotations

from typing import Any

import pytest

from litestar_userio.changes.entries import ChangeOrigin
from litestar_userio.config import PasswordConfig
from tests.helpers import HASH_2B, TOTP_SECRET, run_import, until

pytestmark = pytest.mark.engine  # the append rides each engine's bulk path; the order is each engine's

CHANGES = "/_api/admin/users/changes"
USERS = "/_api/admin/users"


@pytest.fixture
async def env(backend, make_env):
    return await make_env(backend, passwords=PasswordConfig(bcrypt_cost=4))


@pytest.fixture
async def project(env):
    return await env.make_project()


async def call(project, method: str, path: str, body: Any = None) -> Any:
    kwargs: dict[str, Any] = {"headers": project.headers()}
    if body is not None:
        kwargs["json"] = body
    return await project.env.client.request(method, path, **kwargs)


async def feed(project, **params: Any) -> dict[str, Any]:
    response = await project.get(CHANGES, params=params)
    assert response.status_code == 200, response.text
    return response.json()["result"]


async def read_all(project) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = await feed(project, **({"cursor": cursor} if cursor else {}), limit=2)
        entries += page["items"]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            return entries


async def all_entries(project, count: int) -> list[dict[str, Any]]:
    """The project's whole log once it holds `count` entries (on PostgreSQL an entry shows once every older
    transaction of the cluster settled: docs/changes.md), and no more."""
    found: list[dict[str, Any]] = []

    async def enough() -> bool:
        found[:] = await read_all(project)
        return len(found) >= count

    await until(enough, f"{count} entries in the feed")
    return found


async def marker(project) -> None:
    """A change after the one under test: once its entry shows, every earlier committed entry does."""
    assert (await call(project, "POST", USERS, {"email": "marker@example.com"})).status_code == 201


async def test_every_admin_change_appends_one_entry_with_the_user_after_it(project):
    created = await call(project, "POST", USERS, {"email": "ada@example.com", "mfa": {"totp": {"secret": TOTP_SECRET}}})
    user = created.json()["result"]
    path = f"{USERS}/{user['sub']}"
    patched = (await call(project, "PATCH", path, {"name": "Ada"})).json()["result"]
    assert (await call(project, "PUT", f"{path}/password", {"password": "secret words"})).status_code == 204
    disabled = (await call(project, "POST", f"{path}/disable", {"reason": "left the company"})).json()["result"]
    enabled = (await call(project, "POST", f"{path}/enable")).json()["result"]
    assert (await call(project, "DELETE", path)).status_code == 204

    entries = await all_entries(project, 6)

    assert [e["type"] for e in entries] == [
        "user.created",
        "user.profile.updated",
        "user.profile.updated",
        "user.disabled",
        "user.reenabled",
        "user.deleted",
    ]
    assert {e["user_id"] for e in entries} == {user["sub"]}
    assert all(e["origin"] == {"kind": "admin_api"} for e in entries)
    assert len({e["id"] for e in entries}) == 6 and all(e["id"].startswith("change_") for e in entries)
    no_totp = [{**u, "mfa": {**u["mfa"], "totps": []}} for u in (user, patched, disabled, enabled)]
    assert [e["user"] for e in entries] == [no_totp[0], no_totp[1], entries[2]["user"], no_totp[2], no_totp[3], None]
    text = repr(entries)
    assert TOTP_SECRET not in text and "secret words" not in text and "$2b$" not in text
    assert "left the company" not in text  # never the admin's free-text reason


async def test_a_patch_that_changes_nothing_appends_nothing(project):
    user = (await call(project, "POST", USERS, {"email": "ada@example.com", "name": "Ada"})).json()["result"]
    again = await call(project, "PATCH", f"{USERS}/{user['sub']}", {"name": "Ada"})
    assert again.status_code == 200
    assert again.json()["result"] == user  # nothing written: not even updated_at
    await marker(project)
    assert [e["user_id"] for e in await all_entries(project, 2)][:1] == [user["sub"]]
    assert len(await read_all(project)) == 2


async def test_a_failed_change_leaves_no_entry(project):
    user = (await call(project, "POST", USERS, {"email": "ada@example.com"})).json()["result"]
    refused = await call(project, "PATCH", f"{USERS}/{user['sub']}", {"email": None})  # the last login id
    assert refused.status_code == 400
    await marker(project)
    assert [e["type"] for e in await all_entries(project, 2)] == ["user.created", "user.created"]
    assert len(await read_all(project)) == 2


async def test_an_import_appends_an_entry_per_inserted_or_updated_user_and_none_for_skipped(project):
    first = await run_import(project, [{"email": f"u{i}@example.com"} for i in range(3)])
    task = first["id"]
    await run_import(project, [{"email": "u0@example.com", "name": "Zero"}, {"email": "u1@example.com"}], upsert=False)
    second = await run_import(project, [{"email": "u0@example.com", "name": "Zero"}, {"email": "bad"}], upsert=True)

    await marker(project)
    entries = (await all_entries(project, 5))[:-1]

    assert [(e["type"], e["user"]["email"]) for e in entries] == [
        ("user.created", "u0@example.com"),
        ("user.created", "u1@example.com"),
        ("user.created", "u2@example.com"),
        ("user.profile.updated", "u0@example.com"),
    ]
    assert entries[0]["origin"] == {"kind": "import", "task_id": task}
    assert entries[3]["origin"] == {"kind": "import", "task_id": second["id"]}
    assert entries[3]["user"]["name"] == "Zero"


async def test_a_dry_run_appends_nothing(project):
    await run_import(project, [{"email": "u@example.com"}], dry_run=True)
    await marker(project)
    assert [e["user"]["email"] for e in await all_entries(project, 1)] == ["marker@example.com"]


async def test_an_entry_holds_the_user_as_the_export_writes_it(project):
    record = {
        "email": "ada@example.com",
        "phone_number": "+14155550100",
        "preferred_username": "ada",
        "name": "Ada",
        "address": {"locality": "London"},
        "password": {"type": "bcrypt", "password_hash": HASH_2B},
        "mfa": {"email": "second@example.com"},
        "custom_attributes": {},
        "identities": [{"type": "oauth", "provider_alias": "google", "subject": "g1", "claims": {"b": 1, "a": 2}}],
    }
    created = await call(project, "POST", USERS, record)
    assert created.status_code == 201, created.text
    user = created.json()["result"]
    assert [e["user"] for e in await all_entries(project, 1)] == [user]


async def test_origin_is_what_the_caller_says(project, env):
    user = (await call(project, "POST", USERS, {"email": "ada@example.com"})).json()["result"]
    record = await env.services.projects.get(project.id)
    await env.services.user_admin.update(record, user["sub"], b'{"name": "Ada"}', origin=ChangeOrigin("scim"))
    assert [e["origin"] for e in await all_entries(project, 2)] == [{"kind": "admin_api"}, {"kind": "scim"}]


async def test_a_bulk_import_keeps_each_entry_with_its_own_user(project):
    await run_import(project, [{"email": f"u{i}@example.com", "name": f"User {i}"} for i in range(40)])

    entries = await all_entries(project, 40)

    assert len(entries) == 40
    for entry in entries[::7]:
        response = await call(project, "GET", f"{USERS}/{entry['user_id']}")
        assert entry["user"] == response.json()["result"]
    assert sorted(e["user"]["name"] for e in entries) == sorted(f"User {i}" for i in range(40))
