"""Webhooks per project (docs/webhooks.md): the configuration API, signed deliveries, retries, order, address rules.

A real HTTP receiver on loopback (`receiver.py`), listed as the operator's private origin; deliveries come from
entries committed as the change log's `webhooks` consumer commits them.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
from datetime import timedelta
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from litestar_userio.config import WebhookConfig
from litestar_userio.hooks.secrets import SecretBox
from tests.helpers import HASH_2B, run_import, until
from tests.webhooks.helpers import (
    DELIVERIES,
    NOW,
    WEBHOOKS,
    create_user,
    delete_user,
    deliveries,
    put_webhooks,
    settle,
    settle_made,
    sub_of,
    update_user,
)
from tests.webhooks.receiver import Receiver
from userio_core.clock import FrozenClock

ALL = ["user.created", "user.profile.updated", "user.disabled", "user.reenabled", "user.deleted"]


@pytest.fixture
async def receivers():
    started: list[Receiver] = []

    async def make(mode: str | int = 200) -> Receiver:
        server = Receiver(mode=mode)
        await server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        await server.close()


class World:
    """An env whose private origins list one receiver per answer it gives."""

    def __init__(self, env: Any, servers: dict[str, Receiver]) -> None:
        self.env = env
        self.servers = servers

    def __iter__(self) -> Any:
        return iter((self.env, self.servers["good"], self.servers["other"]))

    def __getitem__(self, name: str) -> Receiver:
        return self.servers[name]


MODES: dict[str, str | int] = {
    "good": 200,
    "other": 200,
    "failing": 500,
    "dead": "hang",
    "slow": "slow",
    "huge": "huge",
    "redirect": "redirect",
}


@pytest.fixture
async def world(backend, make_env, receivers):
    """Receivers on loopback, all listed as private origins; retries after 10 s and 60 s; attempts of 2 s."""
    servers = {name: await receivers(mode) for name, mode in MODES.items()}
    servers["redirect"].location = servers["good"].url
    env = await make_env(
        backend,
        clock=FrozenClock(NOW),
        webhooks=WebhookConfig(
            allowed_private_origins=tuple(s.origin for s in servers.values()),
            retry_delays=(timedelta(seconds=10), timedelta(seconds=60)),
            timeout=timedelta(seconds=2),
        ),
    )
    return World(env, servers)


# A. Configuration.


async def test_a_new_webhook_gets_a_secret_shown_only_in_the_answer_that_made_it(world):
    env, good, _ = world
    project = await env.make_project()

    saved = await put_webhooks(project, {"url": good.url, "events": ["user.created"]})
    listed = await project.get(WEBHOOKS)
    again = await put_webhooks(project, {"url": good.url, "events": ["user.created", "user.deleted"]})

    assert len(base64.b64decode(saved[0]["secret"], validate=True)) == 32
    assert listed.json() == {
        "result": {
            "webhooks": [{"id": saved[0]["id"], "url": good.url, "events": ["user.created"], "include_import": False}]
        }
    }
    assert again == [
        {"id": saved[0]["id"], "url": good.url, "events": ["user.created", "user.deleted"], "include_import": False}
    ]


async def test_rotating_a_secret_answers_the_new_one_and_signs_with_it(world):
    env, good, _ = world
    project = await env.make_project()
    [old] = await put_webhooks(project, {"url": good.url, "events": ["user.created"]})

    rotated = await project.post(f"{WEBHOOKS}/{old['id']}/secret", None)
    unknown = await project.post(f"{WEBHOOKS}/nope/secret", None)
    await create_user(project, "u1")
    await settle(env, (project, 1))
    await until(lambda: len(good.received) == 1, "the delivery")

    new = rotated.json()["result"]["webhooks"][0]["secret"]
    assert rotated.status_code == 200 and new != old["secret"]
    assert unknown.status_code == 404 and unknown.json()["error"]["reason"] == "WebhookNotFound"
    Webhook(new).verify(good.received[0].body, good.received[0].headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old["secret"]).verify(good.received[0].body, good.received[0].headers)


async def test_a_webhook_left_out_of_the_list_goes(world):
    env, good, other = world
    project = await env.make_project()
    await put_webhooks(project, {"url": good.url, "events": ALL}, {"url": other.url, "events": ALL})

    remaining = await put_webhooks(project, {"url": other.url, "events": ALL})

    assert [w["url"] for w in (await project.get(WEBHOOKS)).json()["result"]["webhooks"]] == [other.url]
    assert "secret" not in remaining[0]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://hooks.example.com/x", "https only"),
        ("https://127.0.0.1/x", "private address"),
        ("https://10.1.2.3/x", "private address"),
        ("https://[::1]/x", "private address"),
        ("https://169.254.169.254/latest", "private address"),
        ("https://localhost/x", "loopback"),
        ("ftp://hooks.example.com/", "only http and https"),
        ("https://user:pw@hooks.example.com/", "credentials"),
    ],
)
async def test_a_url_the_address_rules_refuse_is_not_saved(world, url, why):
    env, _, _ = world
    project = await env.make_project()

    response = await project.env.client.put(
        WEBHOOKS, json={"webhooks": [{"url": url, "events": ["user.created"]}]}, headers=project.headers()
    )

    assert response.status_code == 400, response.text
    assert response.json()["error"]["reason"] == "InvalidWebhook"
    assert why in response.json()["error"]["message"]
    assert (await project.get(WEBHOOKS)).json()["result"]["webhooks"] == []


async def test_an_unknown_event_type_is_refused(world):
    env, good, _ = world
    project = await env.make_project()

    response = await project.env.client.put(
        WEBHOOKS, json={"webhooks": [{"url": good.url, "events": ["user.signed_in"]}]}, headers=project.headers()
    )

    assert response.status_code == 400, response.text


# B. Deliveries.


async def test_a_delivery_carries_the_reference_event_signed_both_ways(world):
    env, good, _ = world
    project = await env.make_project(roles=("admin",))
    [hook] = await put_webhooks(project, {"url": good.url, "events": ALL})

    await create_user(
        project, "u1", roles=["admin"], given_name="Ada", password={"type": "bcrypt", "password_hash": HASH_2B}
    )
    await delete_user(project, sub_of(project, "u1"))
    await settle(env, (project, 2))
    await until(lambda: len(good.received) == 2, "both deliveries")

    created, deleted = good.received
    assert created.headers["content-type"] == "application/json"
    expected = hmac.new(hook["secret"].encode(), created.body, hashlib.sha256).hexdigest()
    assert created.headers["x-authgear-body-signature"] == expected
    assert Webhook(hook["secret"]).verify(created.body, created.headers) == created.json()
    event = created.json()
    assert set(event) == {"id", "seq", "type", "payload", "context"}
    assert event["type"] == "user.created" and created.headers["webhook-id"] == event["id"]
    assert event["payload"]["user"]["id"] == sub_of(project, "u1")
    assert event["payload"]["user"]["standard_attributes"] == {
        "email": "u1@example.com",
        "email_verified": False,
        "given_name": "Ada",
    }
    assert event["payload"]["user"]["roles"] == ["admin"]
    assert HASH_2B.encode() not in created.body and b"password" not in created.body
    assert event["context"] == {
        "timestamp": int(NOW.timestamp()),
        "user_id": sub_of(project, "u1"),
        "triggered_by": "admin_api",
    }
    assert deleted.json()["payload"] == {"user": {"id": sub_of(project, "u1")}}
    assert [d["status"] for d in await deliveries(project)] == ["succeeded", "succeeded"]


async def test_a_webhook_gets_only_the_events_it_asked_for_and_imports_only_when_it_asks(world):
    env, good, other = world
    project = await env.make_project()
    await put_webhooks(
        project,
        {"url": good.url, "events": ["user.deleted"]},
        {"url": other.url, "events": ["user.created"], "include_import": True},
    )

    await run_import(project, [{"email": "a@example.com", "sub": sub_of(project, "a")}])
    await create_user(project, "b")
    await settle(env, (project, 2))
    await until(
        lambda: len(other.received) == 2, f"the import entry to the webhook that asked for it: {other.bodies()}"
    )

    assert good.received == []
    assert [b["context"]["user_id"] for b in other.bodies()] == [sub_of(project, "a"), sub_of(project, "b")]
    assert other.bodies()[0]["context"]["triggered_by"] == "system"
    assert other.bodies()[0]["payload"]["user"]["standard_attributes"]["email"] == "a@example.com"


async def test_a_failed_delivery_is_retried_on_the_schedule_then_failed_then_sent_again(world):
    env, failing = world.env, world["failing"]
    project = await env.make_project()
    await put_webhooks(project, {"url": failing.url, "events": ALL})
    await create_user(project, "u1")
    await settle(env, (project, 1))
    [first] = await deliveries(project)

    env.clock.advance(timedelta(seconds=9))
    await env.services.webhooks.wake_due()
    await settle(env)
    not_yet = len(failing.received)
    env.clock.advance(timedelta(seconds=1))
    await env.services.webhooks.wake_due()
    await settle(env)
    [second] = await deliveries(project)
    env.clock.advance(timedelta(seconds=60))
    await env.services.webhooks.wake_due()
    await settle(env)
    [last] = await deliveries(project, status="failed")

    failing.mode = 200
    retried = await project.post(f"{DELIVERIES}/{last['id']}/retry", None)
    await settle(env)
    await until(lambda: len(failing.received) == 4, "the delivery sent again")
    [done] = await deliveries(project)

    assert (first["status"], first["attempts"], first["last_status_code"]) == ("pending", 1, 500)
    assert first["next_attempt_at"] == (NOW + timedelta(seconds=10)).isoformat().replace("+00:00", "Z")
    assert not_yet == 1
    assert (second["status"], second["attempts"]) == ("pending", 2)
    assert (last["status"], last["attempts"], last["next_attempt_at"]) == ("failed", 3, None)
    assert "answered 500" in last["last_error"]
    assert retried.status_code == 200 and retried.json()["result"]["status"] == "pending"
    assert (done["status"], done["attempts"]) == ("succeeded", 4)
    assert len({r.headers["webhook-id"] for r in failing.received}) == 1, "every attempt is the same message"


async def test_an_unknown_delivery_cannot_be_retried(world):
    env, _, _ = world
    project = await env.make_project()

    response = await project.post(f"{DELIVERIES}/nope/retry", None)

    assert response.status_code == 404
    assert response.json()["error"]["reason"] == "WebhookDeliveryNotFound"


@pytest.mark.engine
async def test_one_users_entries_reach_a_webhook_in_log_order(world):
    env, good, _ = world
    project = await env.make_project()
    await put_webhooks(project, {"url": good.url, "events": ALL})
    for user in ("u0", "u1", "u2"):
        await create_user(project, user)
    await settle(env, (project, 3))

    for i in range(27):
        await update_user(project, sub_of(project, f"u{i % 3}"), given_name=f"v{i}")
        if i % 7 == 6:
            await settle(env, (project, 4 + i))
    await settle(env, (project, 30))
    await until(lambda: len(good.received) == 30, "every delivery")

    for user in ("u0", "u1", "u2"):
        seqs = [b["seq"] for b in good.bodies() if b["context"]["user_id"] == sub_of(project, user)]
        names = [
            b["payload"]["user"]["standard_attributes"].get("given_name")
            for b in good.bodies()
            if b["context"]["user_id"] == sub_of(project, user)
        ]
        assert seqs == sorted(seqs) and len(seqs) == 10
        assert names == [None] + [f"v{i}" for i in range(27) if f"u{i % 3}" == user]


@pytest.mark.engine
@pytest.mark.slow
async def test_a_receiver_that_never_answers_delays_no_other_project(backend, make_env, receivers):
    """The dead receiver's attempts wait (up to 30 s) for an answer that does not come; the other project's 20
    deliveries arrive meanwhile (their wait does not depend on the dead one's timeout ending: on a loaded machine
    the 20 creates and a worker's start took over 10 s). Then the dead receiver answers 503, so the test does not
    sit out the timeout (which `test_slow_huge_and_redirecting_answers_never_hold_an_attempt_past_the_timeout`
    checks)."""
    good, dead = await receivers(), await receivers("hang")
    env = await make_env(
        backend,
        clock=FrozenClock(NOW),
        webhooks=WebhookConfig(allowed_private_origins=(good.origin, dead.origin), timeout=timedelta(seconds=30)),
    )
    slow_project, other_project = await env.make_project(), await env.make_project()
    await put_webhooks(slow_project, {"url": dead.url, "events": ALL})
    await put_webhooks(other_project, {"url": good.url, "events": ALL})
    # The five dead attempts in one round (8 run at once), as arq's drain runs them: the in-process runner ran the
    # lane from the first create and met them in two rounds of 30 s, past its join's 60 s limit (61 s, failed).
    env.hold_jobs()
    for i in range(5):
        await create_user(slow_project, f"dead{i}")
    await settle_made(env, (slow_project, 5))
    jobs = asyncio.create_task(env.drain())
    await until(lambda: len(dead.received) >= 1, "the dead receiver's first request")

    for i in range(20):
        await create_user(other_project, f"live{i}")
    await settle_made(env, (other_project, 20))
    await env.services.webhooks.wake_due()  # the worker running the dead lane takes the new jobs too
    await until(lambda: len(good.received) == 20, "the other project's deliveries", timeout=25)
    in_flight = [(d["attempts"], d["last_error"]) for d in await deliveries(slow_project)]
    dead.release()
    await jobs
    dead_after = await deliveries(slow_project)

    assert {error for _, error in in_flight} == {None}, "no attempt of the dead receiver's had ended"
    assert (1, None) in in_flight, "one was waiting for the dead receiver"
    assert ("pending", 503) in {(d["status"], d["last_status_code"]) for d in dead_after}, dead_after


async def test_slow_huge_and_redirecting_answers_never_hold_an_attempt_past_the_timeout(world):
    env, good = world.env, world["good"]
    projects = {}
    for mode in ("slow", "huge", "redirect"):
        projects[mode] = await env.make_project()
        await put_webhooks(projects[mode], {"url": world[mode].url, "events": ALL})
        await create_user(projects[mode], f"{mode}-user")

    await settle(env, *((p, 1) for p in projects.values()))
    outcomes: dict[str, Any] = {mode: (await deliveries(p))[0] for mode, p in projects.items()}

    assert (outcomes["huge"]["status"], outcomes["huge"]["last_status_code"]) == ("succeeded", 200)
    assert (outcomes["slow"]["status"], outcomes["slow"]["last_error"]) == ("pending", "no answer within 2 s")
    assert outcomes["redirect"]["last_status_code"] == 302
    assert "redirects are not followed" in outcomes["redirect"]["last_error"]
    assert good.received == [], "the redirect's target got nothing"


# C. Address rules at connect time.


async def test_a_listed_name_that_resolves_to_loopback_is_refused_when_dialled(backend, make_env, receivers):
    """The origin is on the operator's list by name, so it saves; the address it resolves to is loopback, which
    only a listed address literal reaches: refused at connect time, and the receiver gets nothing."""
    target = await receivers()
    by_name = f"http://localhost:{target.port}"
    env = await make_env(backend, clock=FrozenClock(NOW), webhooks=WebhookConfig(allowed_private_origins=(by_name,)))
    project = await env.make_project()
    await put_webhooks(project, {"url": f"{by_name}/hook", "events": ALL})

    await create_user(project, "u1")
    await settle(env, (project, 1))
    [delivery] = await deliveries(project)

    assert delivery["status"] == "pending" and delivery["last_status_code"] is None
    assert delivery["last_error"].startswith("refused: localhost resolves to a private address")
    assert target.received == []


async def test_with_the_secrets_key_a_secret_is_stored_sealed_and_still_signs(backend, make_env, receivers):
    target = await receivers()
    env = await make_env(
        backend,
        clock=FrozenClock(NOW),
        hooks={"secrets_key": SecretBox.generate_key()},
        webhooks=WebhookConfig(allowed_private_origins=(target.origin,)),
    )
    project = await env.make_project()
    [hook] = await put_webhooks(project, {"url": target.url, "events": ALL})

    await create_user(project, "sealed")
    await settle(env, (project, 1))
    await until(lambda: len(target.received) == 1, "the delivery")
    [row] = await project.fetch("SELECT secret FROM userio_webhook WHERE project_id = $1", project.id)

    assert row["secret"].startswith("sealed:") and hook["secret"] not in row["secret"]
    Webhook(hook["secret"]).verify(target.received[0].body, target.received[0].headers)
