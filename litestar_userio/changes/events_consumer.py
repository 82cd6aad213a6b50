"""The Litestar events of docs/reference.md#events, emitted from the change log: the log's first consumer.

A change emits `userio.user.<kind>` (`created`, `updated`, `password_changed`, `disabled`, `enabled`, `deleted`)
with the user as exported (never a secret; for `deleted`, its last state), then `userio.change` with the entry as
the feed answers it (`feed_entry`: `id`, `cursor`, `type`, `user_id`, `occurred_at`, `origin`, `user`), once its
transaction committed, and never for one that rolled back. At least once: an emit is followed by the consumer's
commit, so a process that stops in between emits those again after it restarts, with the same arguments (a listener
that must not act twice drops a repeat by the `userio.change` entry's `id`, or the record's `sub` and `updated_at`).
An import's records emit none (docs/reference.md#events: one `userio.import.completed` per task), as before the log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from litestar_userio.changes.change_service import feed_entry
from litestar_userio.changes.entries import ChangeEntry
from litestar_userio.db.engine import Tx
from litestar_userio.events import CHANGE_EVENT

__all__ = ["EventsConsumer"]

_encode = msgspec.json.Encoder().encode


class EventsConsumer:
    """Emits each committed entry's events through `emit` (the app's, in a web process)."""

    name = "events"

    def __init__(self, emit: Callable[..., None]) -> None:
        self.emit = emit

    async def wants_imports(self, tx: Tx, project_id: str) -> bool:
        """An import's records emit no event: their entries are passed over unread."""
        return False

    async def handle(self, tx: Tx, project_id: str, entries: Sequence[ChangeEntry]) -> None:
        """Emit the events of `entries`, in order (an import's records emit none)."""
        for entry in entries:
            if entry.origin.kind == "import" or entry.document is None:
                continue
            document: dict[str, Any] = msgspec.json.decode(entry.document)
            self.emit(f"userio.user.{entry.kind}", document)
            item: dict[str, Any] = msgspec.json.decode(_encode(feed_entry(project_id, entry)))
            self.emit(CHANGE_EVENT, item)
