"""The plugin's Litestar events: a change of one user (its record, its change-log entry), an import task's completion.

See docs/reference.md#events.

They go through the host app's own emitter (`app.emit`), to listeners the host registers with
`Litestar(listeners=[...])`; an event no listener takes is dropped (Litestar would refuse it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar import Litestar

__all__ = ["CHANGE_EVENT", "EVENTS", "app_emitter"]

CHANGE_EVENT = "userio.change"
"""A user's change as its change-log entry, exactly as the feed answers it (its `id` drops a duplicate)."""

EVENTS = (
    "userio.user.created",
    "userio.user.updated",
    "userio.user.password_changed",
    "userio.user.disabled",
    "userio.user.enabled",
    "userio.user.deleted",
    CHANGE_EVENT,
    "userio.import.completed",
)
"""Every event id the plugin emits (the one list: a user's are `userio.user.<kind>` of its change-log entry, then
`userio.change` with the entry itself)."""


def app_emitter(app: Litestar) -> Callable[..., None]:
    """`app.emit` for the events some listener takes."""

    def emit(event_id: str, *args: Any) -> None:
        if app.event_emitter.listeners.get(event_id):
            app.emit(event_id, *args)

    return emit
