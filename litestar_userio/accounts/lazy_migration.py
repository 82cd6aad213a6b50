"""Lazy migration at sign-in: an unknown login id, or a user waiting for it, goes to the old system.

See docs/reference.md#hooks-lazy-migration.

A waiting user was imported with the password `{"type": "migrate_on_sign_in"}`. The project's
`user.password_migration` hooks get the login id, the password and the waiting user (or null), call the old system
through the fetch allowlist, and answer with an import record; the user is then created (`UserAdminService.create`)
or the waiting one completed (`UserAdminService.update`), both with the import's validation, the password stored
in the project's algorithm, and the sign-in goes on. After that the user signs in
like any other: the hook never runs again for them.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec

from litestar_userio.accounts.credentials import PasswordCredentials
from litestar_userio.accounts.user_admin import UserAdminService
from litestar_userio.causes import Cause
from litestar_userio.changes.entries import ChangeOrigin
from litestar_userio.errors import HookError, UserIOError, ValidationFailed
from litestar_userio.hooks.hook_service import HookService
from litestar_userio.hooks.lazy_migration_event import MigrationLocks, login_id_type
from litestar_userio.passwords.formats import MIGRATE_ON_SIGN_IN, stored_format
from litestar_userio.projects.project_service import ProjectRecord

__all__ = ["PasswordMigrator"]

logger = logging.getLogger(__name__)

_SIGN_IN = ChangeOrigin("sign_in")
"""The origin of the changes a lazy migration makes (docs/changes.md)."""


def is_waiting(found: tuple[str, str | None] | None) -> bool:
    """Whether a user `PasswordCredentials.find` found waits for lazy migration (`{"type": "migrate_on_sign_in"}`)."""
    return found is not None and found[1] is not None and stored_format(found[1]) == MIGRATE_ON_SIGN_IN


class PasswordMigrator:
    """Creates or completes, at most once, the user an old system vouches for; fails closed (None: refused)."""

    def __init__(self, hooks: HookService, user_admin: UserAdminService, credentials: PasswordCredentials) -> None:
        self.hooks = hooks
        self.user_admin = user_admin
        self.credentials = credentials
        """The sign-in's own password lookup and check (the one `UserService` is built with)."""
        self.locks = MigrationLocks()
        """One run per project and login id at a time; the database's login-id uniqueness backs it."""

    async def migrate(self, project_id: str, login_id: str, password: str) -> str | None:
        """The id of the user created or completed for `login_id`, or None (no hook, a refusal, any failure).

        Only a login id no user has, or one of a user still waiting, is asked of the hooks; a waiting user stays
        waiting unless the hooks vouch for the password. A sign-in that waited for another one's run finds the
        user created or completed: `PasswordCredentials.verify` checks its password then.
        """
        if not self.hooks.has_migration(await self.hooks.list(project_id)):
            return None
        project = await self.user_admin.projects.get(project_id)
        if project is None:
            return None
        found = await self.credentials.find(project_id, login_id)
        key = login_id.strip().lower()
        if found is not None and not is_waiting(found) and not self.locks.busy(project_id, key):
            return None  # a known user whose password was wrong: nothing to migrate
        # A user found while a run for its login id is under way may be the one that run just created, its password
        # not stored yet: wait for that run, then check the password against what it stored.
        async with self.locks.hold(project_id, key):
            found = await self.credentials.find(project_id, login_id)
            if found is not None and not is_waiting(found):
                return await self.credentials.verify(
                    project_id, login_id, password
                )  # done by the run this one waited for
            waiting = None if found is None else await self.user_admin.load(project_id, found[0])
            kind = login_id_type(login_id)
            try:
                record = await self.hooks.run_migration(project_id, login_id, kind, password, waiting)
            except HookError as error:
                logger.info("password migration of a login id of project %s refused: %s", project_id, error.reason)
                return None
            document = dict(record or {})
            try:
                if waiting is None:
                    document.setdefault(kind, login_id)
                    user, _ = await self.user_admin.create(project, msgspec.json.encode(document), origin=_SIGN_IN)
                    user_id = str(user["sub"])
                else:
                    user_id = waiting.id
                    await self._complete(project, user_id, document)
            except UserIOError as error:
                logger.info("password migration of project %s: the hook's record failed: %s", project_id, error.reason)
                return None
            try:
                await self.user_admin.set_password(project, user_id, password=password, origin=_SIGN_IN)
            except BaseException:
                if waiting is None:
                    await self.user_admin.delete(project, user_id, origin=_SIGN_IN)
                raise
            return user_id

    async def _complete(self, project: ProjectRecord, user_id: str, document: dict[str, Any]) -> None:
        """Update the waiting user with the hook's record, as an upsert import would; its id and `sub` never change.

        The password is stored after this (`set_password`), so a failure here leaves the user waiting.
        """
        sub = document.pop("sub", user_id)
        if sub != user_id:
            raise ValidationFailed(
                [Cause("/sub", "const", {"actual": sub, "expected": user_id})],
                "the hook's record names another user: a waiting user's sub never changes",
            )
        if document:
            await self.user_admin.update(
                project, user_id, msgspec.json.encode(document), origin=_SIGN_IN, pre_update=False
            )
