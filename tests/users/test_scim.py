"""SCIM 2.0 (docs/scim.md) over HTTP: tokens, Users, filters, PATCH as Okta and Entra send it, ETags, Groups."""

from __future__ import annotations

from typing import Any

import pytest

from litestar_userio import PasswordConfig
from litestar_userio.errors import RefreshTokenInvalid, UserDisabled
from tests.changes.test_log import all_entries
from tests.users.test_user_hooks import plugin, save_hooks

SCIM = "/_api/scim/v2"
TOKENS = "/_api/admin/scim/tokens"
USER = "urn:ietf:params:scim:schemas:core:2.0:User"
PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
BULK = "urn:ietf:params:scim:api:messages:2.0:BulkRequest"


@pytest.fixture
async def env(backend, make_env):
    return await make_env(backend, passwords=PasswordConfig(bcrypt_cost=4))


@pytest.fixture
async def project(env):
    return await env.make_project()


async def new_token(project) -> str:
    response = await project.env.client.post(TOKENS, headers=project.headers())
    assert response.status_code == 201, response.text
    return str(response.json()["result"]["token"])


@pytest.fixture
async def scim(project):
    token = await new_token(project)

    async def call(method: str, path: str, body: Any = None, params: Any = None, **headers: str) -> Any:
        sent = {"Authorization": f"Bearer {token}", "Host": project.host, **headers}
        kwargs: dict[str, Any] = {"params": params}
        if body is not None:
            kwargs["json"] = body
            sent.setdefault("Content-Type", "application/scim+json")
        return await project.env.client.request(method, SCIM + path, headers=sent, **kwargs)

    return call


def okta_user(name: str = "ada", **extra: Any) -> dict[str, Any]:
    return {
        "schemas": [USER],
        "userName": f"{name}@example.com",
        "name": {"givenName": name.title(), "familyName": "Lovelace"},
        "emails": [{"primary": True, "value": f"{name}@example.com", "type": "work"}],
        "displayName": f"{name.title()} Lovelace",
        "externalId": f"00u{name}",
        "active": True,
        **extra,
    }


async def test_a_token_is_shown_once_listed_without_secret_and_revoked_at_once(project, scim):
    assert (await scim("GET", "/Users")).status_code == 200
    listed = await project.env.client.get(TOKENS, headers=project.headers())
    [item] = listed.json()["result"]["items"]
    assert set(item) == {"id", "created_at", "last_used_at"} and item["last_used_at"] is not None
    assert listed.json()["result"]["base_url"] == f"https://{project.host}{SCIM}"  # what the console shows the IdP
    revoked = await project.env.client.delete(f"{TOKENS}/{item['id']}", headers=project.headers())
    assert revoked.status_code == 204
    refused = await scim("GET", "/Users")
    assert refused.status_code == 401
    assert refused.headers["content-type"].startswith("application/scim+json")
    assert refused.json()["status"] == "401"


async def test_without_scim_the_token_list_names_no_base_url(backend, make_env):
    project = await (await make_env(backend, scim=None)).make_project()
    listed = await project.env.client.get(TOKENS, headers=project.headers())
    assert listed.status_code == 200, listed.text
    assert listed.json()["result"] == {"items": [], "base_url": None}


async def test_a_token_works_only_for_its_project_and_only_on_the_scim_path(env, project, scim):
    other = await env.make_project()
    token = await new_token(project)
    wrong_host = await env.client.get(f"{SCIM}/Users", headers={"Authorization": f"Bearer {token}", "Host": other.host})
    assert wrong_host.status_code == 401
    admin = await env.client.get(
        "/_api/admin/users", headers={"Authorization": f"Bearer {token}", "Host": project.host}
    )
    assert admin.status_code == 403
    missing = await env.client.get(f"{SCIM}/Users", headers={"Host": project.host})
    assert missing.status_code == 401 and missing.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]


async def test_create_get_and_the_mapping(scim):
    created = await scim("POST", "/Users", okta_user(password="IdP-set secret 1"))
    assert created.status_code == 201, created.text
    user = created.json()
    assert created.headers["location"] == user["meta"]["location"]
    assert created.headers["etag"] == user["meta"]["version"]
    assert user["userName"] == "ada@example.com" and user["externalId"] == "00uada"
    assert user["name"] == {"givenName": "Ada", "familyName": "Lovelace"} and user["displayName"] == "Ada Lovelace"
    assert user["emails"] == [{"value": "ada@example.com", "type": "work"}] and user["active"] is True
    assert "password" not in user
    fetched = await scim("GET", f"/Users/{user['id']}")
    assert fetched.json() == user


@pytest.mark.engine
async def test_a_scim_created_user_signs_in_with_the_idps_password_and_deactivation_stops_it(env, project, scim):
    user = (await scim("POST", "/Users", okta_user(password="IdP-set secret 1"))).json()
    users = env.services.users
    assert await users.verify_password(project.id, "ada@example.com", "IdP-set secret 1") == user["id"]
    await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=False)
    refresh = env.services.tokens.refresh_tokens
    token = await refresh.issue(project.id, "app", user["id"], "openid")
    patch = {"schemas": [PATCH], "Operations": [{"op": "Replace", "path": "active", "value": "False"}]}
    response = await scim("PATCH", f"/Users/{user['id']}", patch)
    assert response.status_code == 200, response.text
    assert response.json()["active"] is False
    with pytest.raises(UserDisabled):
        await users.verify_password(project.id, "ada@example.com", "IdP-set secret 1")
    with pytest.raises(RefreshTokenInvalid):
        await refresh.check(project.id, "app", token)


@pytest.mark.engine
async def test_a_taken_user_name_is_409_uniqueness(scim):
    assert (await scim("POST", "/Users", okta_user())).status_code == 201
    again = await scim("POST", "/Users", okta_user())
    assert again.status_code == 409 and again.json()["scimType"] == "uniqueness"


async def test_values_pass_the_imports_validation(scim):
    bad = await scim("POST", "/Users", okta_user(locale="not a locale"))
    assert bad.status_code == 400 and bad.json()["scimType"] == "invalidValue"
    no_name = await scim("POST", "/Users", {"schemas": [USER]})
    assert no_name.status_code == 400


async def test_okta_patch_without_path_and_entra_filtered_paths(scim):
    user = (await scim("POST", "/Users", okta_user())).json()
    okta = {"schemas": [PATCH], "Operations": [{"op": "replace", "value": {"active": False, "displayName": "A. L."}}]}
    patched = (await scim("PATCH", f"/Users/{user['id']}", okta)).json()
    assert patched["active"] is False and patched["displayName"] == "A. L."
    entra = {
        "schemas": [PATCH],
        "Operations": [
            {"op": "Replace", "path": 'emails[type eq "work"].value', "value": "ada.l@example.com"},
            {"op": "Replace", "path": "name.givenName", "value": "Augusta"},
            {"op": "Add", "path": "active", "value": "True"},
        ],
    }
    response = await scim("PATCH", f"/Users/{user['id']}", entra)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["emails"][0]["value"] == "ada.l@example.com" and body["name"]["givenName"] == "Augusta"
    assert body["active"] is True


async def test_patch_remove_of_an_absent_attribute_is_a_no_op_and_an_unmatched_filter_is_no_target(scim):
    user = (await scim("POST", "/Users", okta_user())).json()
    remove = {"schemas": [PATCH], "Operations": [{"op": "remove", "path": "nickName"}]}
    ok = await scim("PATCH", f"/Users/{user['id']}", remove)
    assert ok.status_code == 200 and ok.json()["userName"] == user["userName"]
    none = {"schemas": [PATCH], "Operations": [{"op": "remove", "path": 'emails[value eq "x@y.z"]'}]}
    refused = await scim("PATCH", f"/Users/{user['id']}", none)
    assert refused.status_code == 400 and refused.json()["scimType"] == "noTarget"


async def test_put_replaces_whole_and_if_match_guards_it(scim):
    user = (await scim("POST", "/Users", okta_user())).json()
    stale = await scim("PUT", f"/Users/{user['id']}", {"userName": "ada2@example.com"}, **{"If-Match": 'W/"x"'})
    assert stale.status_code == 412
    replaced = await scim(
        "PUT", f"/Users/{user['id']}", {"userName": "ada2@example.com"}, **{"If-Match": user["meta"]["version"]}
    )
    assert replaced.status_code == 200, replaced.text
    body = replaced.json()
    assert body["userName"] == "ada2@example.com" and "name" not in body and "emails" not in body
    assert "externalId" not in body


@pytest.mark.engine
async def test_filters_page_and_sort(scim):
    for name in ("ada", "grace", "alan"):
        assert (await scim("POST", "/Users", okta_user(name))).status_code == 201
    found = (await scim("GET", "/Users", params=None)).json()
    assert found["totalResults"] == 3

    async def names(query: str) -> list[str]:
        response = await scim("GET", "/Users?" + query)
        assert response.status_code == 200, response.text
        return [r["userName"] for r in response.json()["Resources"]]

    assert await names('filter=userName eq "ADA@example.com"') == ["ada@example.com"]
    assert await names('filter=externalId eq "00ugrace"') == ["grace@example.com"]
    assert await names('filter=externalId eq "00UGRACE"') == []  # caseExact
    assert sorted(await names('filter=userName sw "a"')) == ["ada@example.com", "alan@example.com"]
    assert await names(
        'filter=userName sw "a" and name.givenName eq "alan" or userName eq "grace@example.com"&sortBy=userName'
    ) == [
        "alan@example.com",
        "grace@example.com",
    ]
    assert await names('filter=emails[type eq "work" and value co "grace"]') == ["grace@example.com"]
    assert await names('filter=not (userName co "a")') == []
    assert await names("sortBy=userName&sortOrder=descending&startIndex=2&count=1") == ["alan@example.com"]
    assert sorted(await names('filter=externalId ne "00ugrace"')) == ["ada@example.com", "alan@example.com"]
    assert await names("filter=nickName pr") == []
    assert len(await names('filter=not (nickName eq "x")')) == 3  # no nickName: not equal to "x"
    assert await names('filter=userName co "%"') == []
    assert await names('filter=displayName co "_"') == []


@pytest.mark.engine
@pytest.mark.parametrize(
    "hostile",
    [
        "(" * 200 + 'userName eq "a"' + ")" * 200,
        " or ".join(['userName eq "a"'] * 1_500),  # 10 000 do not fit in a URL httpx sends
        'userName eq "' + "x" * 30_000 + '"',
        'password eq "x"',
        "userName eq",
        'userName regex "a"',
        'userName sw "\\ud800"',  # a lone surrogate: not text a database can take
        'displayName co "a\\udfff"',
    ],
)
async def test_hostile_or_unsupported_filters_are_400_invalid_filter(scim, hostile):
    response = await scim("GET", "/Users", params={"filter": hostile})
    assert response.status_code == 400, response.text
    assert response.json()["scimType"] == "invalidFilter"


@pytest.mark.engine
async def test_a_filter_never_finds_another_projects_users(env, scim):
    other = await env.make_project()
    await other.env.client.post("/_api/admin/users", headers=other.headers(), json={"preferred_username": "eve"})
    response = await scim("GET", "/Users", params={"filter": 'userName eq "eve" or userName pr'})
    assert response.json()["totalResults"] == 0


async def test_groups_members_and_the_users_groups(scim):
    ada = (await scim("POST", "/Users", okta_user("ada"))).json()
    grace = (await scim("POST", "/Users", okta_user("grace"))).json()
    created = await scim("POST", "/Groups", {"displayName": "Engineering", "members": [{"value": ada["id"]}]})
    assert created.status_code == 201, created.text
    group = created.json()
    assert [m["value"] for m in group["members"]] == [ada["id"]]
    add = {"schemas": [PATCH], "Operations": [{"op": "add", "path": "members", "value": [{"value": grace["id"]}]}]}
    added = (await scim("PATCH", f"/Groups/{group['id']}", add)).json()
    assert sorted(m["value"] for m in added["members"]) == sorted([ada["id"], grace["id"]])
    assert (await scim("GET", f"/Users/{grace['id']}")).json()["groups"][0]["value"] == group["id"]
    remove = {"schemas": [PATCH], "Operations": [{"op": "remove", "path": f'members[value eq "{ada["id"]}"]'}]}
    removed = (await scim("PATCH", f"/Groups/{group['id']}", remove)).json()
    assert [m["value"] for m in removed["members"]] == [grace["id"]]
    found = (await scim("GET", "/Groups", params={"filter": f'members.value eq "{grace["id"]}"'})).json()
    assert [g["displayName"] for g in found["Resources"]] == ["Engineering"]
    unknown = await scim("POST", "/Groups", {"displayName": "X", "members": [{"value": "nobody"}]})
    assert unknown.status_code == 400 and unknown.json()["scimType"] == "invalidValue"
    assert (await scim("DELETE", f"/Groups/{group['id']}")).status_code == 204
    assert "groups" not in (await scim("GET", f"/Users/{grace['id']}")).json()


async def test_discovery_says_what_is_supported(scim):
    config = (await scim("GET", "/ServiceProviderConfig")).json()
    assert config["patch"]["supported"] and config["filter"]["maxResults"] == 1000
    schemas = (await scim("GET", "/Schemas")).json()["Resources"]
    user = next(s for s in schemas if s["id"] == USER)
    assert {a["name"] for a in user["attributes"]} >= {"userName", "emails", "active", "password", "groups"}
    types = (await scim("GET", "/ResourceTypes")).json()
    assert {t["name"] for t in types["Resources"]} == {"User", "Group"}


@pytest.mark.engine
async def test_every_scim_write_is_a_change_log_entry_with_origin_scim(project, scim):
    user = (await scim("POST", "/Users", okta_user())).json()
    patch = {"schemas": [PATCH], "Operations": [{"op": "replace", "value": {"active": False, "nickName": "ada"}}]}
    assert (await scim("PATCH", f"/Users/{user['id']}", patch)).status_code == 200
    assert (await scim("DELETE", f"/Users/{user['id']}")).status_code == 204
    entries = await all_entries(project, 4)
    assert [e["type"] for e in entries] == ["user.created", "user.profile.updated", "user.disabled", "user.deleted"]
    assert {e["origin"]["kind"] for e in entries} == {"scim"}


async def test_bulk_creates_with_bulk_id_references_and_reports_each_operation(scim):
    body = {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
        "Operations": [
            {
                "method": "POST",
                "path": "/Groups",
                "bulkId": "g",
                "data": {"displayName": "Ops", "members": [{"value": "bulkId:u1"}]},
            },
            {"method": "POST", "path": "/Users", "bulkId": "u1", "data": okta_user("ada")},
            {"method": "POST", "path": "/Users", "bulkId": "u2", "data": okta_user("ada")},
            {
                "method": "PATCH",
                "path": "/Users/bulkId:u1",
                "data": {"Operations": [{"op": "replace", "path": "nickName", "value": "A"}]},
            },
        ],
    }
    response = await scim("POST", "/Bulk", body)
    assert response.status_code == 200, response.text
    results = {r.get("bulkId", r["method"]): r for r in response.json()["Operations"]}
    assert results["u1"]["status"] == "201" and results["g"]["status"] == "201"
    assert results["u2"]["status"] == "409" and results["u2"]["response"]["scimType"] == "uniqueness"
    assert results["PATCH"]["status"] == "200"
    group = (await scim("GET", results["g"]["location"].split("/v2", 1)[1])).json()
    user_id = results["u1"]["location"].rsplit("/", 1)[1]
    assert [m["value"] for m in group["members"]] == [user_id]
    assert (await scim("GET", f"/Users/{user_id}")).json()["nickName"] == "A"


async def test_bulk_fail_on_errors_stops_after_that_many_failures(scim):
    ops = [{"method": "POST", "path": "/Users", "bulkId": str(i), "data": {"userName": ""}} for i in range(3)]
    ops.append({"method": "POST", "path": "/Users", "bulkId": "ok", "data": okta_user()})
    response = await scim("POST", "/Bulk", {"failOnErrors": 2, "Operations": ops})
    assert [r["status"] for r in response.json()["Operations"]] == ["400", "400"]
    assert (await scim("GET", "/Users")).json()["totalResults"] == 0


async def test_bulk_over_a_bound_is_413_naming_it_and_applies_nothing(env, project):
    token = await new_token(project)
    headers = {"Authorization": f"Bearer {token}", "Host": project.host, "Content-Type": "application/scim+json"}
    ops = [{"method": "POST", "path": "/Users", "bulkId": str(i), "data": okta_user(f"u{i}")} for i in range(1001)]
    too_many = await env.client.post(f"{SCIM}/Bulk", headers=headers, json={"Operations": ops})
    assert too_many.status_code == 413 and "maxOperations" in too_many.json()["detail"]
    padding = {"Operations": [], "padding": "x" * (1024 * 1024)}
    too_big = await env.client.post(f"{SCIM}/Bulk", headers=headers, json=padding)
    assert too_big.status_code == 413 and "maxPayloadSize" in too_big.json()["detail"]
    listed = await env.client.get(f"{SCIM}/Users", headers=headers)
    assert listed.json()["totalResults"] == 0


async def test_attributes_and_excluded_attributes_name_attributes_and_sub_attributes(scim):
    user = (await scim("POST", "/Users", okta_user())).json()
    only = (await scim("GET", f"/Users/{user['id']}", params={"attributes": "userName,name.givenName"})).json()
    assert set(only) == {"schemas", "id", "meta", "userName", "name"} and only["name"] == {"givenName": "Ada"}
    listed = (await scim("GET", "/Users", params={"excludedAttributes": "emails,name.familyName"})).json()
    [item] = listed["Resources"]
    assert "emails" not in item and item["name"] == {"givenName": "Ada"} and item["userName"] == user["userName"]


@pytest.mark.engine
async def test_ten_thousand_clauses_in_a_search_body_and_nul_characters_are_400_never_5xx(scim):
    clauses = " or ".join(['userName eq "a"'] * 10_000)
    search = await scim("POST", "/Users/.search", {"filter": clauses})
    assert search.status_code == 400 and search.json()["scimType"] == "invalidFilter"
    nul = await scim("GET", "/Users", params={"filter": 'externalId eq "a\\u0000b"'})
    assert nul.status_code == 400, nul.text
    for body in (
        okta_user(externalId="x\u0000"),
        okta_user(userName="ada\u0000@example.com"),
        okta_user(nickName="\u0000"),
    ):
        response = await scim("POST", "/Users", body)
        assert response.status_code == 400, response.text


REFUSAL = {
    "schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
    "status": "403",
    "detail": "disallowed by web-hook event handler: Email domain not allowed: Sign-ups from mailinator.com are not"
    " accepted.",
}
"""A blocking user hook's refusal in SCIM's error schema: 403, the hook's title and reason in `detail`."""


async def admin_roles(project, user_id: str) -> list[str]:
    response = await project.get(f"/_api/admin/users/{user_id}")
    assert response.status_code == 200, response.text
    return sorted(response.json()["result"]["roles"])


async def test_pre_create_refuses_a_scim_and_a_bulk_create_writing_nothing_and_its_mutations_are_kept(
    env, project, scim
):
    await env.services.projects.add_keys(project.id, "userio_role", ("member",))
    refuse, add_role = plugin("refuse-email-domain.ts"), plugin("add-default-role.ts")
    await save_hooks(project, ("user.pre_create", refuse), ("user.pre_create", add_role))
    spam = okta_user("spam", emails=[{"primary": True, "value": "spam@mailinator.com", "type": "work"}])

    refused = await scim("POST", "/Users", spam)
    ada = await scim("POST", "/Users", okta_user("ada"))
    operations = [
        {"method": "POST", "path": "/Users", "bulkId": "spam", "data": spam},
        {"method": "POST", "path": "/Users", "bulkId": "bob", "data": okta_user("bob")},
    ]
    bulk = await scim("POST", "/Bulk", {"schemas": [BULK], "Operations": operations})

    assert refused.status_code == 403, refused.text
    assert refused.headers["content-type"].startswith("application/scim+json")
    assert refused.json() == REFUSAL
    assert ada.status_code == 201, ada.text
    assert bulk.status_code == 200, bulk.text
    spam_op, bob_op = bulk.json()["Operations"]
    assert (spam_op["status"], spam_op["response"]) == ("403", REFUSAL) and "location" not in spam_op
    assert bob_op["status"] == "201", bob_op
    bob_id = bob_op["location"].rsplit("/", 1)[1]
    listed = (await scim("GET", "/Users")).json()
    assert sorted(r["userName"] for r in listed["Resources"]) == ["ada@example.com", "bob@example.com"]
    assert await admin_roles(project, ada.json()["id"]) == ["member"]
    assert await admin_roles(project, bob_id) == ["member"]
    entries = await all_entries(project, 2)
    assert [(e["type"], e["user_id"]) for e in entries] == [
        ("user.created", ada.json()["id"]),
        ("user.created", bob_id),
    ]


async def test_pre_update_refuses_a_scim_put_and_patch_writing_nothing_and_its_mutations_are_kept(env, project, scim):
    await env.services.projects.add_keys(project.id, "userio_role", ("member",))
    user = (await scim("POST", "/Users", okta_user("ada"))).json()
    path = f"/Users/{user['id']}"
    refuse, add_role = plugin("refuse-email-domain.ts"), plugin("add-default-role.ts")
    await save_hooks(project, ("user.profile.pre_update", refuse), ("user.profile.pre_update", add_role))
    blocked = [{"primary": True, "value": "ada@mailinator.com", "type": "work"}]

    put = await scim("PUT", path, okta_user("ada", emails=blocked, displayName="Put"))
    patch = await scim(
        "PATCH",
        path,
        {
            "schemas": [PATCH],
            "Operations": [
                {"op": "replace", "path": "displayName", "value": "Patched"},
                {"op": "replace", "path": 'emails[type eq "work"].value', "value": "ada@mailinator.com"},
            ],
        },
    )
    unchanged = (await scim("GET", path)).json()

    assert put.status_code == 403 and put.json() == REFUSAL, put.text
    assert patch.status_code == 403 and patch.json() == REFUSAL, patch.text
    assert unchanged == user
    assert await admin_roles(project, user["id"]) == []

    patched = await scim(
        "PATCH", path, {"schemas": [PATCH], "Operations": [{"op": "replace", "path": "nickName", "value": "A"}]}
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["nickName"] == "A"
    assert await admin_roles(project, user["id"]) == ["member"]
    put_allowed = await scim("PUT", path, okta_user("ada", displayName="Augusta"))
    assert put_allowed.status_code == 200, put_allowed.text
    assert put_allowed.json()["displayName"] == "Augusta" and "nickName" not in put_allowed.json()
    assert await admin_roles(project, user["id"]) == ["member"]
    entries = await all_entries(project, 3)
    assert [e["type"] for e in entries] == ["user.created", "user.profile.updated", "user.profile.updated"]
    assert [e["user"].get("nickname") for e in entries] == [None, "A", None]


async def test_a_profile_hook_that_refuses_never_blocks_an_idps_deactivation(env, project, scim):
    """Okta's and Entra's deactivation (a PATCH or PUT of `active` alone) changes no profile: no
    `user.profile.pre_update` hook runs, so one that refuses the user's profile cannot keep a leaver signing in."""
    users = env.services.users
    spam, spam2 = (
        okta_user(name, emails=[{"primary": True, "value": f"{name}@mailinator.com", "type": "work"}])
        for name in ("spam", "spam2")
    )
    made = [(await scim("POST", "/Users", {**spam, "password": "IdP-set secret 1"})).json()]
    made.append((await scim("POST", "/Users", spam2)).json())
    await save_hooks(project, ("user.profile.pre_update", plugin("refuse-email-domain.ts")))
    blocked_edit = await scim(
        "PATCH",
        f"/Users/{made[0]['id']}",
        {"schemas": [PATCH], "Operations": [{"op": "replace", "path": "displayName", "value": "Spam"}]},
    )

    okta = {"schemas": [PATCH], "Operations": [{"op": "replace", "value": {"active": False}}]}
    deactivated = await scim("PATCH", f"/Users/{made[0]['id']}", okta)
    put = await scim("PUT", f"/Users/{made[1]['id']}", {**spam2, "active": False})

    assert blocked_edit.status_code == 403, blocked_edit.text  # the hook runs, and refuses, on a profile change
    assert deactivated.status_code == 200, deactivated.text
    assert deactivated.json()["active"] is False
    assert put.status_code == 200 and put.json()["active"] is False, put.text
    with pytest.raises(UserDisabled):
        await users.verify_password(project.id, "spam@mailinator.com", "IdP-set secret 1")
    entries = await all_entries(project, 4)
    assert [(e["type"], e["user_id"]) for e in entries] == [
        ("user.created", made[0]["id"]),
        ("user.created", made[1]["id"]),
        ("user.disabled", made[0]["id"]),
        ("user.disabled", made[1]["id"]),
    ]
