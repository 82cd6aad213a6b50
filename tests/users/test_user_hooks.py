"""Blocking user hooks (`user.pre_create`, `user.profile.pre_update`) in the single-user API, and the plugins' two
ready hooks: a refusal writes nothing; mutations pass the request's own validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_import

ROOT = Path(__file__).resolve().parents[2]
USERS = "/_api/admin/users"
HOOKS = "/_api/admin/hooks"


def plugin(name: str) -> str:
    return (ROOT / "plugins" / name).read_text()


async def save_hooks(project: Any, *hooks: tuple[str, str]) -> None:
    body = {"hooks": [{"event": event, "source": source} for event, source in hooks]}
    response = await project.env.client.put(HOOKS, json=body, headers=project.headers())
    assert response.status_code == 200, response.text


async def users(project: Any) -> list[dict[str, Any]]:
    response = await project.get(USERS)
    return list(response.json()["result"]["items"])


@pytest.fixture
async def project(env):
    return await env.make_project(roles=("member", "admin"))


async def test_refuse_email_domain_refuses_a_create_with_the_hooks_reasons_and_writes_nothing(project):
    await save_hooks(project, ("user.pre_create", plugin("refuse-email-domain.ts")))

    refused = await project.post(USERS, {"email": "spam@mailinator.com"})
    allowed = await project.post(USERS, {"email": "ada@example.com"})

    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["name"] == "Forbidden"
    assert refused.json()["error"]["reason"] == "WebHookDisallowed"
    assert refused.json()["error"]["info"] == {
        "reasons": [{"reason": "Sign-ups from mailinator.com are not accepted.", "title": "Email domain not allowed"}]
    }
    assert allowed.status_code == 201, allowed.text
    assert [u["email"] for u in await users(project)] == ["ada@example.com"]


async def test_refuse_email_domain_refuses_an_update_to_a_blocked_address(project):
    await save_hooks(project, ("user.profile.pre_update", plugin("refuse-email-domain.ts")))
    created = await project.post(USERS, {"email": "ada@example.com"})
    sub = created.json()["result"]["sub"]

    refused = await project.env.client.patch(
        f"{USERS}/{sub}", json={"email": "ada@mailinator.com"}, headers=project.headers()
    )
    renamed = await project.env.client.patch(f"{USERS}/{sub}", json={"given_name": "Ada"}, headers=project.headers())

    assert refused.status_code == 403 and refused.json()["error"]["reason"] == "WebHookDisallowed"
    assert renamed.status_code == 200, renamed.text
    assert (await users(project))[0]["email"] == "ada@example.com"


async def test_add_default_role_gives_every_created_user_the_role(project):
    await save_hooks(project, ("user.pre_create", plugin("add-default-role.ts")))

    plain = await project.post(USERS, {"email": "ada@example.com"})
    admin = await project.post(USERS, {"email": "bob@example.com", "roles": ["admin"]})

    assert plain.status_code == 201, plain.text
    assert plain.json()["result"]["roles"] == ["member"]
    assert sorted(admin.json()["result"]["roles"]) == ["admin", "member"]


async def test_a_hook_sees_the_user_as_it_would_be_and_its_mutations_are_stored(project):
    source = """export default (e) => ({is_allowed: true, mutations: {user: {
        standard_attributes: {...e.payload.user.standard_attributes, given_name: "seen " + e.payload.user.standard_attributes.family_name},
        groups: []}}})"""
    await save_hooks(project, ("user.profile.pre_update", source))
    created = await project.post(USERS, {"email": "ada@example.com", "family_name": "Lovelace"})
    sub = created.json()["result"]["sub"]

    updated = await project.env.client.patch(f"{USERS}/{sub}", json={"family_name": "Byron"}, headers=project.headers())

    assert updated.status_code == 200, updated.text
    assert updated.json()["result"]["given_name"] == "seen Byron"
    assert updated.json()["result"]["family_name"] == "Byron"


async def test_an_invalid_mutation_fails_the_request_as_an_invalid_record_would(project):
    source = """export default (e) => ({is_allowed: true, mutations: {user: {
        standard_attributes: {...e.payload.user.standard_attributes, email: "not an email"}}}})"""
    await save_hooks(project, ("user.pre_create", source))

    response = await project.post(USERS, {"email": "ada@example.com"})

    assert response.status_code == 400, response.text
    assert response.json()["error"]["reason"] == "ValidationFailed"
    assert await users(project) == []


async def test_a_hook_that_throws_fails_the_create_closed(project):
    await save_hooks(project, ("user.pre_create", "export default () => { throw new Error('down'); }"))

    response = await project.post(USERS, {"email": "ada@example.com"})

    assert response.status_code == 500, response.text
    assert await users(project) == []


async def test_the_bulk_import_never_runs_pre_create(project):
    await save_hooks(project, ("user.pre_create", plugin("refuse-email-domain.ts")))

    status = await run_import(project, [{"email": "spam@mailinator.com"}])

    assert status["summary"]["inserted"] == 1, status
