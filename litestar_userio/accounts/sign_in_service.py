"""User-facing operations the host's own endpoints call: signing in with an imported password.

`sign_in` is the one call a token endpoint needs: it checks the client, the password and every rule that refuses a
sign-in, raising the typed errors of `errors.py` (`SignInRefused`) that the plugin's handler answers per RFC 6749.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from litestar_userio.accounts.credentials import PasswordCredentials, disabled_refusal
from litestar_userio.config import PasswordConfig, PasswordHashBounds, TokenConfig
from litestar_userio.db.engine import Database
from litestar_userio.errors import (
    InvalidCredentials,
    NotFound,
    PasswordExpired,
    UnknownClient,
    UserDisabled,
    UserOutsideValidPeriod,
    UserTemporarilyDisabled,
)
from litestar_userio.observability import telemetry
from litestar_userio.passwords.formats import is_target, stored_format
from litestar_userio.passwords.rehash_schemas import FormatCount, PasswordMigration
from litestar_userio.projects.project_service import ProjectRecord, ProjectService
from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.tokens.applications import ApplicationRecord, ApplicationService, refuse_unstorable_sign_in
from litestar_userio.tokens.refresh import RefreshGrant, RefreshTokenService
from litestar_userio.users.model import UserState
from litestar_userio.users.passwords import PasswordVerifier, hash_format
from litestar_userio.users.user_repository import SignInState, SignInUser, UserRepository
from userio_core.attribute_formats import LOGIN_ID_ATTRIBUTES
from userio_core.clock import Clock, SystemClock

if TYPE_CHECKING:
    from litestar_userio.accounts.lazy_migration import PasswordMigrator

__all__ = ["Refreshed", "SignedIn", "UserService"]


@dataclass(frozen=True)
class SignedIn:
    """A password sign-in that passed every rule: what it read, for `TokenService.token_response` to reuse."""

    user: UserState
    """The user as tokens see it (login ids, roles, groups, attributes)."""
    application: ApplicationRecord
    """The client it signed in to."""


@dataclass(frozen=True)
class Refreshed:
    """A refresh grant that passed every rule: what it read, for `TokenService.token_response` to reuse."""

    grant: RefreshGrant
    """The checked refresh token (`token_response(refresh=grant)` rotates it); its `scope` is the sign-in's."""
    user: UserState
    """The user as tokens see it (login ids, roles, groups, attributes), read with the token."""
    application: ApplicationRecord
    """The client the token belongs to."""


class UserService:
    """Users of a project, as the host's sign-in sees them."""

    def __init__(
        self,
        db: Database,
        config: PasswordConfig | None = None,
        max_bcrypt_cost: int = 14,
        clock: Clock | None = None,
        *,
        projects: ProjectService | None = None,
        applications: ApplicationService | None = None,
        hash_bounds: PasswordHashBounds | None = None,
        passwords: PasswordVerifier | None = None,
        credentials: PasswordCredentials | None = None,
        migrator: PasswordMigrator | None = None,
        refresh_tokens: RefreshTokenService | None = None,
    ) -> None:
        self.db = db
        self.passwords = passwords or PasswordVerifier(config or PasswordConfig(), max_bcrypt_cost, hash_bounds)
        """The bounded bcrypt pool (shared with the import and the admin API by the composition root)."""
        self.clock: Clock = clock or SystemClock()
        self.projects = projects or ProjectService(db, self.clock)
        """Where the project's login-id rules come from."""
        self.applications = applications or ApplicationService(db, self.clock)
        """The project's clients, which `sign_in` checks first."""
        self.credentials = credentials or PasswordCredentials(db, self.passwords, self.projects, self.clock)
        """A login id's password, found and checked (shared with `migrator`)."""
        lifetime = TokenConfig().refresh_token_lifetime
        self.refresh_tokens = refresh_tokens or RefreshTokenService(db, self.clock, lifetime)
        """`TokenService.refresh_tokens` (the composition root shares it): what `refresh_grant` checks."""
        self.repository = UserRepository()
        self.migrator = migrator
        """Lazy migration (docs/reference.md#hooks-lazy-migration): asked when a password sign-in finds no user."""

    async def sign_in(self, project_id: str, login_id: str, password: str, client_id: str) -> str:
        """The user id of a password sign-in that passes every rule; else the refusal, typed.

        See docs/reference.md#users-sign-in-refusals. `password_grant` is the same sign-in for a host that holds
        the project already and issues tokens next: it also answers the user and the client it read.
        """
        project = await self.projects.get(project_id) or ProjectRecord(project_id, ProjectSettings())
        return (await self.password_grant(project, login_id, password, client_id)).user.id

    async def password_grant(self, project: ProjectRecord, login_id: str, password: str, client_id: str) -> SignedIn:
        """A password sign-in that passes every rule, with the user and client it read; else the refusal, typed.

        `InvalidSignInRequest` (`invalid_request`) for a login id or client id holding U+0000; then `UnknownClient`
        (RFC 6749 authenticates the client before the grant); `InvalidCredentials` for an
        unknown login id or a wrong password alike; then, only once the password was right, `UserDisabled`,
        `UserOutsideValidPeriod` and `PasswordExpired`. Records `last_login_at` when it lets the user in. A login id
        no user has, or a user waiting for migration (`migrate_on_sign_in`), goes to the project's
        `user.password_migration` hooks first (`migrator`, docs/reference.md#hooks-lazy-migration).

        The user, its sign-in state and its password hash are one read (`UserRepository.sign_in_user`); the re-hash
        and `last_login_at` one write.
        """
        refuse_unstorable_sign_in(username=login_id, client_id=client_id)
        application = await self.applications.get(project.id, client_id)
        if application is None:
            raise UnknownClient()
        rules, algorithm = project.settings.login_id_rules(), project.settings.password_algorithm
        candidates = {attribute: rules.normalize(attribute, login_id) for attribute in LOGIN_ID_ATTRIBUTES}
        async with self.db.reader() as tx:
            found = await self.repository.sign_in_user(tx, project.id, login_ids=candidates)
        stored = found.password_hash if found is not None else None
        ok = await self.passwords.check(project.id, password, stored, algorithm)
        telemetry.password_checked(hash_format(stored), "match" if ok else "mismatch")
        if ok and found is not None and stored is not None:
            await self._let_in(project.id, found, password, stored, algorithm)
            return SignedIn(found.user, application)
        if self.migrator is not None:
            user_id = await self.migrator.migrate(project.id, login_id, password)
            if user_id is not None:
                await self.check_sign_in(project.id, user_id, password=True)
                return SignedIn(await self.refresh_grant_user(project.id, user_id), application)
        raise InvalidCredentials()

    async def _let_in(self, project_id: str, found: SignInUser, password: str, stored: str, algorithm: str) -> None:
        """After a right password: re-hash a legacy hash (`_rehash`), refuse by the rules, else record the sign-in."""
        new = None
        if not is_target(stored, algorithm, self.passwords.config.bcrypt_cost):
            new = await self.passwords.hash(project_id, password, algorithm)
        now = self.clock.now()
        refusal = self._refusal(found.state, now) or self._expired(found.state, now)
        if new is None and self.db.dialect == "postgres":
            # `last_login_at` alone: one statement, which commits on its own (BEGIN and COMMIT were two round trips
            # more). SQLite's writes wait in the process's writer queue (`Database.transaction`).
            if refusal is None:
                async with self.db.reader() as tx:
                    await self.repository.record_sign_in(tx, project_id, found.user.id, now)
        else:
            async with self.db.transaction() as tx:
                if new is not None:
                    await self.repository.replace_password_hash(tx, project_id, found.user.id, stored, new)
                if refusal is None:
                    await self.repository.record_sign_in(tx, project_id, found.user.id, now)
        if refusal is not None:
            raise refusal

    async def refresh_grant(self, project: ProjectRecord, client_id: str, refresh_token: str) -> Refreshed:
        """A refresh grant that passes every rule, with the token, the user and the client it read; else the refusal.

        The same refusals, in the same order, as `TokenService.application`, `refresh_tokens.check` and then
        `refresh_grant_user`: `InvalidSignInRequest` for a client id holding U+0000, `UnknownClient`, then
        `RefreshTokenInvalid` (a token used before revokes its whole sign-in first), `NotFound` when the project no
        longer has the user, then `UserDisabled`, `UserTemporarilyDisabled` or `UserOutsideValidPeriod`. The client
        comes from `ApplicationService`'s cache; the token and its user are one statement
        (`RefreshTokenRepository.find_with_user`). Pass `grant`, `user` and `application` to `token_response`.
        """
        refuse_unstorable_sign_in(client_id=client_id)
        application = await self.applications.get(project.id, client_id)
        if application is None:
            raise UnknownClient()
        grant, found = await self.refresh_tokens.check_with_user(project.id, client_id, refresh_token)
        if found is None:
            raise NotFound("no such user")
        self._refuse_disabled_state(found.state, self.clock.now())
        return Refreshed(grant, found.user, application)

    async def refresh_grant_user(self, project_id: str, user_id: str) -> UserState:
        """The user of a checked refresh token, read once, refused as `check_sign_in(password=False)` refuses.

        `NotFound` when the project has no such user; pass it to `TokenService.token_response(user=...)`.
        """
        async with self.db.reader() as tx:
            found = await self.repository.sign_in_user(tx, project_id, user_id=user_id)
        if found is None:
            raise NotFound("no such user")
        self._refuse_disabled_state(found.state, self.clock.now())
        return found.user

    async def check_sign_in(self, project_id: str, user_id: str, *, password: bool = True) -> None:
        """Refuse a sign-in the reference refuses, after the credentials were checked (`sign_in` calls it).

        `UserDisabled` for a disabled user; `UserOutsideValidPeriod` before `account_valid_from` or from
        `account_valid_until` on; `PasswordExpired` (with `password=True`: a password sign-in) when the primary
        password is past its `expire_after`, until it is changed. A refresh (`password=False`) checks the account only.
        """
        async with self.db.reader() as tx:
            state = await self.repository.sign_in_state(tx, project_id, user_id)
        if state is None:
            return
        now = self.clock.now()
        self._refuse_disabled_state(state, now)
        if password:
            expired = self._expired(state, now)
            if expired is not None:
                raise expired
            await self.record_sign_in(project_id, user_id)

    @staticmethod
    def _expired(state: SignInState, now: datetime) -> PasswordExpired | None:
        """`PasswordExpired` when the primary password is past its `expire_after`, else None."""
        expire_after = state.password_expire_after
        if expire_after is None or expire_after >= now:
            return None
        return PasswordExpired(
            f"the password expired at {expire_after.isoformat()}; change it, then sign in again",
            info={"expire_after": expire_after.isoformat()},
        )

    async def record_sign_in(self, project_id: str, user_id: str) -> None:
        """Set the user's `last_login_at` (exported): a password sign-in that passed every check.

        See docs/reference.md#export-columns.
        """
        async with self.db.transaction() as tx:
            await self.repository.record_sign_in(tx, project_id, user_id, self.clock.now())

    async def verify_password(self, project_id: str, login_id: str, password: str) -> str | None:
        """The user id when `password` matches the user's primary password, else None; never a disabled user.

        `PasswordCredentials.verify`: a right password of a disabled user raises `UserDisabled`; an unknown login id
        costs a check too; a legacy hash is re-hashed to the project's `password_algorithm`.
        """
        return await self.credentials.verify(project_id, login_id, password)

    async def find_password(self, project_id: str, login_id: str) -> tuple[str, str | None] | None:
        """(user id, stored primary password hash or None) of the user `login_id` names as sign-in reads it."""
        return await self.credentials.find(project_id, login_id)

    @classmethod
    def _refuse_disabled_state(cls, state: SignInState, now: datetime) -> None:
        """Raise the refusal of a user disabled at `now` (`_refusal`)."""
        refusal = cls._refusal(state, now)
        if refusal is not None:
            raise refusal

    @staticmethod
    def _refusal(
        state: SignInState, now: datetime
    ) -> UserDisabled | UserTemporarilyDisabled | UserOutsideValidPeriod | None:
        return disabled_refusal(state, now)

    async def find_by_oauth(self, project_id: str, provider_alias: str, subject: str) -> str | None:
        """The id of the user linked to `subject` at `provider_alias` (an imported identity), or None.

        The host's social sign-in calls it once the provider vouched for the subject
        (docs/reference.md#import-linked-identities).
        """
        async with self.db.reader() as tx:
            owners = await self.repository.find_oauth_owners(tx, project_id, [(provider_alias, subject)])
        return owners.get((provider_alias, subject))

    async def password_migration(self, project_id: str) -> PasswordMigration:
        """How far the project's users are from its `password_algorithm` (admin API, `userio password-migration`)."""
        project = await self.projects.get(project_id)
        algorithm = project.settings.password_algorithm if project is not None else "bcrypt"
        async with self.db.reader() as tx:
            heads = await self.repository.password_heads(tx, project_id)
        state = PasswordMigration(algorithm, 0, 0, 0, 0, 0, {})
        for head, users, never in heads:
            state.users += users
            state.never_signed_in += never
            if head is None:
                state.without_password += users
                continue
            count = state.formats.setdefault(stored_format(head), FormatCount(0, 0))
            count.users += users
            count.never_signed_in += never
            if not is_target(head, algorithm, self.passwords.config.bcrypt_cost):
                state.awaiting_rehash += users
                state.awaiting_rehash_never_signed_in += never
        state.formats = dict(sorted(state.formats.items()))
        return state

    def close(self) -> None:
        """Stop the bcrypt threads."""
        self.passwords.close()
