"""Lazy migration at sign-in: a login id the project does not know is asked of the old system.

See docs/reference.md#hooks-lazy-migration.

The project's `user.password_migration` hooks get the login id and the password, call the old system through the
fetch allowlist, and answer with an import record; the user is then created with the import's validation
(`UserAdminService.create`), the password stored in the project's algorithm, and the sign-in goes on. After that
the user signs in like any other: the hook never runs again for them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import msgspec

from litestar_userio.errors import HookError, UserIOError
from litestar_userio.hooks.migration import MigrationLocks
from litestar_userio.hooks.service import HookService
from litestar_userio.users.admin import UserAdminService

__all__ = ["PasswordMigrator"]

logger = logging.getLogger(__name__)


def login_id_type(login_id: str) -> str:
    """Which login id `login_id` looks like: an email has `@`, a phone number starts with `+`."""
    if "@" in login_id:
        return "email"
    if login_id.startswith("+"):
        return "phone_number"
    return "preferred_username"


class PasswordMigrator:
    """Creates, at most once, the user an old system vouches for; fails closed (None: the sign-in is refused)."""

    def __init__(self, hooks: HookService, user_admin: UserAdminService) -> None:
        self.hooks = hooks
        self.user_admin = user_admin
        self.locks = MigrationLocks()
        """One run per project and login id at a time; the database's login-id uniqueness backs it."""

    async def migrate(
        self, project_id: str, login_id: str, password: str, verify: Callable[[str, str, str], Awaitable[str | None]]
    ) -> str | None:
        """The id of the user created for `login_id`, or None (no migration hook, a refusal, any failure).

        A sign-in that waited for another one's run finds the user created: `verify` checks its password then.
        """
        if not self.hooks.has_migration(await self.hooks.list(project_id)):
            return None
        project = await self.user_admin.projects.get(project_id)
        if project is None:
            return None
        if await self.user_admin.find_by_login_id(project_id, login_id) is not None:
            return None  # a known user whose password was wrong: nothing to migrate
        async with self.locks.hold(project_id, login_id.strip().lower()):
            if await self.user_admin.find_by_login_id(project_id, login_id) is not None:
                return await verify(project_id, login_id, password)  # created by the run this one waited for
            kind = login_id_type(login_id)
            try:
                record = await self.hooks.run_migration(project_id, login_id, kind, password, None)
            except HookError as error:
                logger.info("password migration of a login id of project %s refused: %s", project_id, error.reason)
                return None
            document = dict(record or {})
            document.setdefault(kind, login_id)
            try:
                user, _ = await self.user_admin.create(project, msgspec.json.encode(document))
            except UserIOError as error:
                logger.info("password migration of project %s: the hook's record failed: %s", project_id, error.reason)
                return None
            try:
                await self.user_admin.set_password(project, user["sub"], password=password)
            except BaseException:
                await self.user_admin.delete(project, user["sub"])
                raise
            return str(user["sub"])
