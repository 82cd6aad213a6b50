"""Issue 30.1: the `userio_*` metrics count what happened, with bounded labels only (DECISIONS 15)."""

from __future__ import annotations

from datetime import datetime, timedelta

import argon2
import httpx
import pytest

from litestar_userio import MetricsConfig
from litestar_userio.config import WebhookConfig
from litestar_userio.jobs import observe_queue
from litestar_userio.observability import telemetry
from tests.helpers import HASH_2B, IMPORT, PASSWORD, run_import
from tests.operations.conftest import METRICS, delta, scrape
from tests.tokens.test_refresh_grant import refresh
from tests.webhooks.helpers import create_user, put_webhooks, settle
from tests.webhooks.receiver import Receiver

ALLOW = "export default (e: any) => ({ is_allowed: true });"
DENY = "export default (e: any) => ({ is_allowed: false, reason: 'no' });"


@pytest.mark.engine
async def test_import_records_are_counted_by_outcome_and_failure_reason(observed):
    world = await observed()
    before = await scrape(world.env)

    result = await run_import(
        world.project,
        [
            {"email": "grace@example.com"},
            {"email": "alan@example.com"},
            {"email": "not an email"},
        ],
    )
    after = await scrape(world.env)

    failed = [d for d in result["details"] if d["outcome"] == "failed"]
    reason = failed[0]["errors"][0]["reason"]
    assert delta(before, after, "userio_import_records_total", outcome="inserted", reason="") == 2
    assert delta(before, after, "userio_import_records_total", outcome="failed", reason=reason) == 1
    assert delta(before, after, "userio_import_chunk_seconds_count") == 1
    assert delta(before, after, "userio_import_task_seconds_count") == 1
    assert delta(before, after, "userio_import_request_bytes_total") > 100


async def test_sign_in_counts_password_checks_hook_runs_and_tokens(observed):
    world = await observed()
    await run_import(
        world.project, [{"email": "ada@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}}]
    )
    await world.put_hooks(("oidc.jwt.pre_create", ALLOW), ("oidc.id_token.pre_create", DENY))
    before = await scrape(world.env)

    wrong = await world.sign_in(password="wrong horse")
    unknown = await world.sign_in(username="nobody@example.com")
    refused = await world.sign_in()
    after = await scrape(world.env)

    assert (wrong.status_code, unknown.status_code, refused.status_code) == (400, 400, 403), refused.text
    assert delta(before, after, "userio_password_checks_total", format="bcrypt", outcome="mismatch") == 1
    assert delta(before, after, "userio_password_checks_total", format="none", outcome="mismatch") == 1
    assert delta(before, after, "userio_password_checks_total", format="bcrypt", outcome="match") == 1
    assert delta(before, after, "userio_hook_runs_total", event="oidc.jwt.pre_create", outcome="allowed") == 1
    assert delta(before, after, "userio_hook_runs_total", event="oidc.id_token.pre_create", outcome="refused") == 1
    assert delta(before, after, "userio_hook_seconds_count", event="oidc.jwt.pre_create") == 1
    assert delta(before, after, "userio_tokens_issued_total", kind="access") == 1


async def test_no_label_names_a_user_a_login_id_or_a_secret(observed):
    world = await observed()
    await run_import(
        world.project, [{"email": "ada@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}}]
    )
    await world.put_hooks(("oidc.jwt.pre_create", ALLOW))
    await world.sign_in()
    await world.sign_in(password="wrong horse")

    samples = await scrape(world.env)

    values = {value for _, labels in samples for _, value in labels}
    assert values, "the scrape has labelled samples"
    for forbidden in ("ada@example.com", "ada", PASSWORD, "wrong horse", world.project.host, HASH_2B):
        assert not any(forbidden in value for value in values), forbidden


async def test_metrics_are_off_unless_configured(env):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=env.app), base_url="http://10.0.0.7") as client:
        response = await client.get(METRICS)

    assert response.status_code == 404


async def test_a_hooks_fetch_calls_are_counted_by_outcome(observed):
    world = await observed()
    await run_import(
        world.project, [{"email": "ada@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}}]
    )
    fetching = "export default async (e: any) => { try { await fetch('https://not-allowed.example/'); } catch (_) {} return { is_allowed: true }; };"
    await world.put_hooks(("oidc.jwt.pre_create", fetching))
    before = await scrape(world.env)

    signed_in = await world.sign_in()
    after = await scrape(world.env)

    assert signed_in.status_code == 200, signed_in.text
    assert delta(before, after, "userio_hook_fetch_calls_total", outcome="refused") == 1
    assert delta(before, after, "userio_hook_fetch_calls_total", outcome="ok") == 0


@pytest.mark.engine
async def test_the_queue_gauges_show_chunks_waiting_for_a_worker(observed):
    world = await observed(imports={"chunk_size": 2})
    world.env.hold_jobs()
    key = ("userio_queue_jobs", (("kind", "import_chunk"), ("state", "pending")))

    response = await world.project.post(
        IMPORT, {"identifier": "email", "records": [{"email": f"u{i}@example.com"} for i in range(5)]}
    )
    await observe_queue({"userio": world.env.services})
    waiting = await scrape(world.env)
    await world.env.drain()
    await observe_queue({"userio": world.env.services})
    drained = await scrape(world.env)

    assert response.status_code == 202
    assert waiting[key] - drained[key] == 3
    assert waiting[("userio_queue_oldest_pending_seconds", (("kind", "import_chunk"),))] >= 0


async def test_refresh_tokens_are_counted_when_handed_out(observed):
    world = await observed()
    await run_import(
        world.project, [{"email": "ada@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}}]
    )
    before = await scrape(world.env)

    signed_in = await world.sign_in(scope="openid offline_access")
    refreshed = await refresh(world, signed_in.json()["refresh_token"])
    reused = await refresh(world, signed_in.json()["refresh_token"])
    after = await scrape(world.env)

    assert (refreshed.status_code, reused.status_code) == (200, 400), refreshed.text
    assert delta(before, after, "userio_tokens_issued_total", kind="refresh") == 2, "the reused token got none"
    assert delta(before, after, "userio_tokens_issued_total", kind="access") == 2


async def test_password_checks_are_labelled_by_the_stored_hash_type(observed):
    """Issue 28: every import format has its own bounded label; the re-hash makes the next check bcrypt."""
    world = await observed()
    legacy = argon2.PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1).hash(PASSWORD)
    await run_import(
        world.project, [{"email": "ada@example.com", "password": {"type": "argon2", "password_hash": legacy}}]
    )
    users = world.env.services.users
    before = await scrape(world.env)

    assert await users.verify_password(world.project.id, "ada@example.com", "wrong horse") is None
    assert await users.verify_password(world.project.id, "ada@example.com", PASSWORD) is not None
    assert await users.verify_password(world.project.id, "ada@example.com", PASSWORD) is not None
    after = await scrape(world.env)

    assert delta(before, after, "userio_password_checks_total", format="argon2", outcome="mismatch") == 1
    assert delta(before, after, "userio_password_checks_total", format="argon2", outcome="match") == 1
    assert delta(before, after, "userio_password_checks_total", format="bcrypt", outcome="match") == 1


@pytest.mark.engine
async def test_a_task_waiting_longer_than_a_lease_shows_stalled_since_and_in_the_gauge(observed):
    world = await observed()
    world.env.hold_jobs()
    key = ("userio_tasks_stalled", (("kind", "import"), ("project", world.project.id)))
    response = await world.project.post(
        IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}, {"email": "b@example.com"}]}
    )
    location = response.headers["location"]
    fresh = (await world.project.get(location)).json()
    await observe_queue({"userio": world.env.services})
    waiting = await scrape(world.env)

    world.env.clock.advance(world.env.config.queue.lease_ttl + timedelta(seconds=1))
    stalled = (await world.project.get(location)).json()
    await observe_queue({"userio": world.env.services})
    during = await scrape(world.env)
    await world.env.drain()
    done = (await world.project.get(location)).json()
    await observe_queue({"userio": world.env.services})
    after = await scrape(world.env)

    assert fresh["status"] == "pending" and "stalled_since" not in fresh
    assert waiting.get(key, 0.0) == 0
    assert stalled["status"] == "pending"
    assert datetime.fromisoformat(stalled["stalled_since"]) <= datetime.fromisoformat(stalled["created_at"])
    assert during[key] == 1
    assert done["status"] == "completed" and "stalled_since" not in done
    assert after[key] == 0


async def test_webhook_attempts_are_counted_by_outcome_and_timed(backend, make_env):
    good, failing = Receiver(mode=204), Receiver(mode=503)
    await good.start()
    await failing.start()
    try:
        env = await make_env(
            backend,
            metrics=MetricsConfig(),
            webhooks=WebhookConfig(allowed_private_origins=(good.origin, failing.origin)),
        )
        project = await env.make_project()
        await put_webhooks(
            project, {"url": good.url, "events": ["user.created"]}, {"url": failing.url, "events": ["user.created"]}
        )
        before = await scrape(env)
        await create_user(project, "metered")
        await settle(env, (project, 2))
        after = await scrape(env)
    finally:
        await good.close()
        await failing.close()
        telemetry.reset()

    assert delta(before, after, "userio_webhook_deliveries_total", outcome="succeeded") == 1
    assert delta(before, after, "userio_webhook_deliveries_total", outcome="retrying") == 1
    assert delta(before, after, "userio_webhook_delivery_seconds_count") == 2
    labels = {value for (name, pairs), _ in after.items() if name.startswith("userio_webhook") for _, value in pairs}
    assert not any(project.id in value or "127.0.0.1" in value or "metered" in value for value in labels)
