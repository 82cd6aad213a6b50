"""What the webhook tests share: the API calls, entries committed as the change log's consumer commits them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import count
from typing import Any

from litestar_userio.webhooks.service import ChangeEntry

WEBHOOKS = "/_api/admin/webhooks"
DELIVERIES = "/_api/admin/webhooks/deliveries"
NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)
_seq = count(1)


async def put_webhooks(project: Any, *webhooks: dict[str, Any]) -> list[dict[str, Any]]:
    response = await project.env.client.put(WEBHOOKS, json={"webhooks": list(webhooks)}, headers=project.headers())
    assert response.status_code == 200, response.text
    return list(response.json()["result"]["webhooks"])


async def deliveries(project: Any, **query: Any) -> list[dict[str, Any]]:
    response = await project.get(DELIVERIES, params=query)
    assert response.status_code == 200, response.text
    return list(response.json()["result"]["items"])


def entry(user_id: str, type_: str = "user.created", origin: str = "admin_api", **user: Any) -> ChangeEntry:
    seq = next(_seq)
    document = None if type_ == "user.deleted" else {"sub": user_id, "email": f"{user_id}@example.com", **user}
    return ChangeEntry(f"change_{seq:08d}", seq, type_, user_id, NOW, origin, document)


async def commit(project: Any, entries: Sequence[ChangeEntry]) -> None:
    """As the consumer does: the deliveries committed in one transaction, then the project's job woken."""
    services = project.env.services
    async with services.db.transaction() as tx:
        await services.webhooks.add_deliveries(tx, project.id, entries)
    await services.webhooks.wake(project.id)


async def run_jobs(env: Any) -> None:
    """Run what is queued to its end: a burst arq worker, or the in-process runner's queue drained."""
    await env.drain()
    await asyncio.sleep(0)
