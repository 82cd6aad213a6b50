"""Admin reads behind the console's pickers: users by the start of a login id (`q`), clients, custom attributes."""

from __future__ import annotations

import pytest

from litestar_userio.users.custom_attributes import CustomAttributeSpec
from tests.helpers import run_import


@pytest.mark.engine
async def test_user_search_matches_the_start_of_any_login_id(project):
    body = await run_import(
        project,
        [
            {"email": "Ada@Example.com", "preferred_username": "ada"},
            {"email": "adam@example.com"},
            {"email": "bob@example.com", "phone_number": "+14155550123"},
        ],
    )
    ada, adam, bob = (d["user_id"] for d in body["details"])

    by_email = (await project.get("/_api/admin/users", params={"q": "ADA"})).json()["result"]["items"]
    by_phone = (await project.get("/_api/admin/users", params={"q": "+1415"})).json()["result"]["items"]

    # One item per user; `user_id` stays beside `sub` for one release (DECISIONS 11).
    assert sorted((m["sub"], m["user_id"], m["email"], m.get("preferred_username")) for m in by_email) == sorted(
        [(ada, ada, "ada@example.com", "ada"), (adam, adam, "adam@example.com", None)]
    )
    assert [(m["sub"], m["phone_number"]) for m in by_phone] == [(bob, "+14155550123")]


@pytest.mark.engine
async def test_user_search_treats_like_wildcards_as_text(project):
    await run_import(project, [{"email": "a_b@example.com"}, {"email": "axb@example.com"}])

    items = (await project.get("/_api/admin/users", params={"q": "a_"})).json()["result"]["items"]

    assert [m["email"] for m in items] == ["a_b@example.com"]


async def test_user_search_does_not_see_other_projects(env, project):
    other = await env.make_project()
    await run_import(other, [{"email": "carol@example.com"}])

    items = (await project.get("/_api/admin/users", params={"q": "carol"})).json()["result"]["items"]

    assert items == []


@pytest.mark.engine
async def test_applications_lists_the_projects_clients(env, project):
    await env.services.tokens.applications.create(project.id, "web", issue_jwt_access_token=True, name="Web")
    await env.services.tokens.applications.create(project.id, "cli", issue_jwt_access_token=False)

    body = (await project.get("/_api/admin/applications")).json()

    assert body == {
        "result": {
            "items": [
                {"client_id": "cli", "name": None, "issue_jwt_access_token": False},
                {"client_id": "web", "name": "Web", "issue_jwt_access_token": True},
            ]
        }
    }


@pytest.mark.engine
async def test_custom_attributes_lists_declarations_in_order(env, project):
    await env.services.projects.declare_custom_attribute(project.id, CustomAttributeSpec(name="plan", type="string"))
    await env.services.projects.declare_custom_attribute(
        project.id, CustomAttributeSpec(name="seats", type="integer", minimum=1)
    )

    items = (await project.get("/_api/admin/custom-attributes")).json()["result"]["items"]

    assert [(i["name"], i["type"]) for i in items] == [("plan", "string"), ("seats", "integer")]


async def test_directory_refuses_a_bad_token(project):
    for path in ("/_api/admin/users?login_id=a", "/_api/admin/applications", "/_api/admin/custom-attributes"):
        response = await project.get(path, headers={"Authorization": "Bearer nope"})
        assert response.status_code == 403, path
        assert response.json()["error"]["name"] == "Forbidden"
