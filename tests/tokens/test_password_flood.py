"""A flood of sign-in attempts against one project does not stop another's users signing in (issue 9, point 3).

bcrypt runs on a bounded pool: each project holds at most `threads_per_project` of its threads, and the work
of a project's checks running or waiting is bounded; an attempt beyond it is refused at once with 429.
"""

from __future__ import annotations

import asyncio

import httpx

from example_app.oauth import token
from litestar_userio.config import PasswordConfig
from tests.helpers import HASH_2B, PASSWORD, import_one

COST_12 = "$2b$12$rWeVigt2iVHkwP2YMxIP7.ElaGE77tq0REL11aGNHsu03DdZRJJbi"
"""bcrypt of PASSWORD at cost 12: about 0.3-0.6 s of a core per check here."""
POOL = PasswordConfig(threads=2, threads_per_project=1, max_pending_per_project=12)
"""Three cost-12 checks of one project may run or wait (each counts 4 checks of cost 10)."""


async def sign_in(env, project, password: str) -> httpx.Response:
    return await env.client.post(
        "/oauth2/token",
        data={"grant_type": "password", "username": "u@example.com", "password": password, "client_id": "app"},
        headers={"Host": project.host},
    )


async def make_world(backend, make_env):
    env = await make_env(backend, route_handlers=[token], passwords=POOL)
    quiet, flooded = await env.make_project(), await env.make_project()
    for project, password_hash in ((quiet, HASH_2B), (flooded, COST_12)):
        await import_one(
            project, {"email": "u@example.com", "password": {"type": "bcrypt", "password_hash": password_hash}}
        )
        await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=True)
    return env, quiet, flooded


async def test_a_flood_of_wrong_passwords_on_one_project_does_not_stop_another_signing_in(backend, make_env):
    env, quiet, flooded = await make_world(backend, make_env)
    flood = [asyncio.create_task(sign_in(env, flooded, f"wrong {i}")) for i in range(12)]
    refused: list[httpx.Response] = []
    pending = set(flood)
    while not refused and pending:  # the flooded project's share is full once one attempt is refused
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        refused += [t.result() for t in done if t.result().status_code == 429]
    assert refused, "the flooded project's attempts were never bounded"

    answer = await sign_in(env, quiet, PASSWORD)

    assert answer.status_code == 200, answer.text
    assert answer.json()["access_token"]
    assert not all(t.done() for t in flood), "the quiet project's sign-in waited for the whole flood"
    outcomes = await asyncio.gather(*flood)
    assert {r.status_code for r in outcomes} == {400, 429}
    for response in outcomes:
        if response.status_code == 400:
            assert response.json()["error"] == "invalid_grant"
        else:
            assert response.json()["error"] == "temporarily_unavailable"
            assert response.headers["retry-after"] == "1"


async def test_the_flooded_project_signs_in_again_once_the_flood_is_over(backend, make_env):
    env, _, flooded = await make_world(backend, make_env)
    flood = await asyncio.gather(*(sign_in(env, flooded, f"wrong {i}") for i in range(6)))
    assert {r.status_code for r in flood} <= {400, 429}

    answer = await sign_in(env, flooded, PASSWORD)

    assert answer.status_code == 200, answer.text


async def test_a_burst_of_cheap_checks_is_not_refused(backend, make_env):
    """The queue bound counts work: fifty cost-4 checks weigh less than one cost-10 check."""
    env, quiet, _ = await make_world(backend, make_env)

    answers = await asyncio.gather(*(sign_in(env, quiet, PASSWORD) for _ in range(50)))

    assert [a.status_code for a in answers] == [200] * 50
