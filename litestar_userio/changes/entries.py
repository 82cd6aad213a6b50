"""What the change log holds: an origin, a kind of change, a position in a project's order, an entry."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, NamedTuple

__all__ = [
    "ADMIN_API",
    "CONSOLE",
    "ENTRY_TYPES",
    "ChangeEntry",
    "ChangeKind",
    "ChangeOrigin",
    "OriginKind",
    "Position",
    "UserChange",
]

OriginKind = Literal["import", "admin_api", "scim", "sign_in", "console", "cli"]
ChangeKind = Literal["created", "updated", "password_changed", "disabled", "enabled", "deleted"]
"""Stored per entry: the Litestar event's suffix (`userio.user.<kind>`, docs/reference.md#events)."""

ENTRY_TYPES: dict[str, str] = {
    "created": "user.created",
    "updated": "user.profile.updated",
    "password_changed": "user.profile.updated",
    "disabled": "user.disabled",
    "enabled": "user.reenabled",
    "deleted": "user.deleted",
}
"""The feed's `type` of each kind (docs/changes.md)."""


@dataclass(frozen=True, slots=True)
class ChangeOrigin:
    """What made a change: `kind` (docs/changes.md) and, for an import, its task."""

    kind: OriginKind = "admin_api"
    task_id: str | None = None

    def to_json(self) -> dict[str, str]:
        """The entry's `origin` member."""
        return {"kind": self.kind} if self.task_id is None else {"kind": self.kind, "task_id": self.task_id}


ADMIN_API = ChangeOrigin("admin_api")
"""The default origin of `UserAdminService`'s changes."""
CONSOLE = ChangeOrigin("console")
"""The changes made through the admin API with the console's token (`userio_core.admin_keys.ORIGIN_CLAIM`)."""


class Position(NamedTuple):
    """Where an entry sits in its project's order: (writing transaction, sequence); compared as a tuple."""

    xact: int
    seq: int


@dataclass(frozen=True, slots=True)
class UserChange:
    """One change to append: the user, what happened, and the user as exported after it (without secrets).

    For `deleted`, `document` is the user's last state: the `userio.user.deleted` event's argument (the feed shows
    `"user": null`).
    """

    user_id: str
    kind: ChangeKind
    document: bytes


@dataclass(frozen=True, slots=True)
class ChangeEntry:
    """One committed entry as read back."""

    seq: int
    xact: int
    project_id: str
    user_id: str
    kind: ChangeKind
    occurred_at: datetime
    origin: ChangeOrigin
    document: bytes | None

    @property
    def position(self) -> Position:
        """The entry's place in its project's order."""
        return Position(self.xact, self.seq)

    @property
    def id(self) -> str:
        """`change_<seq>`: unique in the deployment; a consumer drops a duplicate by it."""
        return f"change_{self.seq}"

    @property
    def type(self) -> str:
        """The feed's `type` (`user.created`, ...)."""
        return ENTRY_TYPES[self.kind]
