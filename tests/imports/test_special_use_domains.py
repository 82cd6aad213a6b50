"""Emails on special-use domains (`.test`, `.local`, ...): refused unless the project allows them (issue 46).

With `allow_special_use_email_domains` on, such users import, are created by the admin API and sign in; every
other email rule still holds. `litestar userio project configure --set allow_special_use_email_domains=true` sets it.
"""

from __future__ import annotations

import pytest

from example_app.oauth import token
from litestar_userio.projects.settings import ProjectSettings
from tests.helpers import HASH_2B, PASSWORD, run_import

USERS = "/_api/admin/users"
SPECIAL = ["ada@staff.test", "bob@printer.local", "cy@bücher.test", "dee@old.invalid"]


def _password() -> dict[str, str]:
    return {"type": "bcrypt", "password_hash": HASH_2B}


async def test_special_use_domains_are_refused_by_default_with_the_setting_named(env):
    project = await env.make_project()
    body = await run_import(project, [{"email": e} for e in SPECIAL])

    assert [d["outcome"] for d in body["details"]] == ["failed"] * len(SPECIAL)
    cause = body["details"][0]["errors"][0]["info"]["causes"][0]
    assert cause["location"] == "/email" and "special-use" in cause["details"]["error"]
    assert "--set allow_special_use_email_domains=true" in cause["details"]["error"]
    created = await env.client.post(USERS, json={"email": "ada@staff.test"}, headers=project.headers())
    assert created.status_code == 400, created.text
    assert created.json()["error"]["reason"] == "ValidationFailed"


@pytest.mark.engine
async def test_with_the_setting_on_such_users_import_are_created_and_sign_in(backend, make_env):
    env = await make_env(backend, route_handlers=[token])
    project = await env.make_project(ProjectSettings(allow_special_use_email_domains=True))
    await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=False)

    body = await run_import(project, [{"email": e, "password": _password()} for e in SPECIAL])
    created = await env.client.post(
        USERS, json={"email": "eve@lab.local", "mfa": {"email": "eve@lab.local"}}, headers=project.headers()
    )

    assert [d["outcome"] for d in body["details"]] == ["inserted"] * len(SPECIAL), body
    assert created.status_code == 201, created.text
    assert created.json()["result"]["email"] == "eve@lab.local"
    for email in SPECIAL:
        response = await env.client.post(
            "/oauth2/token",
            data={"grant_type": "password", "username": email.upper(), "password": PASSWORD, "client_id": "app"},
            headers={"Host": project.host},
        )
        assert response.status_code == 200, (email, response.text)


async def test_with_the_setting_on_every_other_email_rule_still_holds(env):
    project = await env.make_project(ProjectSettings(allow_special_use_email_domains=True))
    bad = ["a@.test", "a b@x.test", "a@x..local", "a@localhost", "not-an-email", "a@x.test\u200b"]

    body = await run_import(project, [{"email": e} for e in bad])
    malformed = await run_import(project, [{"email": "a@x.test", "name": 7}])

    assert [d["outcome"] for d in body["details"]] == ["failed"] * len(bad), body
    causes = malformed["details"][0]["errors"][0]["info"]["causes"]
    assert [c["location"] for c in causes] == ["/name"]
