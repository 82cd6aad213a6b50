"""Non-blocking TypeScript hooks on the change events: run after the commit with the webhooks' event, their answer
ignored, their failures in the run log; the change itself never waits for them or fails."""

from __future__ import annotations

from typing import Any

from tests.helpers import until
from tests.webhooks.helpers import NOW, create_user, sub_of
from tests.webhooks.receiver import Receiver
from userio_core.clock import FrozenClock

HOOKS = "/_api/admin/hooks"

FORWARD = """
import type { EventUserChanged } from "./hooks.d.ts";

export default async function (e: EventUserChanged) {
  await fetch("%s", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(e) });
  return { is_allowed: false };  // ignored: the change has happened
}
"""


async def save(project: Any, hooks: list[dict[str, str]], allowlist: list[str]) -> None:
    response = await project.env.client.put(
        HOOKS, json={"hooks": hooks, "fetch_allowlist": allowlist}, headers=project.headers()
    )
    assert response.status_code == 200, response.text


async def runs(project: Any) -> list[dict[str, Any]]:
    response = await project.get(f"{HOOKS}/runs")
    assert response.status_code == 200, response.text
    return list(response.json()["result"]["runs"])


async def test_a_change_hook_runs_after_the_commit_with_the_event_and_its_failure_is_logged(backend, make_env):
    receiver = Receiver()
    await receiver.start()
    try:
        env = await make_env(backend, clock=FrozenClock(NOW))
        project = await env.make_project()
        await save(
            project,
            [
                {"event": "user.created", "source": FORWARD % receiver.url},
                {"event": "user.created", "source": "export default () => { throw new Error('crm down'); }"},
            ],
            [receiver.origin],
        )

        await create_user(project, "ada")

        async def forwarded() -> bool:
            await env.services.changes.catch_up()  # what the consumers' wake and poll do
            return len(receiver.received) == 1

        await until(forwarded, "the hook's fetch", timeout=30)
        logged = await runs(project)
    finally:
        await receiver.close()

    event = receiver.received[0].json()
    assert (event["type"], event["context"]["user_id"]) == ("user.created", sub_of(project, "ada"))
    assert event["payload"]["user"]["standard_attributes"]["email"] == "ada@example.com"
    assert sorted((r["event"], r["hook_index"], r["outcome"]) for r in logged) == [
        ("user.created", 0, "allowed"),  # it ran; what it answered counts for nothing
        ("user.created", 1, "error"),
    ]
    users = (await project.get("/_api/admin/users")).json()["result"]["items"]
    assert [u["sub"] for u in users] == [sub_of(project, "ada")], "the change stands"
