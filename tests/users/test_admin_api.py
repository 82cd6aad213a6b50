"""The single-user lifecycle over HTTP and in Python (DECISIONS 11), on both deployments.

Bodies are the export's ndjson record; every error is the export's envelope; each change emits one Litestar
event whose argument is that record.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.events import listener

from litestar_userio import PasswordConfig
from litestar_userio.errors import RefreshTokenInvalid
from tests.exports.helpers import exported_bytes
from tests.helpers import HASH_2B, PASSWORD, authenticators, identities, import_one, memberships, until
from userio_core.attribute_formats import SPECIAL_USE_HINT
from userio_core.clock import FrozenClock

USERS = "/_api/admin/users"
NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)
EVENTS: list[tuple[str, Any]] = []
TOTP_SECRET = "JBSWY3DPEHPK3PXP"


def _recorder(event_id: str) -> Any:
    @listener(event_id)
    async def record(payload: Any) -> None:
        EVENTS.append((event_id, payload))

    return record


LISTENERS = [
    _recorder(e)
    for e in (
        "userio.user.created",
        "userio.user.updated",
        "userio.user.password_changed",
        "userio.user.disabled",
        "userio.user.enabled",
        "userio.user.deleted",
        "userio.import.completed",
    )
]


@pytest.fixture
async def env(backend, make_env):
    EVENTS.clear()
    return await make_env(
        backend,
        clock=FrozenClock(NOW),
        passwords=PasswordConfig(bcrypt_cost=4),
        listeners=LISTENERS,
    )


@pytest.fixture
async def project(env):
    return await env.make_project(roles=("admin", "staff"))


async def call(project, method: str, path: str, body: Any = None, **kwargs: Any):
    headers = {**project.headers(), **kwargs.pop("headers", {})}
    if body is not None:
        kwargs["json"] = body
    return await project.env.client.request(method, path, headers=headers, **kwargs)


async def create(project, **record: Any) -> dict[str, Any]:
    response = await call(project, "POST", USERS, {"email": "ada@example.com", **record})
    assert response.status_code == 201, response.text
    return response.json()["result"]


async def exported(project) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (await exported_bytes(project, {"format": "ndjson"})).decode().splitlines()]


def error_of(response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == response.status_code
    return body["error"]


async def test_create_answers_201_with_the_record_the_export_writes(project):
    user = await create(project, name="Ada", roles=["admin"], password={"type": "bcrypt", "password_hash": HASH_2B})
    assert user["email"] == "ada@example.com" and user["name"] == "Ada" and user["roles"] == ["admin"]
    assert user["disabled"] is False
    assert "password" not in json.dumps(user)
    got = await call(project, "GET", f"{USERS}/{user['sub']}")
    assert got.status_code == 200 and got.json() == {"result": user}
    assert await exported(project) == [user]
    assert await project.env.services.users.verify_password(project.id, "ADA@example.com", PASSWORD) == user["sub"]


async def test_create_gives_the_imports_warnings_beside_the_result(project):
    response = await call(project, "POST", USERS, {"email": "ada@example.com", "disabled": False})
    assert response.status_code == 201
    assert response.json()["warnings"] == ["disabled = false has no effect in insert."]


@pytest.mark.engine
async def test_create_refuses_a_taken_login_id_as_the_import_does(project):
    await create(project)
    response = await call(project, "POST", USERS, {"email": "ADA@example.com"})
    assert response.status_code == 400
    error = error_of(response)
    assert (error["name"], error["reason"]) == ("Invalid", "InvariantViolated")
    assert error["info"] == {"cause": {"kind": "DuplicatedIdentity"}}


async def test_create_without_a_login_id_is_validation_failed(project):
    response = await call(project, "POST", USERS, {"name": "Nobody"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["reason"] == "ValidationFailed"
    assert error["info"]["causes"][0]["kind"] == "required"


async def test_create_reports_the_imports_causes(project):
    response = await call(project, "POST", USERS, {"email": "not an email", "roles": ["nope"]})
    assert response.status_code == 400
    assert error_of(response)["info"]["causes"][0]["location"] == "/email"
    unknown = await call(project, "POST", USERS, {"email": "ada@example.com", "roles": ["nope"]})
    assert unknown.status_code == 404
    assert (error_of(unknown)["reason"], error_of(unknown)["info"]) == ("RoleUnknownKeys", {"keys": ["nope"]})


async def test_create_and_patch_refuse_a_reserved_domain_with_the_validators_reason(project):
    reason = "The part after the @-sign is a special-use or reserved name that cannot be used with email."
    response = await call(project, "POST", USERS, {"email": "grace@acme.test"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["reason"] == "ValidationFailed" and reason in error["message"]
    assert error["info"]["causes"][0]["details"] == {
        "error": f"invalid email address: {reason} {SPECIAL_USE_HINT}",
        "format": "email",
    }
    user = await create(project)
    patched = await call(project, "PATCH", f"{USERS}/{user['sub']}", {"email": "grace@acme.test"})
    assert patched.status_code == 400 and reason in error_of(patched)["message"]
    assert await identities(project, user["sub"]) == {"email": "ada@example.com"}


async def test_create_and_patch_refuse_a_lookalike_login_id_as_the_import_does(project):
    response = await call(project, "POST", USERS, {"preferred_username": "ali\u200bce"})
    assert response.status_code == 400
    cause = error_of(response)["info"]["causes"][0]
    assert cause["location"] == "/preferred_username" and "U+200B ZERO WIDTH SPACE" in cause["details"]["error"]
    user = await create(project)
    patched = await call(project, "PATCH", f"{USERS}/{user['sub']}", {"email": "a\u2060da@example.com"})
    assert patched.status_code == 400 and error_of(patched)["info"]["causes"][0]["location"] == "/email"
    assert await identities(project, user["sub"]) == {"email": "ada@example.com"}


async def test_bad_bodies_get_the_export_envelope(project):
    assert (
        error_of(await call(project, "POST", USERS, content=b"{}", headers={"Content-Type": "text/plain"}))["reason"]
        == "UnsupportedMediaType"
    )
    duplicate = await call(
        project, "POST", USERS, content=b'{"email": "a@x.com", "email": "b@x.com"}',
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    assert duplicate.status_code == 400 and error_of(duplicate)["info"]["causes"][0]["kind"] == "duplicateKey"
    big = await call(project, "POST", USERS, {"email": "a@x.com", "name": "x" * 600_000})
    assert big.status_code == 413 and error_of(big)["name"] == "Invalid"
    not_json = await call(project, "POST", USERS, content=b"{", headers={"Content-Type": "application/json"})
    assert not_json.status_code == 400 and error_of(not_json)["reason"] == "ValidationFailed"


async def test_an_unknown_or_foreign_id_is_user_not_found(project, env):
    other = await env.make_project()
    user = await create(other)
    for method, path, body in (
        ("GET", f"{USERS}/{user['sub']}", None),
        ("PATCH", f"{USERS}/{user['sub']}", {"name": "x"}),
        ("PUT", f"{USERS}/{user['sub']}/password", {"password": "new password"}),
        ("POST", f"{USERS}/{user['sub']}/disable", {}),
        ("POST", f"{USERS}/{user['sub']}/enable", None),
        ("DELETE", f"{USERS}/{user['sub']}", None),
        ("GET", f"{USERS}/no-such-user", None),
    ):
        response = await call(project, method, path, body)
        assert response.status_code == 404, (method, path, response.text)
        assert (error_of(response)["name"], error_of(response)["reason"]) == ("NotFound", "UserNotFound")
    assert (await call(other, "GET", f"{USERS}/{user['sub']}")).status_code == 200


@pytest.mark.engine
async def test_list_finds_by_login_id_prefix_role_and_state_in_keyset_pages(project):
    ada = await create(project, email="ada@example.com", roles=["admin"])
    bob = await create(project, email="bob@example.com", phone_number="+14155550100")
    cy = await create(project, email="cy@example.com", preferred_username="adalove")
    await call(project, "POST", f"{USERS}/{bob['sub']}/disable", {})

    async def subs(**params: Any) -> list[str]:
        response = await call(project, "GET", USERS, params=params)
        assert response.status_code == 200, response.text
        items = response.json()["result"]["items"]
        assert all(item["user_id"] == item["sub"] for item in items)  # kept for one release
        return [item["sub"] for item in items]

    assert await subs(login_id="ADA@example.com") == [ada["sub"]]
    assert await subs(login_id="ada") == []  # exact
    assert sorted(await subs(q="ada")) == sorted([ada["sub"], cy["sub"]])
    assert await subs(q="+1415") == [bob["sub"]]
    assert await subs(role="admin") == [ada["sub"]]
    assert await subs(disabled="true") == [bob["sub"]]
    assert sorted(await subs(disabled="false")) == sorted([ada["sub"], cy["sub"]])
    seen, cursor = [], None
    while True:
        params = {"limit": "1", **({"cursor": cursor} if cursor else {})}
        result = (await call(project, "GET", USERS, params=params)).json()["result"]
        seen += [item["sub"] for item in result["items"]]
        cursor = result["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted([ada["sub"], bob["sub"], cy["sub"]])
    bad = await call(project, "GET", USERS, params={"cursor": "%%%"})
    assert bad.status_code == 400 and error_of(bad)["name"] == "Invalid"


async def test_patch_applies_the_upsert_rules(project):
    user = await create(
        project,
        name="Ada",
        given_name="Ada",
        roles=["admin"],
        custom_attributes={"plan": "pro"},
        password={"type": "bcrypt", "password_hash": HASH_2B},
    )
    response = await call(
        project,
        "PATCH",
        f"{USERS}/{user['sub']}",
        {
            "name": "Ada Lovelace",
            "given_name": None,
            "roles": ["staff"],
            "phone_number": "+14155550100",
            "custom_attributes": {"team": "x"},
            "password": {"type": "bcrypt", "password_hash": HASH_2B},
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["warnings"] == ["password is ignored because the user already exists."]
    patched = body["result"]
    assert patched["name"] == "Ada Lovelace" and "given_name" not in patched
    assert patched["roles"] == ["staff"] and patched["phone_number"] == "+14155550100"
    assert patched["custom_attributes"] == {"plan": "pro", "team": "x"}
    assert await memberships(project, user["sub"]) == {"staff"}
    assert await exported(project) == [patched]


async def test_patch_never_removes_the_last_login_id_nor_changes_sub(project):
    user = await create(project, phone_number="+14155550100")
    path = f"{USERS}/{user['sub']}"
    assert (await call(project, "PATCH", path, {"email": None})).status_code == 200
    last = await call(project, "PATCH", path, {"phone_number": None})
    assert last.status_code == 400 and error_of(last)["reason"] == "ValidationFailed"
    assert await identities(project, user["sub"]) == {"phone": "+14155550100"}
    sub = await call(project, "PATCH", path, {"sub": "other"})
    assert sub.status_code == 400 and error_of(sub)["info"]["causes"][0]["kind"] == "additionalProperties"


@pytest.mark.engine
async def test_patch_refuses_a_login_id_another_user_holds(project):
    await create(project, email="bob@example.com")
    ada = await create(project)
    response = await call(project, "PATCH", f"{USERS}/{ada['sub']}", {"email": "BOB@example.com"})
    assert response.status_code == 400 and error_of(response)["reason"] == "InvariantViolated"


@pytest.mark.engine
async def test_two_concurrent_patches_of_one_user_lose_neither(project):
    user = await create(project)
    path = f"{USERS}/{user['sub']}"
    bodies = [{"custom_attributes": {f"k{i}": i}} for i in range(6)] + [{"name": "Ada"}, {"nickname": "ada"}]
    responses = await asyncio.gather(*(call(project, "PATCH", path, body) for body in bodies))
    assert [r.status_code for r in responses] == [200] * len(bodies)
    final = (await call(project, "GET", path)).json()["result"]
    assert final["custom_attributes"] == {f"k{i}": i for i in range(6)}
    assert (final["name"], final["nickname"]) == ("Ada", "ada")


@pytest.mark.engine
async def test_a_patch_racing_a_delete_never_brings_the_user_back(project):
    """Whichever commits first, the user ends deleted and nothing of theirs is left: a PATCH that adds a login id
    and attributes either lands before the delete (200) or finds no user (404), never writes after it."""
    for trial in range(6):
        user = await create(project, email=f"race{trial}@example.com")
        path = f"{USERS}/{user['sub']}"
        patch = {"phone_number": f"+1415555{trial:04d}", "custom_attributes": {"trial": trial}}
        calls = [call(project, "PATCH", path, patch), call(project, "DELETE", path)]
        if trial % 2:
            calls.reverse()
        responses = {r.request.method: r for r in await asyncio.gather(*calls)}

        assert responses["DELETE"].status_code == 204, responses["DELETE"].text
        assert responses["PATCH"].status_code in (200, 404), responses["PATCH"].text
        if responses["PATCH"].status_code == 404:
            assert error_of(responses["PATCH"])["reason"] == "UserNotFound"
        assert (await call(project, "GET", path)).status_code == 404
        for table in ("userio_user", "userio_identity", "userio_authenticator", "userio_user_role"):
            column = "id" if table == "userio_user" else "user_id"
            assert await project.fetch(f"SELECT 1 FROM {table} WHERE {column} = $1", user["sub"]) == [], table
        assert (await call(project, "POST", USERS, {"phone_number": patch["phone_number"]})).status_code == 201
    assert [record.get("email") for record in await exported(project)] == [None] * 6


async def test_set_password_hashes_it_and_sign_in_takes_it(project):
    user = await create(project, password={"type": "bcrypt", "password_hash": HASH_2B})
    response = await call(project, "PUT", f"{USERS}/{user['sub']}/password", {"password": "a new one"})
    assert response.status_code == 204 and response.content == b""
    users = project.env.services.users
    assert await users.verify_password(project.id, "ada@example.com", "a new one") == user["sub"]
    assert await users.verify_password(project.id, "ada@example.com", PASSWORD) is None
    [(kind, type_, stored)] = await authenticators(project, user["sub"])
    assert (kind, type_) == ("primary", "password") and stored.startswith("$2b$04$")


async def test_set_password_takes_an_import_password_object(project):
    user = await create(project)
    path = f"{USERS}/{user['sub']}/password"
    ok = await call(project, "PUT", path, {"password_hash": {"type": "bcrypt", "password_hash": HASH_2B}})
    assert ok.status_code == 204
    assert await project.env.services.users.verify_password(project.id, "ada@example.com", PASSWORD) == user["sub"]
    bad = await call(project, "PUT", path, {"password_hash": {"type": "bcrypt", "password_hash": "$2b$04$short"}})
    assert bad.status_code == 400 and error_of(bad)["reason"] == "InvalidBcryptHash"
    neither = await call(project, "PUT", path, {})
    assert neither.status_code == 400 and error_of(neither)["reason"] == "ValidationFailed"


async def test_set_password_refuses_a_hash_object_above_the_scrypt_memory_bound(project):
    user = await create(project, password={"type": "bcrypt", "password_hash": HASH_2B})
    bomb = {"type": "scrypt", "password_hash": "$scrypt$ln=17,r=64,p=1$c2FsdA$aGFzaA"}  # 1 GiB per check

    response = await call(project, "PUT", f"{USERS}/{user['sub']}/password", {"password_hash": bomb})

    assert response.status_code == 400
    error = error_of(response)
    assert error["reason"] == "InvalidPasswordHash" and error["info"]["bound"] == "scrypt_memory_kib"
    assert await project.env.services.users.verify_password(project.id, "ada@example.com", PASSWORD) == user["sub"]


async def test_disable_revokes_refresh_tokens_and_enable_clears_it(project, env):
    user = await create(project)
    await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=False)
    refresh = env.services.tokens.refresh_tokens
    token = await refresh.issue(project.id, "app", user["sub"], "openid")
    response = await call(project, "POST", f"{USERS}/{user['sub']}/disable", {"reason": "fraud"})
    assert response.status_code == 200 and response.json()["result"]["disabled"] is True
    with pytest.raises(RefreshTokenInvalid):
        await refresh.check(project.id, "app", token)
    enabled = await call(project, "POST", f"{USERS}/{user['sub']}/enable")
    assert enabled.status_code == 200 and enabled.json()["result"]["disabled"] is False
    assert (await exported(project))[0]["disabled"] is False


async def _session(project, env, user_id: str) -> str:
    """A refresh token of `user_id` (a sign-in's session)."""
    if await env.services.tokens.applications.get(project.id, "app") is None:
        await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=False)
    return await env.services.tokens.refresh_tokens.issue(project.id, "app", user_id, "openid")


async def _refreshes(project, env, token: str) -> bool:
    try:
        await env.services.tokens.refresh_tokens.check(project.id, "app", token)
    except RefreshTokenInvalid:
        return False
    return True


@pytest.mark.engine
@pytest.mark.parametrize(
    "body", [{"password": "a new one"}, {"password_hash": {"type": "bcrypt", "password_hash": HASH_2B}}]
)
async def test_a_password_set_by_an_admin_ends_the_users_sessions(project, env, body):
    user = await create(project)
    token = await _session(project, env, user["sub"])
    response = await call(project, "PUT", f"{USERS}/{user['sub']}/password", body)
    assert response.status_code == 204, response.text
    assert not await _refreshes(project, env, token)
    assert await _refreshes(project, env, await _session(project, env, user["sub"]))  # a new sign-in works


@pytest.mark.engine
@pytest.mark.parametrize("way", ["patch", "upsert import", "disable"])
async def test_any_disable_ends_the_users_sessions_and_enabling_does_not_bring_them_back(project, env, way):
    user = await create(project)
    token = await _session(project, env, user["sub"])
    if way == "patch":
        response = await call(project, "PATCH", f"{USERS}/{user['sub']}", {"disabled": True})
        assert response.status_code == 200, response.text
    elif way == "upsert import":
        detail = await import_one(project, {"email": "ada@example.com", "disabled": True}, upsert=True)
        assert detail["outcome"] == "updated", detail
    else:
        assert (await call(project, "POST", f"{USERS}/{user['sub']}/disable", {})).status_code == 200
    assert (await call(project, "GET", f"{USERS}/{user['sub']}")).json()["result"]["disabled"] is True
    assert not await _refreshes(project, env, token)
    assert (await call(project, "POST", f"{USERS}/{user['sub']}/enable")).status_code == 200
    assert not await _refreshes(project, env, token)


@pytest.mark.engine
async def test_a_change_that_neither_disables_nor_sets_a_password_keeps_the_sessions(project, env):
    user = await create(project)
    token = await _session(project, env, user["sub"])
    assert (await call(project, "PATCH", f"{USERS}/{user['sub']}", {"name": "Ada"})).status_code == 200
    assert (await import_one(project, {"email": "ada@example.com", "disabled": False}, upsert=True))["outcome"] == (
        "updated"
    )
    assert await _refreshes(project, env, token)


async def test_a_temporary_disable_window_is_disabled_only_inside_it(project, env):
    user = await create(project, account_valid_until="2026-12-01T00:00:00Z")
    path = f"{USERS}/{user['sub']}/disable"
    window = {"temporarily_disabled_from": "2026-06-02T00:00:00Z", "temporarily_disabled_until": "2026-06-03T00:00:00Z"}
    response = await call(project, "POST", path, window)
    assert response.status_code == 200, response.text
    before = response.json()["result"]
    assert before["disabled"] is False
    assert (before["temporarily_disabled_from"], before["temporarily_disabled_until"]) == (
        "2026-06-02T00:00:00Z",
        "2026-06-03T00:00:00Z",
    )
    env.clock.advance(timedelta(days=1))
    [inside] = await exported(project)
    assert inside["disabled"] is True and inside["temporarily_disabled_from"] == "2026-06-02T00:00:00Z"
    env.clock.advance(timedelta(days=1))
    assert (await call(project, "GET", f"{USERS}/{user['sub']}")).json()["result"]["disabled"] is False


@pytest.mark.parametrize(
    "window",
    [
        {"temporarily_disabled_from": "2026-06-02T00:00:00Z"},
        {"temporarily_disabled_from": "2026-06-03T00:00:00Z", "temporarily_disabled_until": "2026-06-02T00:00:00Z"},
        {"temporarily_disabled_from": "2026-11-30T00:00:00Z", "temporarily_disabled_until": "2026-12-02T00:00:00Z"},
    ],
)
async def test_a_bad_window_is_an_invalid_account_status_transition(project, window):
    user = await create(project, account_valid_until="2026-12-01T00:00:00Z")
    response = await call(project, "POST", f"{USERS}/{user['sub']}/disable", window)
    assert response.status_code == 400
    assert error_of(response)["reason"] == "InvalidAccountStatusTransition"
    assert (await call(project, "GET", f"{USERS}/{user['sub']}")).json()["result"]["disabled"] is False


@pytest.mark.engine
async def test_delete_removes_the_user_and_everything_of_it(project, env):
    user = await create(
        project,
        phone_number="+14155550100",
        roles=["admin"],
        password={"type": "bcrypt", "password_hash": HASH_2B},
        mfa={"totp": {"secret": "JBSWY3DPEHPK3PXP"}},
    )
    await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=False)
    token = await env.services.tokens.refresh_tokens.issue(project.id, "app", user["sub"], "openid")
    response = await call(project, "DELETE", f"{USERS}/{user['sub']}")
    assert response.status_code == 204
    for table in ("userio_identity", "userio_authenticator", "userio_user_role", "userio_refresh_token"):
        assert await project.fetch(f"SELECT 1 FROM {table} WHERE user_id = $1", user["sub"]) == [], table
    assert (await call(project, "GET", f"{USERS}/{user['sub']}")).status_code == 404
    assert await exported(project) == []
    with pytest.raises(RefreshTokenInvalid):
        await env.services.tokens.refresh_tokens.check(project.id, "app", token)
    assert (await call(project, "POST", USERS, {"email": "ada@example.com"})).status_code == 201  # id free again


async def test_each_change_emits_its_event_with_the_exported_record(project, env):
    user = await create(
        project, password={"type": "bcrypt", "password_hash": HASH_2B}, mfa={"totp": {"secret": TOTP_SECRET}}
    )
    path = f"{USERS}/{user['sub']}"
    patched = (await call(project, "PATCH", path, {"name": "Ada"})).json()["result"]
    await call(project, "PUT", f"{path}/password", {"password": "secret words"})
    disabled = (await call(project, "POST", f"{path}/disable", {})).json()["result"]
    enabled = (await call(project, "POST", f"{path}/enable")).json()["result"]
    await call(project, "DELETE", path)
    await until(lambda: len(EVENTS) >= 6, "six events delivered")  # the app's emitter runs listeners in its own tasks
    received = dict(EVENTS)
    assert user["mfa"]["totps"][0]["secret"] == TOTP_SECRET  # the admin API answers the export's record whole
    assert [received[e]["mfa"]["totps"] for e in received] == [[{}]] * len(received)  # an event carries no secret
    user, patched, disabled, enabled = (
        {**u, "mfa": {**u["mfa"], "totps": [{}]}} for u in (user, patched, disabled, enabled)
    )
    assert [e for e, _ in EVENTS if e.startswith("userio.user.")] == [
        "userio.user.created",
        "userio.user.updated",
        "userio.user.password_changed",
        "userio.user.disabled",
        "userio.user.enabled",
        "userio.user.deleted",
    ]
    assert received["userio.user.created"] == user
    assert received["userio.user.updated"] == patched
    assert received["userio.user.disabled"] == disabled
    assert received["userio.user.enabled"] == enabled
    assert received["userio.user.deleted"] == enabled
    assert "secret words" not in repr(EVENTS) and "$2b$" not in repr(EVENTS) and TOTP_SECRET not in repr(EVENTS)


async def test_an_import_emits_one_completion_event_and_none_per_record(project, env):
    if env.uses_arq:
        pytest.skip("an arq worker has no Litestar app to emit through (docs/limits.md)")
    records = [{"email": f"u{i}@example.com"} for i in range(3)] + [{"email": "bad"}]
    response = await project.post(
        "/_api/admin/users/import", {"identifier": "email", "records": records, "upsert": True}
    )
    task_id = response.json()["id"]
    await env.drain()
    await until(lambda: EVENTS, "the completion event delivered")  # after any per-record one: the emitter keeps order
    assert [e for e, _ in EVENTS] == ["userio.import.completed"]
    assert EVENTS[0][1] == {
        "id": task_id,
        "project_id": project.id,
        "dry_run": False,
        "summary": {"total": 4, "inserted": 3, "updated": 0, "skipped": 0, "failed": 1},
    }


async def test_the_python_service_is_the_host_handlers_way_in(project, env):
    admin = env.services.user_admin
    record = await project.env.services.projects.get(project.id)
    assert record is not None
    user, warnings = await admin.create(record, b'{"preferred_username": "ada"}')
    assert warnings == [] and (await admin.find_by_login_id(project.id, "ADA")) == user
    assert await admin.find_by_login_id(project.id, "bob") is None


async def test_a_failed_import_record_carries_the_code(project):
    detail = await import_one(project, {"email": "bad"})
    assert detail["errors"][0]["code"] == 400


async def test_a_user_outside_its_valid_period_is_reported_disabled(project, env):
    detail = await import_one(project, {"email": "ada@example.com", "account_valid_until": "2026-06-01T13:00:00Z"})
    path = f"{USERS}/{detail['user_id']}"
    assert (await call(project, "GET", path)).json()["result"]["disabled"] is False
    env.clock.advance(timedelta(hours=1))  # account_valid_until is exclusive
    assert (await call(project, "GET", path)).json()["result"]["disabled"] is True
    [line] = await exported(project)
    assert (line["disabled"], line["account_valid_until"]) == (True, "2026-06-01T13:00:00Z")
    listed = (await call(project, "GET", USERS, params={"disabled": "true"})).json()["result"]["items"]
    assert [item["sub"] for item in listed] == [detail["user_id"]]


async def test_create_takes_the_migrate_on_sign_in_marker_with_the_imports_rule(project):
    marker = {"type": "migrate_on_sign_in"}
    waiting = await call(project, "POST", USERS, {"email": "ada@example.com", "password": marker})
    malformed = await call(
        project, "POST", USERS, {"email": "bob@example.com", "password": {**marker, "password_hash": HASH_2B}}
    )

    assert waiting.status_code == 201, waiting.text
    assert [(a[0], a[1]) for a in await authenticators(project, waiting.json()["result"]["sub"])] == [
        ("primary", "password")
    ]
    assert await project.env.services.users.verify_password(project.id, "ada@example.com", "anything") is None
    assert malformed.status_code == 400
    assert error_of(malformed)["reason"] == "InvalidPasswordHash"
    assert "migrate_on_sign_in marker" in error_of(malformed)["message"]


GOOGLE = {"type": "oauth", "provider_alias": "google", "subject": "g-100"}


@pytest.mark.engine
async def test_create_with_an_identity_another_user_holds_answers_what_the_import_answers(project):
    await create(project, identities=[GOOGLE])
    detail = await import_one(project, {"email": "imp@example.com", "identities": [GOOGLE]})

    response = await call(project, "POST", USERS, {"email": "bob@example.com", "identities": [GOOGLE]})

    assert response.status_code == 400, response.text
    error = error_of(response)
    assert {k: error[k] for k in ("name", "reason", "info")} == {
        k: detail["errors"][0][k] for k in ("name", "reason", "info")
    }
    assert (error["reason"], error["info"]) == ("InvariantViolated", {"cause": {"kind": "DuplicatedIdentity"}})
    assert "already linked to another user" in error["message"]
    assert [u["email"] for u in await exported(project)] == ["ada@example.com"]


@pytest.mark.engine
async def test_patch_with_an_identity_another_user_holds_is_duplicated_identity(project):
    await create(project, identities=[GOOGLE])
    bob = await create(project, email="bob@example.com")

    response = await call(project, "PATCH", f"{USERS}/{bob['sub']}", {"identities": [GOOGLE]})

    assert response.status_code == 400, response.text
    error = error_of(response)
    assert (error["reason"], error["info"]) == ("InvariantViolated", {"cause": {"kind": "DuplicatedIdentity"}})
    again = await call(project, "PATCH", f"{USERS}/{bob['sub']}", {"identities": [{**GOOGLE, "subject": "g-200"}]})
    assert again.status_code == 200, again.text


BEFORE_YEAR_1 = "0001-01-01T00:00:00+01:00"
"""Year 1 as written, year 0 in UTC: outside what Python's datetime holds."""


@pytest.mark.parametrize(
    ("record", "location"),
    [
        ({"account_valid_from": BEFORE_YEAR_1}, "/account_valid_from"),
        ({"account_valid_until": "9999-12-31T23:59:59-01:00"}, "/account_valid_until"),
        (
            {"password": {"type": "bcrypt", "password_hash": HASH_2B, "expire_after": BEFORE_YEAR_1}},
            "/password/expire_after",
        ),
    ],
)
async def test_a_timestamp_outside_pythons_range_fails_as_the_import_fails_it(project, record, location):
    detail = await import_one(project, {"email": "imp@example.com", **record})
    assert detail["outcome"] == "failed"
    imported = detail["errors"][0]
    assert (imported["reason"], [c["location"] for c in imported["info"]["causes"]]) == ("ValidationFailed", [location])

    response = await call(project, "POST", USERS, {"email": "ada@example.com", **record})

    assert response.status_code == 400, response.text
    error = error_of(response)
    assert (error["reason"], error["info"]["causes"]) == ("ValidationFailed", imported["info"]["causes"])
    bob = await create(project, email="bob@example.com")
    patched = await call(project, "PATCH", f"{USERS}/{bob['sub']}", record)
    assert patched.status_code == 400, patched.text
    assert error_of(patched)["info"]["causes"] == imported["info"]["causes"]


@pytest.mark.parametrize("bound", ["temporarily_disabled_from", "temporarily_disabled_until"])
async def test_a_disable_window_outside_pythons_range_is_refused_as_a_malformed_one(project, bound):
    user = await create(project)
    path = f"{USERS}/{user['sub']}/disable"
    window = {"temporarily_disabled_from": "2026-06-02T00:00:00Z", "temporarily_disabled_until": "2026-06-03T00:00:00Z"}
    malformed = await call(project, "POST", path, {**window, bound: "not a time"})

    response = await call(project, "POST", path, {**window, bound: BEFORE_YEAR_1})

    assert response.status_code == malformed.status_code == 400, response.text
    error, other = error_of(response), error_of(malformed)
    assert (error["name"], error["reason"]) == (other["name"], other["reason"]) == ("Invalid", "ValidationFailed")
    assert [c["location"] for c in error["info"]["causes"]] == [f"/{bound}"]
    assert [c["location"] for c in other["info"]["causes"]] == [f"/{bound}"]
    assert (await call(project, "GET", f"{USERS}/{user['sub']}")).json()["result"]["disabled"] is False
