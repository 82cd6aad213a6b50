"""The hooks admin API: the ordered hook list, compile errors with positions, the test runner."""

from __future__ import annotations

from tests.tokens.conftest import HOOKS

OK_HOOK = "export default async function (e: any): Promise<any> {\n  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, hello: 'world' } } } };\n}\n"
ID_HOOK = "export default (e: any) => ({ is_allowed: true, mutations: { id_token: { payload: { ...e.payload.id_token.payload, custom_attributes: e.payload.user.custom_attributes } } } });\n"


async def test_put_get_delete_the_hook_list(world):
    hooks = [
        {"event": "oidc.jwt.pre_create", "source": OK_HOOK},
        {"event": "oidc.id_token.pre_create", "source": ID_HOOK},
    ]

    put = await world.project.env.client.put(HOOKS, json={"hooks": hooks}, headers=world.project.headers())
    listed = await world.project.get(HOOKS)
    deleted = await world.project.env.client.delete(HOOKS, headers=world.project.headers())
    after = await world.project.get(HOOKS)

    saved = [{**hook, "on_error": "deny"} for hook in hooks]
    assert put.status_code == 200
    assert put.json() == {"result": {"hooks": saved, "fetch_allowlist": []}}
    assert listed.json() == {"result": {"hooks": saved, "fetch_allowlist": []}}
    assert deleted.status_code == 200
    assert deleted.json() == {"result": {"hooks": [], "fetch_allowlist": []}}
    assert after.json() == {"result": {"hooks": [], "fetch_allowlist": []}}


async def test_a_hook_that_does_not_compile_changes_nothing_and_says_where(world):
    await world.put_hooks(("oidc.jwt.pre_create", OK_HOOK))
    broken = "export default function (e: any) {\n  enum Color { Red }\n  return { is_allowed: true };\n}\n"

    response = await world.project.env.client.put(
        HOOKS,
        json={
            "hooks": [
                {"event": "oidc.jwt.pre_create", "source": OK_HOOK},
                {"event": "oidc.jwt.pre_create", "source": broken},
            ]
        },
        headers=world.project.headers(),
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["name"], error["reason"]) == ("Invalid", "HookCompileFailed")
    assert (error["info"]["index"], error["info"]["line"], error["info"]["column"]) == (1, 2, 3)
    assert "enum" in error["info"]["message"]
    assert (await world.project.get(HOOKS)).json()["result"]["hooks"] == [
        {"event": "oidc.jwt.pre_create", "source": OK_HOOK, "on_error": "deny"}
    ]


async def test_unknown_event_fails_validation(world):
    response = await world.project.env.client.put(
        HOOKS, json={"hooks": [{"event": "user.exploded", "source": OK_HOOK}]}, headers=world.project.headers()
    )

    assert response.status_code == 400
    assert response.json()["error"]["reason"] == "ValidationFailed"


async def test_the_test_runner_shows_payload_added_claims_console_and_durations(world):
    source = "export default function (e: any) {\n  console.log('user', e.payload.user.id);\n  console.warn({ n: 1 });\n  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, tier: e.payload.user.custom_attributes.tier } } } };\n}\n"

    response = await world.project.post(
        f"{HOOKS}/test",
        {
            "event": "oidc.jwt.pre_create",
            "user_id": world.user_id,
            "client_id": "jwt-app",
            "hooks": [{"event": "oidc.jwt.pre_create", "source": source}],
        },
    )

    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["added_claims"] == {"tier": "gold"}
    assert result["payload"]["sub"] == world.user_id
    (run,) = result["hooks"]
    assert run["console"][0] == {"level": "log", "message": f"user {world.user_id}"}
    assert run["console"][1]["level"] == "warn"
    assert run["duration_ms"] >= 0
    assert "error" not in result
    assert (await world.project.get(HOOKS)).json()["result"]["hooks"] == [], "the test saves nothing"


async def test_the_test_runner_reports_a_failure_with_its_position(world):
    source = "export default function (e: any) {\n  const x: any = null;\n  return x.boom;\n}\n"

    response = await world.project.post(
        f"{HOOKS}/test",
        {
            "event": "oidc.jwt.pre_create",
            "user_id": world.user_id,
            "client_id": "jwt-app",
            "hooks": [{"event": "oidc.jwt.pre_create", "source": source}],
        },
    )

    result = response.json()["result"]
    assert result["error"]["reason"] == "HookInvalidResponse"
    assert ":3:" in result["error"]["message"]
    assert result["hooks"][0]["error"]["reason"] == "HookInvalidResponse"


async def test_the_test_runner_uses_the_saved_hooks_by_default(world):
    await world.put_hooks(("oidc.jwt.pre_create", OK_HOOK))

    response = await world.project.post(
        f"{HOOKS}/test", {"event": "oidc.jwt.pre_create", "user_id": world.user_id, "client_id": "jwt-app"}
    )

    assert response.json()["result"]["added_claims"] == {"hello": "world"}


async def test_the_test_runner_names_the_projects_clients_and_what_a_user_is(world):
    other = await world.env.make_project()

    def test(project, user_id: str, client_id: str):
        body = {"event": "oidc.jwt.pre_create", "user_id": user_id, "client_id": client_id}
        return project.post(f"{HOOKS}/test", body)

    client = await test(world.project, world.user_id, "web")
    elsewhere = await test(other, world.user_id, "jwt-app")
    user = await test(world.project, "ada@example.com", "jwt-app")

    assert client.status_code == 400
    assert client.json()["error"]["message"] == "unknown client_id 'web'; this project's clients: jwt-app, opaque-app"
    assert elsewhere.json()["error"]["message"] == "unknown client_id 'jwt-app'; this project has no clients"
    assert user.status_code == 404
    assert user.json()["error"]["message"] == (
        "no user 'ada@example.com' in this project: pass a user's id (`sub` in an export)"
    )


async def test_hooks_of_one_project_never_see_another_projects_users(world):
    other = await world.env.make_project()

    response = await other.post(
        f"{HOOKS}/test", {"event": "oidc.jwt.pre_create", "user_id": world.user_id, "client_id": "jwt-app"}
    )

    assert response.status_code in (400, 404)


async def test_hooks_api_requires_the_admin_token(world):
    response = await world.project.env.client.get(HOOKS, headers={"Host": world.project.host})

    assert response.status_code == 403
    assert response.json()["error"]["name"] == "Forbidden"


async def test_the_test_runner_warns_when_the_client_only_gets_opaque_tokens(world):
    await world.put_hooks(("oidc.jwt.pre_create", OK_HOOK))

    opaque = await world.project.post(
        f"{HOOKS}/test", {"event": "oidc.jwt.pre_create", "user_id": world.user_id, "client_id": "opaque-app"}
    )
    jwt_client = await world.project.post(
        f"{HOOKS}/test", {"event": "oidc.jwt.pre_create", "user_id": world.user_id, "client_id": "jwt-app"}
    )

    (warning,) = opaque.json()["result"]["warnings"]
    assert "opaque-app" in warning
    assert "opaque access tokens" in warning
    assert "warnings" not in jwt_client.json()["result"]


# -- a save runs each hook once on a sample event (issue 46) ----------------------------------------------------------


def _hook(event: str, body: str) -> dict[str, str]:
    return {"event": event, "source": f"export default async function (e: any): Promise<any> {{ {body} }}"}


async def _save(world, *hooks: dict[str, str]):
    response = await world.project.env.client.put(HOOKS, json={"hooks": list(hooks)}, headers=world.project.headers())
    assert response.status_code == 200, response.text
    return response.json()


async def test_saving_a_hook_that_answers_in_a_wrong_shape_warns_naming_the_member(world):
    body = await _save(
        world,
        {"event": "oidc.jwt.pre_create", "source": OK_HOOK},
        _hook("oidc.jwt.pre_create", 'return { is_allowed: "yes" };'),
        _hook("oidc.id_token.pre_create", "return { is_allowed: true, mutations: { id_token: { payload: {} } } };"),
        _hook("user.password_migration", 'return { is_allowed: true, user: "ada" };'),
    )

    assert [h["event"] for h in body["result"]["hooks"]] == [
        "oidc.jwt.pre_create",
        "oidc.jwt.pre_create",
        "oidc.id_token.pre_create",
        "user.password_migration",
    ]
    warnings = body["warnings"]
    assert len(warnings) == 3, warnings
    assert warnings[0].startswith('hooks[1] (oidc.jwt.pre_create): is_allowed must be a boolean, got "yes"')
    assert warnings[1].startswith("hooks[2] (oidc.id_token.pre_create): ") and "InvalidJWTMutations" in warnings[1]
    assert warnings[2].startswith(
        'hooks[3] (user.password_migration): user must be an import record (an object), got "ada"'
    )


async def test_a_hook_that_answers_rightly_refuses_or_throws_on_the_sample_saves_without_warnings(world):
    body = await _save(
        world,
        {"event": "oidc.jwt.pre_create", "source": OK_HOOK},
        _hook("oidc.jwt.pre_create", "return { is_allowed: false, title: 'no', reason: 'sample' };"),
        _hook(
            "oidc.jwt.pre_create",
            "if (e.payload.user.custom_attributes.tier.x) { return 1; } return { is_allowed: true };",
        ),
        _hook("oidc.id_token.pre_create", "return { is_allowed: true };"),
    )

    assert "warnings" not in body, body


async def test_a_wrong_answer_at_sign_in_is_named_in_the_run_log(world):
    await _save(world, _hook("oidc.jwt.pre_create", 'return { is_allowed: "yes" };'))

    response = await world.sign_in()
    runs = (await world.project.get(f"{HOOKS}/runs")).json()["result"]["runs"]

    assert response.status_code == 500 and response.json()["error"] == "server_error"
    assert runs[0]["outcome"] == "error"
    assert {"level": "error", "message": 'is_allowed must be a boolean, got "yes"'} in runs[0]["console"]
