"""A login id's primary password: found, checked and re-hashed; shared by sign-in and lazy migration.

`UserService` (sign-in) and `PasswordMigrator` (lazy migration) are both built with the one `PasswordCredentials` of
the composition root, so neither hands the other a callback.
"""

from __future__ import annotations

from datetime import datetime

from litestar_userio.db.engine import Database
from litestar_userio.errors import UserDisabled, UserOutsideValidPeriod, UserTemporarilyDisabled
from litestar_userio.observability import telemetry
from litestar_userio.passwords.formats import is_target
from litestar_userio.projects.project_service import ProjectService
from litestar_userio.users.login_id_rules import CASE_INSENSITIVE, LoginIDRules
from litestar_userio.users.model import disabled_state
from litestar_userio.users.passwords import PasswordVerifier, hash_format
from litestar_userio.users.user_repository import SignInState, UserRepository
from userio_core.attribute_formats import LOGIN_ID_ATTRIBUTES
from userio_core.clock import Clock

__all__ = ["PasswordCredentials", "disabled_refusal"]


def disabled_refusal(
    state: SignInState, now: datetime
) -> UserDisabled | UserTemporarilyDisabled | UserOutsideValidPeriod | None:
    """The refusal of a user disabled at `now` as `disabled_state` (the one rule) says, with a fixed category."""
    why = disabled_state(
        now,
        disabled=state.disabled,
        temporarily_disabled_from=state.temporarily_disabled_from,
        temporarily_disabled_until=state.temporarily_disabled_until,
        account_valid_from=state.account_valid_from,
        account_valid_until=state.account_valid_until,
    )
    if why == "disabled":
        return UserDisabled()
    if why == "temporarily_disabled":
        return UserTemporarilyDisabled()
    if why == "outside_valid_period":
        valid_from, valid_until = state.account_valid_from, state.account_valid_until
        return UserOutsideValidPeriod(
            f"the account can sign in only from {valid_from.isoformat() if valid_from else 'any time'}"
            f" until {valid_until.isoformat() if valid_until else 'any time'}",
            info={
                "account_valid_from": valid_from.isoformat() if valid_from else None,
                "account_valid_until": valid_until.isoformat() if valid_until else None,
            },
        )
    return None


class PasswordCredentials:
    """The primary password a login id leads to, as sign-in reads it."""

    def __init__(self, db: Database, passwords: PasswordVerifier, projects: ProjectService, clock: Clock) -> None:
        self.db = db
        self.passwords = passwords
        self.projects = projects
        self.clock = clock
        self.repository = UserRepository()

    async def verify(self, project_id: str, login_id: str, password: str) -> str | None:
        """The user id when `password` matches the user's primary password, else None; never a disabled user.

        A right password of a disabled user raises `UserDisabled` (a host that checks nothing more still refuses
        it); `UserService.sign_in` adds the other rules.

        An unknown login id, or a user without a password, costs a bcrypt check too (a fixed hash of the
        configured typical cost), so timing does not tell which login ids exist. bcrypt compares only the first
        72 bytes, as the systems the hashes come from did. Checks run on a bounded pool shared fairly by projects;
        `PasswordVerificationBusy` when too many of this project's checks already wait. A good password whose hash
        is not in the project's `password_algorithm` is re-hashed to it now (`_rehash`).
        """
        found = await self.find(project_id, login_id)
        stored = found[1] if found is not None else None
        ok = await self.passwords.check(project_id, password, stored, await self._algorithm(project_id))
        telemetry.password_checked(hash_format(stored), "match" if ok else "mismatch")
        if not ok or found is None:
            return None
        if stored is not None:
            await self._rehash(project_id, found[0], password, stored)
        await self._refuse_disabled(project_id, found[0])
        return found[0]

    async def find(self, project_id: str, login_id: str) -> tuple[str, str | None] | None:
        """(user id, stored primary password hash or None) of the user `login_id` names as sign-in reads it."""
        rules = await self._login_id_rules(project_id)
        candidates = {attribute: rules.normalize(attribute, login_id) for attribute in LOGIN_ID_ATTRIBUTES}
        async with self.db.reader() as tx:
            return await self.repository.find_password(tx, project_id, candidates)

    async def _refuse_disabled(self, project_id: str, user_id: str) -> None:
        async with self.db.reader() as tx:
            state = await self.repository.sign_in_state(tx, project_id, user_id)
        refusal = disabled_refusal(state, self.clock.now()) if state is not None else None
        if refusal is not None:
            raise refusal

    async def _rehash(self, project_id: str, user_id: str, password: str, stored: str) -> None:
        """A hash not in the project's `password_algorithm` is replaced in the sign-in that proved it.

        See docs/reference.md#passwords-re-hash-at-sign-in.

        The swap is conditional on the legacy hash still being there, so two first sign-ins at once store one
        new hash, and a password changed meanwhile is not overwritten.
        """
        algorithm = await self._algorithm(project_id)
        if is_target(stored, algorithm, self.passwords.config.bcrypt_cost):
            return
        new = await self.passwords.hash(project_id, password, algorithm)
        async with self.db.transaction() as tx:
            await self.repository.replace_password_hash(tx, project_id, user_id, stored, new)

    async def _algorithm(self, project_id: str) -> str:
        """The project's `password_algorithm` (what a legacy hash is re-hashed to, and the dummy check's)."""
        project = await self.projects.get(project_id)
        return project.settings.password_algorithm if project is not None else "bcrypt"

    async def _login_id_rules(self, project_id: str) -> LoginIDRules:
        """The project's login-id case sensitivity: sign-in compares login ids as the import stored them."""
        project = await self.projects.get(project_id)
        return project.settings.login_id_rules() if project is not None else CASE_INSENSITIVE
