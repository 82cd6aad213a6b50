"""The change log's `webhooks` consumer: committed entries become deliveries, and run the non-blocking hooks.

`handle` runs in the transaction that advances the consumer's position (`changes/change_service.py`): the deliveries it
writes commit with that position, so an entry is turned into deliveries exactly once, and one committed before a
crash is delivered after the restart. Once that transaction committed, `committed` wakes the project's delivery job.

The non-blocking TypeScript hooks (`user.created`, ... saved through `PUT /hooks`) run there too, before the position
moves: at least once (a crash before the commit runs them again), their answers ignored, their failures in the run
log, all of a page's runs within one hook time limit (the transaction waits for them). An import's entries run
none, as they emit no Litestar event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from litestar_userio.changes.entries import ChangeEntry
from litestar_userio.db.engine import Tx
from litestar_userio.hooks.hook_service import HookService
from litestar_userio.hooks.user_events import CHANGE_EVENTS
from litestar_userio.webhooks.webhook_service import WebhookService, event_body

__all__ = ["WebhookConsumer"]


class WebhookConsumer:
    """Follows every project's change log for its webhooks and non-blocking hooks."""

    name = "webhooks"

    def __init__(self, webhooks: WebhookService, hooks: HookService) -> None:
        self.webhooks = webhooks
        self.hooks = hooks

    async def wants_imports(self, tx: Tx, project_id: str) -> bool:
        """Only where a webhook of the project asks for an import's entries (`include_import`).

        The hooks pass them over; elsewhere an import's entries are passed over unread, documents and all.
        """
        return await self.webhooks.includes_imports(tx, project_id)

    async def handle(self, tx: Tx, project_id: str, entries: Sequence[ChangeEntry]) -> None:
        """Write the entries' deliveries in `tx`, then run the non-blocking hooks they call for."""
        await self.webhooks.add_deliveries(tx, project_id, entries)
        saved = {h.event for h in await self.hooks.list(project_id)} & set(CHANGE_EVENTS)
        runs = [e for e in entries if e.type in saved and e.origin.kind != "import"]
        if not runs:
            return
        events = [event_body(entry, decoded=True) for entry in runs]
        limit = self.hooks.config.hook_timeout.total_seconds()
        tasks = [asyncio.ensure_future(self.hooks.run_change_hooks(project_id, event)) for event in events]
        _, late = await asyncio.wait(tasks, timeout=limit + 1)
        for task in late:  # the runtime ends each run at its limit; this only bounds the page
            task.cancel()

    async def committed(self, project_id: str) -> None:
        """After the transaction of `handle` committed: the project's deliveries are due."""
        await self.webhooks.wake(project_id)
