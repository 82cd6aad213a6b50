"""What the webhook tests share: the API calls, and user changes made through the admin API (the change log's
`webhooks` consumer turns them into deliveries)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

WEBHOOKS = "/_api/admin/webhooks"
DELIVERIES = "/_api/admin/webhooks/deliveries"
USERS = "/_api/admin/users"
NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)


async def put_webhooks(project: Any, *webhooks: dict[str, Any]) -> list[dict[str, Any]]:
    response = await project.env.client.put(WEBHOOKS, json={"webhooks": list(webhooks)}, headers=project.headers())
    assert response.status_code == 200, response.text
    return list(response.json()["result"]["webhooks"])


async def deliveries(project: Any, **query: Any) -> list[dict[str, Any]]:
    response = await project.get(DELIVERIES, params=query)
    assert response.status_code == 200, response.text
    return list(response.json()["result"]["items"])


def sub_of(project: Any, name: str) -> str:
    """The id of the user `name` of `project` (ids are unique in the deployment, so each project's are its own)."""
    return f"{name}.{project.id}"


async def create_user(project: Any, name: str, **record: Any) -> str:
    sub = sub_of(project, name)
    response = await project.post(USERS, {"sub": sub, "email": f"{name}@example.com", **record})
    assert response.status_code == 201, response.text
    return sub


async def update_user(project: Any, sub: str, **record: Any) -> None:
    response = await project.env.client.patch(f"{USERS}/{sub}", json=record, headers=project.headers())
    assert response.status_code == 200, response.text


async def delete_user(project: Any, sub: str) -> None:
    response = await project.env.client.delete(f"{USERS}/{sub}", headers=project.headers())
    assert response.status_code == 204, response.text


async def made(project: Any) -> int:
    """How many deliveries the project has (any status)."""
    rows = await project.fetch("SELECT count(*) AS n FROM userio_webhook_delivery WHERE project_id = $1", project.id)
    return int(rows[0]["n"])


async def settle_made(env: Any, *expected: tuple[Any, int], timeout: float = 20) -> None:
    """The consumers caught up until the `expected` deliveries are made (see `settle`), none attempted yet."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        await env.services.changes.catch_up()
        counts = [await made(project) for project, _ in expected]
        if all(count >= n for count, (_, n) in zip(counts, expected, strict=True)):
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"deliveries made: {counts}, expected {[n for _, n in expected]}")
        await asyncio.sleep(0.05)


async def settle(env: Any, *expected: tuple[Any, int], timeout: float = 20) -> None:
    """Every delivery `expected` (a project and how many it has in all) made and attempted once it is due.

    The change log hands a consumer an entry once it is settled (on PostgreSQL: no older transaction of the server
    still open, in any database), so the consumers catch up until the deliveries are there; then the due
    deliveries' jobs are queued (as the sweep does) and every queued job runs to its end.
    """
    await settle_made(env, *expected, timeout=timeout)
    await env.services.webhooks.wake_due()
    await env.drain()
