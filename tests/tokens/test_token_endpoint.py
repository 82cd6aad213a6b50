"""Token issuance with hooks through a host's token endpoint (SPEC 6.1, DECISIONS 5)."""

from __future__ import annotations

import asyncio

import jwt
import pytest

from tests.tokens.conftest import plugin_hook

ADD_CLAIMS = """
import { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";

export default async function(e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...e.payload.jwt.payload,
          "https://example.com/custom_attributes": e.payload.user.custom_attributes,
          "https://example.com/standard_attributes": e.payload.user.standard_attributes,
        },
      },
    },
  };
}
"""


def jwt_hook(body: str) -> tuple[str, str]:
    return ("oidc.jwt.pre_create", f"export default async function (e: any): Promise<any> {{ {body} }}")


async def test_hook_adds_claims_to_a_jwt_access_token_that_verifies_against_the_jwks(world):
    await world.put_hooks(("oidc.jwt.pre_create", ADD_CLAIMS))

    response = await world.sign_in()

    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "scope", "id_token"}
    header = jwt.get_unverified_header(body["access_token"])
    assert (header["alg"], header["typ"]) == ("RS256", "at+jwt")
    claims = await world.verify(body["access_token"], audience=f"https://{world.project.host}")
    assert claims["sub"] == world.user_id
    assert claims["https://example.com/custom_attributes"] == {"tier": "gold", "score": 7}
    assert claims["https://example.com/standard_attributes"]["email"] == "ada@example.com"
    assert claims["https://example.com/standard_attributes"]["email_verified"] is True


async def test_opaque_clients_get_no_jwt_and_run_no_hook(world):
    await world.put_hooks(jwt_hook("return { is_allowed: false, title: 'nope' };"))

    response = await world.sign_in(client_id="opaque-app")

    assert response.status_code == 200, response.text
    assert response.json()["access_token"].count(".") == 0


async def test_id_token_hook_adds_custom_attributes(world):
    await world.put_hooks(("oidc.id_token.pre_create", plugin_hook("add-custom-attributes-to-id-token.ts")))

    body = (await world.sign_in()).json()

    claims = await world.verify(body["id_token"], audience="jwt-app")
    assert claims["custom_attributes"] == {"tier": "gold", "score": 7}
    assert claims["sub"] == world.user_id


async def test_ready_hook_adds_user_attributes_to_jwt(world):
    await world.put_hooks(("oidc.jwt.pre_create", plugin_hook("add-user-attributes-to-jwt.ts")))

    token = (await world.sign_in()).json()["access_token"]

    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["custom_attributes"] == {"tier": "gold", "score": 7}
    assert claims["standard_attributes"]["name"] == "Ada"


async def test_ready_hook_roles_to_claims(world):
    await world.put_hooks(("oidc.jwt.pre_create", plugin_hook("roles-to-claims.ts")))

    claims = jwt.decode((await world.sign_in()).json()["access_token"], options={"verify_signature": False})

    assert claims["roles"] == ["admin"]
    assert claims["groups"] == []


async def test_ready_hook_denies_unverified_users(world):
    await world.put_hooks(("oidc.jwt.pre_create", plugin_hook("deny-disabled-or-unverified.ts")))
    assert (await world.sign_in()).status_code == 200

    from tests.helpers import import_one

    await import_one(world.project, {"email": "ada@example.com", "email_verified": False}, upsert=True)
    refused = await world.sign_in()

    assert refused.status_code == 403
    assert refused.json()["error"] == "access_denied"


async def test_hooks_run_in_order_each_seeing_the_previous_payload(world):
    await world.put_hooks(
        jwt_hook(
            "return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, step: 1 } } } };"
        ),
        ("oidc.id_token.pre_create", "export default (e: any) => ({ is_allowed: true });"),
        jwt_hook(
            "const p = e.payload.jwt.payload; return { is_allowed: true, mutations: { jwt: { payload: { ...p, step: p.step + 1, seen: p.step } } } };"
        ),
    )

    claims = jwt.decode((await world.sign_in()).json()["access_token"], options={"verify_signature": False})

    assert (claims["step"], claims["seen"]) == (2, 1)


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ("return { is_allowed: false, title: 'Blocked', reason: 'Account locked' };", 403, "access_denied"),
        ("throw new Error('boom');", 500, "server_error"),
        ("return 42;", 500, "server_error"),
        ("return undefined;", 500, "server_error"),
        ("while (true) {}", 500, "server_error"),
        ("await null; while (true) {}", 500, "server_error"),
        (
            "return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, sub: 'admin' } } } };",
            500,
            "server_error",
        ),
        (
            "const { exp, ...rest } = e.payload.jwt.payload; return { is_allowed: true, mutations: { jwt: { payload: rest } } };",
            500,
            "server_error",
        ),
    ],
    ids=[
        "disallowed",
        "throws",
        "not-an-object",
        "undefined",
        "sync-loop",
        "loop-after-await",
        "changes-sub",
        "removes-exp",
    ],
)
async def test_every_hook_failure_stops_issuance(world, body, status, error, caplog):
    await world.put_hooks(jwt_hook(body))

    response = await world.sign_in()

    assert response.status_code == status
    assert response.json()["error"] == error
    assert "access_token" not in response.json()
    if status == 403:
        assert response.json()["error_description"] == "Account locked"
        assert response.json()["hook_title"] == "Blocked"


async def test_wrong_password_and_unknown_client_are_oauth_errors(world):
    wrong = await world.sign_in(password="nope")
    unknown = await world.sign_in(client_id="nobody")

    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    assert (unknown.status_code, unknown.json()["error"]) == (401, "invalid_client")


async def test_a_json_body_is_told_the_form_encoding_the_token_endpoint_takes(world):
    body = {"grant_type": "password", "username": "ada@example.com", "password": "x", "client_id": "jwt-app"}

    response = await world.project.env.client.post("/oauth2/token", json=body, headers={"Host": world.project.host})

    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_request",
        "error_description": "the body must be application/x-www-form-urlencoded (RFC 6749 3.2)",
    }


@pytest.mark.engine
async def test_a_rotated_key_still_verifies_old_tokens(world):
    first = (await world.sign_in()).json()["access_token"]
    await world.env.services.tokens.keys.rotate(world.project.id)
    second = (await world.sign_in()).json()["access_token"]

    keys = (await world.jwks())["keys"]
    assert len(keys) == 2
    assert jwt.get_unverified_header(first)["kid"] != jwt.get_unverified_header(second)["kid"]
    for token in (first, second):
        assert (await world.verify(token, audience=jwt.decode(token, options={"verify_signature": False})["aud"]))[
            "sub"
        ] == world.user_id


@pytest.mark.engine
async def test_fifty_simultaneous_token_requests_with_a_hook_all_get_distinct_tokens(world):
    # The event loop's lag meanwhile is a figure for bench/, not an assertion.
    await world.put_hooks(("oidc.jwt.pre_create", ADD_CLAIMS))
    await world.sign_in()  # warm the V8 workers

    responses = await asyncio.gather(*(world.sign_in() for _ in range(50)))

    assert [r.status_code for r in responses] == [200] * 50
    assert len({r.json()["access_token"] for r in responses}) == 50


@pytest.mark.engine
async def test_a_burst_of_a_new_projects_first_sign_ins_makes_one_signing_key(world):
    """Each first token used to make a key of its own, in transactions that could deadlock on each other (a 500)."""
    responses = await asyncio.gather(*(world.sign_in() for _ in range(20)))

    keys = (await world.jwks())["keys"]
    assert [r.status_code for r in responses] == [200] * 20
    assert len(keys) == 1
    assert {jwt.get_unverified_header(r.json()["access_token"])["kid"] for r in responses} == {keys[0]["kid"]}
