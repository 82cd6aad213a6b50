"""The lazy-migration event `user.password_migration`: its JSON and how its response is read.

See docs/reference.md#hooks-lazy-migration.

`HookService.run_migration` runs it; `accounts.lazy_migration.PasswordMigrator` calls that from sign-in.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, Final

from litestar_userio.errors import HookResponseMalformed
from litestar_userio.hooks.token_events import allowing_response, shown, user_object
from litestar_userio.users.model import UserState

__all__ = ["MIGRATION_EVENT", "MigrationLocks", "build_migration_event", "login_id_type", "migration_response"]

MIGRATION_EVENT: Final = "user.password_migration"
LOGIN_ID_TYPES: Final = ("email", "phone_number", "preferred_username")


def login_id_type(login_id: str) -> str:
    """Which login id `login_id` looks like: an email has `@`, a phone number starts with `+`."""
    if "@" in login_id:
        return "email"
    if login_id.startswith("+"):
        return "phone_number"
    return "preferred_username"


def build_migration_event(
    login_id: str, login_id_type: str, password: str, user: UserState | None, project_id: str, now: datetime
) -> dict[str, Any]:
    """The event a migration hook receives as `e`; `user` is the waiting user (as every hook sees a user), or None.

    The password is in it (the hook must pass it to the old system): whoever logs the run masks it first.
    """
    if login_id_type not in LOGIN_ID_TYPES:
        raise ValueError(f"login_id_type must be one of {', '.join(LOGIN_ID_TYPES)}")
    return {
        "id": str(uuid.uuid4()),
        "seq": 1,
        "type": MIGRATION_EVENT,
        "payload": {
            "login_id": login_id,
            "login_id_type": login_id_type,
            "password": password,
            "user": None if user is None else user_object(user, now),
        },
        "context": {"timestamp": int(now.timestamp()), "user_id": None, "triggered_by": "user", "app_id": project_id},
    }


def migration_response(response: Any) -> dict[str, Any] | None:
    """The import record a migration hook answered with (`None`: allowed, keep or create the bare user).

    Fails closed: `HookDisallowed` for `is_allowed: false`, `HookInvalidResponse` for anything else malformed;
    the record itself is checked by the import's validation when the user is created.
    """
    record = allowing_response(response, "user").get("user")
    if record is None:
        return None
    if not isinstance(record, dict):
        raise HookResponseMalformed(f"user must be an import record (an object), got {shown(record)}")
    if "password" in record:
        raise HookResponseMalformed("user must not carry a password: the signed-in password is stored")
    return record


class MigrationLocks:
    """At most one migration run per project and login id at a time in this process.

    Two processes can still race; the database's login-id uniqueness makes the second create fail.
    """

    def __init__(self) -> None:
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._users: dict[tuple[str, str], int] = {}

    @asynccontextmanager
    async def hold(self, project_id: str, login_id: str) -> AsyncIterator[None]:
        """Wait for, then hold, the lock of (`project_id`, `login_id`); dropped when nobody holds or waits."""
        key = (project_id, login_id)
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if self._users[key] == 0:
                del self._users[key]
                del self._locks[key]

    def busy(self, project_id: str, login_id: str) -> bool:
        """Whether a run for (`project_id`, `login_id`) is under way here (or waited for)."""
        return (project_id, login_id) in self._locks

    def __len__(self) -> int:
        return len(self._locks)
