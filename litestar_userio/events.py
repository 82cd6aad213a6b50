"""The plugin's Litestar events: a change of one user, and the completion of an import task.

See docs/reference.md#events.

They go through the host app's own emitter (`app.emit`), to listeners the host registers with
`Litestar(listeners=[...])`; an event no listener takes is dropped (Litestar would refuse it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar import Litestar

__all__ = ["EVENTS", "app_emitter"]

EVENTS = (
    "userio.user.created",
    "userio.user.updated",
    "userio.user.password_changed",
    "userio.user.disabled",
    "userio.user.enabled",
    "userio.user.deleted",
    "userio.import.completed",
)
"""Every event id the plugin emits (the one list: a user's are `userio.user.<kind>` of its change-log entry)."""


def app_emitter(app: Litestar) -> Callable[..., None]:
    """`app.emit` for the events some listener takes."""

    def emit(event_id: str, *args: Any) -> None:
        if app.event_emitter.listeners.get(event_id):
            app.emit(event_id, *args)

    return emit
