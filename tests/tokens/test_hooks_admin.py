"""Issue 14 through the admin API and the token endpoint, on both deployments: secrets, versions and rollback, the
run log, `on_error: "continue"`, the fetch allowlist."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import timedelta

import jwt
import pytest

from litestar_userio.config import PasswordConfig
from tests.tokens.conftest import HOOKS

SECRET = "sk_live_9f8e7d6c5b4a"


def jwt_hook(body: str, on_error: str | None = None) -> dict[str, str]:
    hook = {
        "event": "oidc.jwt.pre_create",
        "source": f"export default async function (e: any, ctx: any): Promise<any> {{ {body} }}",
    }
    if on_error is not None:
        hook["on_error"] = on_error
    return hook


ADD_PLAN = "return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, plan: 'gold' } } } };"


async def put(world, body):
    return await world.project.env.client.put(HOOKS, json=body, headers=world.project.headers())


# -- secrets -----------------------------------------------------------------------------------------------------------


async def test_secret_reaches_the_hook_and_never_leaves_the_server(world, caplog):
    caplog.set_level(logging.DEBUG)
    client, headers = world.project.env.client, world.project.headers()
    saved = await client.put(f"{HOOKS}/secrets/CRM_KEY", json={"value": SECRET}, headers=headers)
    await put(
        world,
        {
            "hooks": [
                jwt_hook(
                    "console.log('key', ctx.secrets.CRM_KEY);"
                    "if (ctx.secrets.CRM_KEY !== 'sk_live_9f8e7d6c5b4a') throw new Error('wrong secret');"
                    "return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload,"
                    " key_length: ctx.secrets.CRM_KEY.length } } } };"
                ),
                jwt_hook("throw new Error('leak ' + ctx.secrets.CRM_KEY);", on_error="continue"),
            ]
        },
    )
    listed = await world.project.get(f"{HOOKS}/secrets")
    token = await world.sign_in()
    tested = await world.project.post(
        f"{HOOKS}/test", {"event": "oidc.jwt.pre_create", "user_id": world.user_id, "client_id": "jwt-app"}
    )
    runs = await world.project.get(f"{HOOKS}/runs")
    versions = await world.project.get(f"{HOOKS}/versions")
    rows = await world.project.fetch("SELECT ciphertext FROM userio_hook_secret")

    assert saved.status_code == 200 and saved.json()["result"]["name"] == "CRM_KEY"
    assert [s["name"] for s in listed.json()["result"]["secrets"]] == ["CRM_KEY"]
    assert set(listed.json()["result"]["secrets"][0]) == {"name", "updated_at"}
    claims = jwt.decode(token.json()["access_token"], options={"verify_signature": False})
    assert claims["key_length"] == len(SECRET)
    result = tested.json()["result"]
    assert result["hooks"][0]["console"] == [{"level": "log", "message": "key [secret]"}]
    assert "leak [secret]" in result["hooks"][1]["error"]["message"]
    for response in (saved, listed, token, tested, runs, versions):
        assert SECRET not in response.text
    assert SECRET not in caplog.text
    assert rows and all(SECRET not in r["ciphertext"] for r in rows)


@pytest.mark.engine
async def test_secret_is_deleted_and_unknown_names_are_404(world):
    client, headers = world.project.env.client, world.project.headers()
    await client.put(f"{HOOKS}/secrets/A_KEY", json={"value": "one"}, headers=headers)

    deleted = await client.delete(f"{HOOKS}/secrets/A_KEY", headers=headers)
    again = await client.delete(f"{HOOKS}/secrets/A_KEY", headers=headers)
    bad_name = await client.put(f"{HOOKS}/secrets/not-an-identifier", json={"value": "x"}, headers=headers)

    assert deleted.status_code == 200 and deleted.json()["result"]["secrets"] == []
    assert again.status_code == 404 and again.json()["error"]["reason"] == "HookSecretNotFound"
    assert bad_name.status_code == 400


async def test_secrets_of_one_project_are_not_another_projects(world):
    other = await world.env.make_project()
    await world.project.env.client.put(
        f"{HOOKS}/secrets/CRM_KEY", json={"value": SECRET}, headers=world.project.headers()
    )

    listed = await other.get(f"{HOOKS}/secrets")

    assert listed.json()["result"]["secrets"] == []


# -- versions ----------------------------------------------------------------------------------------------------------


@pytest.mark.engine
async def test_every_save_is_a_version_and_rollback_saves_an_old_body_again(world):
    first = {"hooks": [jwt_hook(ADD_PLAN)], "fetch_allowlist": ["https://crm.example.com"]}
    second = {"hooks": [jwt_hook("return { is_allowed: false, title: 'closed' };")]}
    assert (await put(world, first)).status_code == 200
    now = world.env.clock.now()
    operator = jwt.encode(
        {"aud": world.project.id, "sub": "ops@example.com", "iat": now, "exp": now + timedelta(minutes=5)},
        world.project.key.private_pem,
        algorithm="RS256",
        headers={"kid": world.project.key.kid},
    )
    saved = await world.project.env.client.put(HOOKS, json=second, headers=world.project.headers(operator))
    assert saved.status_code == 200, saved.text

    listed = (await world.project.get(f"{HOOKS}/versions")).json()["result"]["versions"]
    one = (await world.project.get(f"{HOOKS}/versions/1")).json()["result"]
    refused = await world.sign_in()
    rolled = await world.project.post(f"{HOOKS}/versions/1/rollback", {})
    after = (await world.project.get(HOOKS)).json()["result"]
    allowed = await world.sign_in()
    missing = await world.project.get(f"{HOOKS}/versions/99")
    not_a_number = await world.project.get(f"{HOOKS}/versions/latest")

    assert [v["version"] for v in listed] == [2, 1]
    kid = world.project.key.kid
    assert listed[0]["actor"] == {"kid": kid, "sub": "ops@example.com"} and listed[0]["created_at"]
    assert listed[1]["actor"] == {"kid": kid, "sub": None}
    assert "body" not in listed[0]
    assert one["body"] == {
        "hooks": [{**jwt_hook(ADD_PLAN), "on_error": "deny"}],
        "fetch_allowlist": ["https://crm.example.com"],
    }
    assert refused.status_code == 403
    assert rolled.status_code == 200 and rolled.json()["result"]["version"] == 3
    assert rolled.json()["result"]["body"] == one["body"]
    assert after == one["body"]
    assert jwt.decode(allowed.json()["access_token"], options={"verify_signature": False})["plan"] == "gold"
    assert missing.status_code == 404 and missing.json()["error"]["reason"] == "HookVersionNotFound"
    assert not_a_number.status_code == 404 and not_a_number.json()["error"]["reason"] == "HookVersionNotFound"


# -- the run log -------------------------------------------------------------------------------------------------------


@pytest.mark.engine
async def test_run_log_records_outcomes_and_claim_names_newest_first_in_pages(world):
    await put(
        world,
        {"hooks": [jwt_hook("console.log('hello'); " + ADD_PLAN), jwt_hook("throw new Error('oops');", "continue")]},
    )
    for _ in range(2):
        assert (await world.sign_in()).status_code == 200
    await put(world, {"hooks": [jwt_hook("return { is_allowed: false, reason: 'no' };")]})
    assert (await world.sign_in()).status_code == 403

    first = (await world.project.get(f"{HOOKS}/runs?limit=2")).json()["result"]
    rest = (await world.project.get(f"{HOOKS}/runs?limit=10&cursor={first['next_cursor']}")).json()["result"]

    runs = first["runs"] + rest["runs"]
    assert [(r["outcome"], r["hook_index"]) for r in runs] == [
        ("refused", 0),
        ("error", 1),
        ("allowed", 0),
        ("error", 1),
        ("allowed", 0),
    ]
    refused, failed, allowed = runs[0], runs[1], runs[2]
    assert refused["error_kind"] is None and refused["claims_added"] == []
    assert failed["error_kind"] == "exception"
    assert allowed["claims_added"] == ["plan"] and "gold" not in json.dumps(runs)
    assert allowed["console"] == [{"level": "log", "message": "hello"}]
    assert allowed["event"] == "oidc.jwt.pre_create" and allowed["sampled_rate"] == 1.0
    assert allowed["duration_ms"] > 0 and allowed["started_at"]
    assert rest["next_cursor"] is None


async def test_run_log_is_sampled_when_runs_are_many_and_shows_the_rate(backend, make_env):
    from example_app.oauth import token
    from tests.helpers import HASH_2B, import_one
    from tests.tokens.conftest import TokenWorld

    # Ada's cost-4 hash stays the project's cost: at the default 10 (a re-hash at the first sign-in) a busy machine
    # signed in fewer than the rate's 2 a second, and no window was ever sampled.
    env = await make_env(
        backend, route_handlers=[token], hooks={"run_log_per_second": 2}, passwords=PasswordConfig(bcrypt_cost=4)
    )
    project = await env.make_project()
    detail = await import_one(
        project, {"email": "ada@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}}
    )
    await env.services.tokens.applications.create(project.id, "jwt-app", issue_jwt_access_token=True)
    sampled = TokenWorld(env, project, detail["user_id"])
    await env.client.put(HOOKS, json={"hooks": [jwt_hook(ADD_PLAN)]}, headers=project.headers())
    issued, rates = 0, [1.0]
    deadline = asyncio.get_running_loop().time() + 30
    while min(rates) == 1.0 and asyncio.get_running_loop().time() < deadline:  # until a window was over the rate
        for _ in range(10):
            assert (await sampled.sign_in()).status_code == 200
            issued += 1
        runs = (await project.get(f"{HOOKS}/runs?limit=500")).json()["result"]["runs"]
        rates = [r["sampled_rate"] for r in runs]

    assert min(rates) < 1.0
    # The first run sampled may itself be kept (its chance is the rate, 2 % here): the runs after it mostly are not.
    for _ in range(30):
        assert (await sampled.sign_in()).status_code == 200
        issued += 1
    runs = (await project.get(f"{HOOKS}/runs?limit=500")).json()["result"]["runs"]
    rates = [r["sampled_rate"] for r in runs]
    assert len(runs) < issued, "fewer entries than runs"
    assert all(0 < rate <= 1.0 for rate in rates)


async def test_test_runs_are_not_in_the_run_log(world):
    await put(world, {"hooks": [jwt_hook(ADD_PLAN)]})

    await world.project.post(
        f"{HOOKS}/test", {"event": "oidc.jwt.pre_create", "user_id": world.user_id, "client_id": "jwt-app"}
    )

    assert (await world.project.get(f"{HOOKS}/runs")).json()["result"]["runs"] == []


async def test_run_log_entries_expire_after_the_retention(world):
    await put(world, {"hooks": [jwt_hook(ADD_PLAN)]})
    await world.sign_in()
    assert len((await world.project.get(f"{HOOKS}/runs")).json()["result"]["runs"]) == 1

    world.env.clock.advance(timedelta(days=7, seconds=1))

    assert (await world.project.get(f"{HOOKS}/runs")).json()["result"]["runs"] == []


async def test_run_log_paging_parameters_are_validated(world):
    too_many = await world.project.get(f"{HOOKS}/runs?limit=501")
    bad_cursor = await world.project.get(f"{HOOKS}/runs?cursor=abc")

    assert too_many.status_code == 400 and bad_cursor.status_code == 400


# -- on_error ----------------------------------------------------------------------------------------------------------


async def test_on_error_continue_issues_the_token_without_the_hooks_changes(world):
    await put(
        world,
        {
            "hooks": [
                jwt_hook(ADD_PLAN),
                jwt_hook(
                    "return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, half: 1,"
                    " sub: 'someone-else' } } } };",
                    on_error="continue",
                ),
                jwt_hook("while (true) {}", on_error="continue"),
            ]
        },
    )

    response = await world.sign_in()

    assert response.status_code == 200, response.text
    claims = jwt.decode(response.json()["access_token"], options={"verify_signature": False})
    assert claims["plan"] == "gold" and claims["sub"] == world.user_id and "half" not in claims
    runs = (await world.project.get(f"{HOOKS}/runs")).json()["result"]["runs"]
    assert [(r["hook_index"], r["outcome"], r["error_kind"]) for r in runs] == [
        (2, "error", "timeout"),
        (1, "error", "invalid_mutations"),
        (0, "allowed", None),
    ]


async def test_on_error_defaults_to_deny_and_continue_never_overrides_a_refusal(world):
    await put(world, {"hooks": [jwt_hook("throw new Error('down');")]})
    failed = await world.sign_in()
    await put(world, {"hooks": [jwt_hook("return { is_allowed: false, reason: 'no' };", on_error="continue")]})
    refused = await world.sign_in()

    assert failed.status_code == 500 and failed.json()["error"] == "server_error"
    assert refused.status_code == 403 and refused.json()["error_description"] == "no"


# -- the fetch allowlist -----------------------------------------------------------------------------------------------


async def test_fetch_allowlist_is_saved_canonical_and_kept_when_a_put_omits_it(world):
    saved = await put(world, {"hooks": [], "fetch_allowlist": ["HTTPS://CRM.example.com:443", "http://127.0.0.1:8080"]})
    kept = await put(world, {"hooks": [jwt_hook(ADD_PLAN)]})
    bad = await put(world, {"hooks": [], "fetch_allowlist": ["https://crm.example.com/path"]})

    assert saved.json()["result"]["fetch_allowlist"] == ["https://crm.example.com", "http://127.0.0.1:8080"]
    assert kept.json()["result"]["fetch_allowlist"] == ["https://crm.example.com", "http://127.0.0.1:8080"]
    assert bad.status_code == 400 and "without a path" in bad.json()["error"]["message"]
    assert (await world.project.get(HOOKS)).json()["result"]["fetch_allowlist"] == [
        "https://crm.example.com",
        "http://127.0.0.1:8080",
    ]


async def test_an_allowlist_entry_that_is_an_address_in_disguise_is_refused_by_the_api(world):
    """Issue 29: `127。0。0。1` is what httpx dials as 127.0.0.1, so it is no host name."""
    saved = await put(
        world, {"hooks": [], "fetch_allowlist": ["https://B\u00fccher.de", "https://api\uff0eexample.com."]}
    )
    disguised = await put(world, {"hooks": [], "fetch_allowlist": ["http://169\u3002254\u3002169\u3002254"]})

    assert saved.json()["result"]["fetch_allowlist"] == ["https://xn--bcher-kva.de", "https://api.example.com"]
    assert disguised.status_code == 400
    assert "the host is the address 169.254.169.254" in disguised.json()["error"]["message"]
    assert (await world.project.get(HOOKS)).json()["result"]["fetch_allowlist"] == saved.json()["result"][
        "fetch_allowlist"
    ]
