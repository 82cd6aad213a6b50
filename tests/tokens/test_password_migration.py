"""Lazy migration (docs/reference.md#hooks-lazy-migration) through the token endpoint on both deployments: a loopback old system that only
checks passwords vouches for an unknown login id once; from then on the user signs in with the stored hash."""

from __future__ import annotations

import asyncio
import json

import jwt
import pytest

from tests.changes.test_log import all_entries, marker
from tests.helpers import import_one
from tests.hooks.test_migration_event import MIGRATION_HOOK, OldSystem
from tests.test_password_formats import argon2_hash
from tests.test_passwords import stored_hash
from tests.tokens.conftest import HOOKS, plugin_hook

OLD_KEY = "old-key-123456"
USERS = "/_api/admin/users"
PASSWORD = "right-pw-123"


async def set_up(world, old: OldSystem, source: str, *more: tuple[str, str]) -> None:
    """The project's hooks: `source` on `user.password_migration`, then `more` (event, source)."""
    headers = world.project.headers()
    client = world.project.env.client
    saved = await client.put(f"{HOOKS}/secrets/OLD_KEY", json={"value": OLD_KEY}, headers=headers)
    assert saved.status_code == 200, saved.text
    hooks = [("user.password_migration", source), *more]
    body = {"hooks": [{"event": e, "source": s} for e, s in hooks], "fetch_allowlist": [old.origin]}
    put = await client.put(HOOKS, json=body, headers=headers)
    assert put.status_code == 200, put.text


async def three_sign_ins(world, source: str) -> tuple[OldSystem, list]:
    """With `source` (a `%s` for the old system's origin) saved: a sign-in while the old system answers, then a
    right and a wrong password once it is gone; the old system (what it saw) and the three answers."""
    old = OldSystem()
    try:
        await set_up(world, old, source % old.origin)
        first = await world.sign_in(username="ann@example.com", password=PASSWORD)
    finally:
        old.close()
    second = await world.sign_in(username="ann@example.com", password=PASSWORD)
    wrong = await world.sign_in(username="ann@example.com", password="not-it-456")
    return old, [first, second, wrong]


async def users_named(world, login_id: str) -> list[dict]:
    found = await world.env.services.user_admin.find_by_login_id(world.project.id, login_id)
    return [] if found is None else [found]


async def test_an_unknown_user_is_migrated_once_then_signs_in_without_the_old_system(world) -> None:
    old, [first, second, wrong] = await three_sign_ins(world, MIGRATION_HOOK)

    assert first.status_code == 200, first.text
    assert "access_token" in first.json()
    assert len(old.seen) == 1
    assert second.status_code == 200, second.text
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    [user] = await users_named(world, "ann@example.com")
    assert user["name"] == "Ann" and user["custom_attributes"]["old_id"] == "old-1"


async def test_a_wrong_password_is_refused_and_creates_nobody(world) -> None:
    old = OldSystem()
    try:
        await set_up(world, old, MIGRATION_HOOK % old.origin)
        refused = await world.sign_in(username="ann@example.com", password="wrong-pw-789")
    finally:
        old.close()

    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    assert await users_named(world, "ann@example.com") == []
    assert "wrong-pw-789" not in refused.text


async def test_a_hook_that_throws_or_times_out_refuses_and_creates_nobody(world) -> None:
    old = OldSystem()
    try:
        throwing = "export default async function (e: any) { console.log('pw', e.payload.password);"
        throwing += " throw new Error('leak ' + e.payload.password); }"
        await set_up(world, old, throwing)
        thrown = await world.sign_in(username="ann@example.com", password=PASSWORD)
        await set_up(world, old, "export default async function () { while (true) {} }")
        timed_out = await world.sign_in(username="ann@example.com", password=PASSWORD)
    finally:
        old.close()
    await world.env.services.hooks.run_log.flush()
    runs = await world.project.get(f"{HOOKS}/runs")

    assert thrown.status_code == 400 and thrown.json()["error"] == "invalid_grant"
    assert timed_out.status_code == 400 and timed_out.json()["error"] == "invalid_grant"
    assert await users_named(world, "ann@example.com") == []
    logged = runs.json()["result"]["runs"]
    assert [r["outcome"] for r in logged] == ["error", "error"]
    assert {"level": "log", "message": "pw [secret]"} in logged[1]["console"]
    for response in (thrown, timed_out, runs):
        assert PASSWORD not in response.text


async def test_a_fetch_target_off_the_allowlist_is_named_in_the_run_log(world) -> None:
    old = OldSystem()
    try:
        await set_up(world, old, MIGRATION_HOOK % old.origin)
        # The hook's fetch target is not allowlisted: the sign-in fails closed; the run log must say why.
        body = {"hooks": [{"event": "user.password_migration", "source": MIGRATION_HOOK % old.origin}]}
        body["fetch_allowlist"] = ["https://old.example.com"]
        put = await world.project.env.client.put(HOOKS, json=body, headers=world.project.headers())
        assert put.status_code == 200, put.text
        refused = await world.sign_in(username="ann@example.com", password=PASSWORD)
    finally:
        old.close()
    await world.env.services.hooks.run_log.flush()
    runs = await world.project.get(f"{HOOKS}/runs")

    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    assert old.seen == []
    [logged] = runs.json()["result"]["runs"]
    assert (logged["outcome"], logged["error_kind"]) == ("error", "exception")
    assert {
        "level": "error",
        "message": f"fetch refused: {old.origin} is not on the project's fetch allowlist",
    } in logged["console"]
    assert PASSWORD not in runs.text


@pytest.mark.engine
async def test_concurrent_sign_ins_of_one_login_id_make_one_user(world) -> None:
    old = OldSystem()
    try:
        await set_up(world, old, MIGRATION_HOOK % old.origin)
        answers = await asyncio.gather(
            *(world.sign_in(username="ann@example.com", password=PASSWORD) for _ in range(3))
        )
    finally:
        old.close()

    assert [a.status_code for a in answers] == [200, 200, 200]
    assert len(old.seen) == 1
    rows = await world.project.fetch(
        "SELECT count(DISTINCT user_id) AS n FROM userio_identity WHERE project_id = $1 AND normalized_value = $2",
        world.project.id,
        "ann@example.com",
    )
    assert rows[0]["n"] == 1


async def test_the_sample_plugin_migrates_a_user(world) -> None:
    old = OldSystem()
    try:
        source = plugin_hook("migrate-from-old-system.ts").replace("https://auth.old.example.com", old.origin)
        source = source.replace("OLD_SYSTEM_KEY", "OLD_KEY")
        await set_up(world, old, source)
        signed_in = await world.sign_in(username="ann@example.com", password=PASSWORD)
    finally:
        old.close()

    assert signed_in.status_code == 200, signed_in.text
    [user] = await users_named(world, "ann@example.com")
    assert user["name"] == "Ann" and user["custom_attributes"]["old_id"] == "old-1"


MIGRATION_STATE = "/_api/admin/users/password-migration"
WAITING_HOOK = MIGRATION_HOOK.replace(
    "password: e.payload.password }", "password: e.payload.password, waiting: e.payload.user && e.payload.user.id }"
)


async def import_waiting(world, **members) -> str:
    detail = await import_one(
        world.project, {"email": "ann@example.com", "password": {"type": "migrate_on_sign_in"}, **members}
    )
    assert detail["outcome"] == "inserted", detail
    return detail["user_id"]


async def waiting_count(world) -> int:
    state = (await world.project.get(MIGRATION_STATE)).json()["result"]
    return state["formats"].get("migrate_on_sign_in", {}).get("users", 0)


async def test_a_waiting_user_is_completed_once_keeping_its_sub_then_signs_in_without_the_old_system(world) -> None:
    user_id = await import_waiting(world, name="Old Ann", custom_attributes={"old_id": "stale"})
    waiting_before = await waiting_count(world)
    old, [first, second, wrong] = await three_sign_ins(world, WAITING_HOOK)

    assert first.status_code == 200, first.text
    claims = jwt.decode(first.json()["access_token"], options={"verify_signature": False})
    assert claims["sub"] == user_id
    assert [seen["waiting"] for seen in old.seen] == [user_id]  # the hook got the waiting user, once
    assert second.status_code == 200, second.text
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    [user] = await users_named(world, "ann@example.com")
    assert user["sub"] == user_id
    assert user["name"] == "Ann" and user["custom_attributes"]["old_id"] == "old-1"
    assert (waiting_before, await waiting_count(world)) == (1, 0)


async def test_a_refused_or_failing_hook_leaves_the_user_waiting(world) -> None:
    user_id = await import_waiting(world)
    no_hook = await world.sign_in(username="ann@example.com", password=PASSWORD)
    old = OldSystem()
    try:
        await set_up(world, old, WAITING_HOOK % old.origin)
        refused = await world.sign_in(username="ann@example.com", password="wrong-pw-789")
        await set_up(world, old, "export default async function () { throw new Error('down'); }")
        failed = await world.sign_in(username="ann@example.com", password=PASSWORD)
    finally:
        old.close()

    for answer in (no_hook, refused, failed):
        assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant", answer.text
    assert len(old.seen) == 1
    [user] = await users_named(world, "ann@example.com")
    assert user["sub"] == user_id and "name" not in user
    assert await waiting_count(world) == 1


async def test_a_waiting_user_exports_as_a_user_without_password(world) -> None:
    waiting_id = await import_waiting(world)
    plain = await import_one(world.project, {"email": "bob@example.com"})
    admin = world.env.services.user_admin

    waiting = await admin.get(world.project.id, waiting_id)
    without = await admin.get(world.project.id, plain["user_id"])

    varying = {"sub", "email", "identities", "created_at", "updated_at"}
    assert {k: v for k, v in waiting.items() if k not in varying} == {
        k: v for k, v in without.items() if k not in varying
    }
    assert "migrate_on_sign_in" not in json.dumps(waiting)


SCRYPT_BOMB_HOOK = """
export default async function (e: any): Promise<any> {
  return { is_allowed: true, user: { name: "Ann", mfa: { password: {
    type: "scrypt", password_hash: "$scrypt$ln=17,r=64,p=1$c2FsdA$aGFzaA" } } } };
}
"""


async def test_a_migration_record_with_a_hash_above_the_scrypt_memory_bound_creates_nobody(world) -> None:
    old = OldSystem()
    try:
        await set_up(world, old, SCRYPT_BOMB_HOOK)
        refused = await world.sign_in(username="ann@example.com", password=PASSWORD)
    finally:
        old.close()

    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant", refused.text
    assert await users_named(world, "ann@example.com") == []


REFUSE_OLD_USERS = """
export default async function (e: any): Promise<any> {
  if (e.payload.user.custom_attributes.old_id === "old-1") {
    return { is_allowed: false, title: "Closed", reason: "no migrations from the old system today" };
  }
  return { is_allowed: true };
}
"""


async def test_pre_create_refuses_a_lazy_migrations_creation_as_a_wrong_password_and_writes_nothing(world) -> None:
    old = OldSystem()
    try:
        await set_up(world, old, MIGRATION_HOOK % old.origin, ("user.pre_create", REFUSE_OLD_USERS))
        refused = await world.sign_in(username="ann@example.com", password=PASSWORD)
    finally:
        old.close()
    wrong = await world.sign_in(password="not-it-456")  # Ada, imported: a plain wrong password
    await marker(world.project)

    assert len(old.seen) == 1  # the old system vouched for Ann: the user.pre_create hook refused her creation
    assert refused.status_code == 400, refused.text
    assert refused.json() == wrong.json() and refused.json()["error"] == "invalid_grant"
    assert "no migrations" not in refused.text  # the sign-in's answer never tells why
    assert await users_named(world, "ann@example.com") == []
    entries = await all_entries(world.project, 2)
    assert [(e["type"], e["origin"]["kind"], e["user"]["email"]) for e in entries] == [
        ("user.created", "import", "ada@example.com"),
        ("user.created", "admin_api", "marker@example.com"),
    ]


async def test_pre_create_mutations_apply_to_a_lazy_migrations_creation(world) -> None:
    await world.env.services.projects.add_keys(world.project.id, "userio_role", ("member",))
    old = OldSystem()
    try:
        await set_up(world, old, MIGRATION_HOOK % old.origin, ("user.pre_create", plugin_hook("add-default-role.ts")))
        signed_in = await world.sign_in(username="ann@example.com", password=PASSWORD)
    finally:
        old.close()

    assert signed_in.status_code == 200, signed_in.text
    listed = await world.project.get(USERS, params={"login_id": "ann@example.com"})
    [user] = listed.json()["result"]["items"]
    assert user["roles"] == ["member"] and user["custom_attributes"]["old_id"] == "old-1"


async def test_a_lazy_migration_logs_its_changes_as_sign_in_without_a_secret_and_a_re_hash_logs_nothing(world) -> None:
    legacy = {"type": "argon2", "password_hash": argon2_hash(PASSWORD)}
    bob = await import_one(world.project, {"email": "bob@example.com", "password": legacy})
    assert bob["outcome"] == "inserted", bob
    imported = await all_entries(world.project, 2)  # Ada's and Bob's

    _, [first, second, _] = await three_sign_ins(world, MIGRATION_HOOK)
    rehashed = await world.sign_in(username="bob@example.com", password=PASSWORD)
    await marker(world.project)

    assert first.status_code == 200 and second.status_code == 200, first.text
    assert rehashed.status_code == 200, rehashed.text
    [ann] = await users_named(world, "ann@example.com")
    assert (await stored_hash(world.project, bob["user_id"])).startswith("$2b$04$")  # Bob's Argon2 hash, re-hashed
    entries = (await all_entries(world.project, len(imported) + 3))[len(imported) :]
    assert [(e["type"], e["origin"], e["user"]["email"]) for e in entries] == [
        ("user.created", {"kind": "sign_in"}, "ann@example.com"),
        ("user.profile.updated", {"kind": "sign_in"}, "ann@example.com"),  # her password, in the project's algorithm
        ("user.created", {"kind": "admin_api"}, "marker@example.com"),  # nothing for Bob's re-hash
    ]
    assert [e["user_id"] for e in entries[:2]] == [ann["sub"], ann["sub"]]
    assert entries[1]["user"] == {**ann, "last_login_at": None}  # the user after the change, before the sign-in
    text = json.dumps(entries)
    assert "$2b$" not in text and PASSWORD not in text and "password_hash" not in text
