"""The `refresh_token` grant of the example app: rotating refresh tokens, stored hashed, revoked on reuse; the
hooks run on refresh too, with the user's current attributes (as the reference runs `oidc.jwt.pre_create` and
`oidc.id_token.pre_create` on every issuance)."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import jwt

from tests.helpers import import_one

ADD_NAME = """
export default async function (e: any): Promise<any> {
  return { is_allowed: true, mutations: { jwt: { payload: {
    ...e.payload.jwt.payload, name: e.payload.user.standard_attributes.name ?? null,
  } } } };
}
"""
ADD_NAME_TO_ID_TOKEN = """
export default async function (e: any): Promise<any> {
  return { is_allowed: true, mutations: { id_token: { payload: {
    ...e.payload.id_token.payload, tier: e.payload.user.custom_attributes.tier ?? null,
  } } } };
}
"""


async def refresh(world, refresh_token, client_id="jwt-app"):
    return await world.project.env.client.post(
        "/oauth2/token",
        data={"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id},
        headers={"Host": world.project.host},
    )


def claims_of(token_text):
    return jwt.decode(token_text, options={"verify_signature": False})


async def test_offline_access_sign_in_returns_a_refresh_token_stored_only_as_its_hash(world):
    response = await world.sign_in(scope="openid offline_access")

    assert response.status_code == 200, response.text
    refresh_token = response.json()["refresh_token"]
    rows = await world.project.fetch("SELECT token_hash FROM userio_refresh_token WHERE user_id = $1", world.user_id)
    assert [r["token_hash"] for r in rows] == [hashlib.sha256(refresh_token.encode()).hexdigest()]


async def test_sign_in_without_offline_access_returns_no_refresh_token(world):
    response = await world.sign_in(scope="openid")

    assert "refresh_token" not in response.json()


async def test_refresh_runs_the_hooks_with_the_users_current_attributes(world):
    await world.put_hooks(("oidc.jwt.pre_create", ADD_NAME), ("oidc.id_token.pre_create", ADD_NAME_TO_ID_TOKEN))
    first = (await world.sign_in(scope="openid offline_access")).json()
    assert claims_of(first["access_token"])["name"] == "Ada"
    await import_one(
        world.project,
        {"email": "ada@example.com", "name": "Ada L.", "custom_attributes": {"tier": "platinum"}},
        upsert=True,
    )

    response = await refresh(world, first["refresh_token"])

    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "scope", "id_token", "refresh_token"}
    assert body["scope"] == "openid offline_access"
    assert claims_of(body["access_token"])["name"] == "Ada L."
    assert claims_of(body["access_token"])["sub"] == world.user_id
    assert claims_of(body["id_token"])["tier"] == "platinum"


async def test_each_refresh_rotates_the_refresh_token(world):
    first = (await world.sign_in(scope="offline_access")).json()["refresh_token"]

    second = (await refresh(world, first)).json()["refresh_token"]
    third = await refresh(world, second)

    assert second != first
    assert third.status_code == 200
    assert third.json()["refresh_token"] not in {first, second}


async def test_reusing_a_refresh_token_revokes_the_whole_sign_in(world):
    first = (await world.sign_in(scope="offline_access")).json()["refresh_token"]
    second = (await refresh(world, first)).json()["refresh_token"]

    reused = await refresh(world, first)
    after = await refresh(world, second)

    assert reused.status_code == 400
    assert reused.json()["error"] == "invalid_grant"
    assert "already used" in reused.json()["error_description"]
    assert after.status_code == 400
    assert after.json()["error_description"] == "the refresh token was revoked"


async def test_another_sign_in_is_not_revoked_by_a_reuse(world):
    stolen = (await world.sign_in(scope="offline_access")).json()["refresh_token"]
    other = (await world.sign_in(scope="offline_access")).json()["refresh_token"]
    await refresh(world, stolen)
    await refresh(world, stolen)

    assert (await refresh(world, other)).status_code == 200


async def test_unknown_or_foreign_client_refresh_token_is_invalid_grant(world):
    token = (await world.sign_in(scope="offline_access")).json()["refresh_token"]

    unknown = await refresh(world, "not-a-token")
    foreign = await refresh(world, token, client_id="opaque-app")

    assert (unknown.status_code, unknown.json()["error"]) == (400, "invalid_grant")
    assert (foreign.status_code, foreign.json()["error"]) == (400, "invalid_grant")
    assert (await refresh(world, token)).status_code == 200


async def test_a_disable_by_import_revokes_the_refresh_token_for_good(world):
    token = (await world.sign_in(scope="offline_access")).json()["refresh_token"]
    await import_one(world.project, {"email": "ada@example.com", "disabled": True}, upsert=True)

    response = await refresh(world, token)

    assert response.status_code == 400
    assert response.json()["error_description"] == "the refresh token was revoked"
    await import_one(world.project, {"email": "ada@example.com", "disabled": False}, upsert=True)
    assert (await refresh(world, token)).json()["error_description"] == "the refresh token was revoked"


async def test_refresh_is_refused_once_the_account_valid_period_has_ended(world):
    until = (world.env.clock.now() + timedelta(hours=1)).isoformat()
    await import_one(world.project, {"email": "ada@example.com", "account_valid_until": until}, upsert=True)
    token = (await world.sign_in(scope="offline_access")).json()["refresh_token"]
    world.env.clock.advance(timedelta(hours=2))  # no change was written: the refresh itself finds it

    response = await refresh(world, token)

    assert response.status_code == 400
    assert response.json()["error_description"].startswith("the account can sign in only from any time until")


async def test_refresh_token_expires_after_its_lifetime(world):
    token = (await world.sign_in(scope="offline_access")).json()["refresh_token"]
    world.env.clock.advance(world.env.config.tokens.refresh_token_lifetime + timedelta(seconds=1))

    response = await refresh(world, token)

    assert response.status_code == 400
    assert response.json()["error_description"] == "the refresh token expired"
