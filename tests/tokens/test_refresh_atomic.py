"""Issue 29: a refresh is all or nothing. When issuing the new tokens fails (a hook throws, times out, or finds no
free worker), the old refresh token stays valid and the retry works once the cause is gone; a first sign-in whose
tokens were never delivered stores no refresh token."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from example_app.oauth import token
from litestar_userio.errors import RefreshTokenInvalid
from tests.helpers import HASH_2B, import_one
from tests.tokens.conftest import TokenWorld
from tests.tokens.test_refresh_grant import refresh

pytestmark = pytest.mark.engine

THROWS = 'export default async function (e: any): Promise<any> { throw new Error("the CRM is down"); }'
ENDLESS = "export default async function (e: any): Promise<any> { while (true) {} }"
# Holds the project's only worker share for client `blocker-app`; answers at once for the others.
BLOCKS_ONE_CLIENT = """
export default async function (e: any): Promise<any> {
  if (e.context.client_id === "blocker-app") { while (true) {} }
  return { is_allowed: true };
}
"""


async def refresh_tokens_of(world) -> int:
    rows = await world.project.fetch("SELECT count(*) AS n FROM userio_refresh_token WHERE user_id = $1", world.user_id)
    return int(rows[0]["n"])


@pytest.mark.parametrize("failing", [THROWS, ENDLESS], ids=["throws", "times-out"])
async def test_a_refresh_whose_hook_fails_leaves_the_refresh_token_valid(world, failing):
    first = (await world.sign_in(scope="openid offline_access")).json()["refresh_token"]
    await world.put_hooks(("oidc.jwt.pre_create", failing))

    failed = await refresh(world, first)
    await world.put_hooks()  # the cause is gone
    retried = await refresh(world, first)

    assert (failed.status_code, failed.json()["error"]) == (500, "server_error")
    assert retried.status_code == 200, retried.text
    successor = retried.json()["refresh_token"]
    assert (await refresh(world, successor)).status_code == 200, "the sign-in goes on"
    assert (await refresh(world, first)).json()["error_description"].startswith("the refresh token was already used")


@pytest.mark.parametrize("failing", [THROWS, ENDLESS], ids=["throws", "times-out"])
async def test_a_first_sign_in_whose_tokens_were_never_delivered_stores_no_refresh_token(world, failing):
    await world.put_hooks(("oidc.id_token.pre_create", failing))

    failed = await world.sign_in(scope="openid offline_access")

    assert failed.status_code == 500 and "refresh_token" not in failed.json()
    assert await refresh_tokens_of(world) == 0


async def test_a_refresh_that_finds_no_free_worker_can_be_retried(backend, make_env):
    env = await make_env(
        backend,
        route_handlers=[token],
        hooks={"tenant_share": 1, "queue_timeout": timedelta(milliseconds=200), "hook_timeout": timedelta(seconds=2)},
    )
    project = await env.make_project()
    ada = await import_one(
        project, {"email": "ada@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}}
    )
    for client_id in ("jwt-app", "blocker-app"):
        await env.services.tokens.applications.create(project.id, client_id, issue_jwt_access_token=True)
    world = TokenWorld(env, project, ada["user_id"])
    first = (await world.sign_in(scope="offline_access")).json()["refresh_token"]
    await world.put_hooks(("oidc.jwt.pre_create", BLOCKS_ONE_CLIENT))

    blocker = asyncio.create_task(world.sign_in(client_id="blocker-app"))
    deadline = asyncio.get_running_loop().time() + 60
    while not env.services.hooks.runtime.state().busy:  # the blocker holds the project's only share
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.01)
    busy = await refresh(world, first)
    assert (await blocker).status_code == 500  # its hook timed out: the share is back
    retried = await refresh(world, first)

    assert (busy.status_code, busy.json()["error"]) == (500, "server_error")
    runs = (await project.get("/_api/admin/hooks/runs")).json()["result"]["runs"]
    assert "no_worker" in [r["error_kind"] for r in runs]
    assert retried.status_code == 200, retried.text
    assert (await refresh(world, retried.json()["refresh_token"])).status_code == 200


async def test_two_concurrent_refreshes_with_one_token_are_a_reuse(world):
    first = (await world.sign_in(scope="offline_access")).json()["refresh_token"]

    answers = await asyncio.gather(refresh(world, first), refresh(world, first))

    assert sorted(a.status_code for a in answers) == [200, 400]
    (winner,) = [a for a in answers if a.status_code == 200]
    (loser,) = [a for a in answers if a.status_code == 400]
    assert loser.json()["error_description"].startswith("the refresh token was already used")
    assert (await refresh(world, winner.json()["refresh_token"])).status_code == 400, "the sign-in is revoked"


async def test_a_token_checked_twice_and_rotated_twice_is_a_reuse_that_revokes_its_sign_in(world):
    """The rotation's own check (one statement on PostgreSQL, one trip to SQLite's writer): two refreshes that both
    passed `check` before either rotated, however the requests interleave, rotate once."""
    first = (await world.sign_in(scope="offline_access")).json()["refresh_token"]
    refresh_tokens = world.env.services.tokens.refresh_tokens
    winner = await refresh_tokens.check(world.project.id, "jwt-app", first)
    loser = await refresh_tokens.check(world.project.id, "jwt-app", first)

    await refresh_tokens.rotate(world.project.id, winner)
    with pytest.raises(RefreshTokenInvalid) as refused:
        await refresh_tokens.rotate(world.project.id, loser)

    assert refused.value.message.startswith("the refresh token was already used")
    after = await refresh(world, winner.refresh_token)
    assert after.json()["error_description"] == "the refresh token was revoked"
    assert (await refresh(world, loser.refresh_token)).json()["error"] == "invalid_grant", "never stored"
