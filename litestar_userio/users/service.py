"""User-facing operations the host's own endpoints call: signing in with an imported password."""

from __future__ import annotations

import msgspec

from litestar_userio.clock import Clock, SystemClock
from litestar_userio.config import PasswordConfig
from litestar_userio.db.engine import Database, Row
from litestar_userio.errors import PasswordExpired, UserOutsideValidPeriod
from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.users.formats import LOGIN_ID_ATTRIBUTES
from litestar_userio.users.login_id_rules import CASE_INSENSITIVE, LoginIDRules
from litestar_userio.users.passwords import PasswordVerifier

__all__ = ["UserService"]


class UserService:
    """Users of a project, as the host's sign-in sees them."""

    def __init__(
        self,
        db: Database,
        config: PasswordConfig | None = None,
        max_bcrypt_cost: int = 14,
        clock: Clock | None = None,
    ) -> None:
        self.db = db
        self.passwords = PasswordVerifier(config or PasswordConfig(), max_bcrypt_cost)
        self.clock: Clock = clock or SystemClock()

    async def check_sign_in(self, project_id: str, user_id: str, *, password: bool = True) -> None:
        """Refuse a sign-in the reference refuses, after the credentials were checked.

        `UserOutsideValidPeriod` before `account_valid_from` or from `account_valid_until` on;
        `PasswordExpired` (with `password=True`: a password sign-in) when the primary password is past its
        `expire_after`, until it is changed. A refresh checks the account only.
        """
        async with self.db.reader() as tx:
            row = await tx.fetchrow(
                "SELECT u.account_valid_from, u.account_valid_until, a.expire_after FROM userio_user u"
                " LEFT JOIN userio_authenticator a"
                " ON a.user_id = u.id AND a.kind = 'primary' AND a.type = 'password'"
                " WHERE u.id = $1 AND u.project_id = $2",
                user_id,
                project_id,
            )
        if row is None:
            return
        now = self.clock.now()
        valid_from, valid_until = row["account_valid_from"], row["account_valid_until"]
        if (valid_from is not None and now < valid_from) or (valid_until is not None and now >= valid_until):
            raise UserOutsideValidPeriod(
                info={
                    "account_valid_from": valid_from.isoformat() if valid_from else None,
                    "account_valid_until": valid_until.isoformat() if valid_until else None,
                }
            )
        expire_after = row["expire_after"]
        if password and expire_after is not None and expire_after < now:
            raise PasswordExpired(
                f"password expired at {expire_after.isoformat()}; it must be changed before signing in",
                info={"expire_after": expire_after.isoformat()},
            )
        if password:
            await self.record_sign_in(project_id, user_id)

    async def record_sign_in(self, project_id: str, user_id: str) -> None:
        """Set the user's `last_login_at` (exported, SPEC 2.6): a password sign-in that passed every check."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "UPDATE userio_user SET last_login_at = $3 WHERE project_id = $1 AND id = $2",
                project_id,
                user_id,
                self.clock.now(),
            )

    async def verify_password(self, project_id: str, login_id: str, password: str) -> str | None:
        """The user id when `password` matches the user's primary password, else None.

        An unknown login id, or a user without a password, costs a bcrypt check too (a fixed hash of the
        configured typical cost), so timing does not tell which login ids exist. bcrypt compares only the first
        72 bytes, as the systems the hashes come from did. Checks run on a bounded pool shared fairly by projects;
        `PasswordVerificationBusy` when too many of this project's checks already wait.
        """
        row = await self._password_row(project_id, login_id)
        stored = row["password_hash"] if row is not None else None
        ok = await self.passwords.check(project_id, password, stored)
        return row["user_id"] if ok and row is not None else None

    async def _password_row(self, project_id: str, login_id: str) -> Row | None:
        rules = await self._login_id_rules(project_id)
        args: list[str] = [project_id]
        clauses = []
        for attribute, key in LOGIN_ID_ATTRIBUTES.items():
            args += [key, rules.normalize(attribute, login_id)]
            clauses.append(f"(i.login_id_key = ${len(args) - 1} AND i.normalized_value = ${len(args)})")
        async with self.db.reader() as tx:
            return await tx.fetchrow(
                "SELECT i.user_id, a.password_hash FROM userio_identity i"
                " LEFT JOIN userio_authenticator a"
                " ON a.user_id = i.user_id AND a.kind = 'primary' AND a.type = 'password'"
                f" WHERE i.project_id = $1 AND ({' OR '.join(clauses)}) LIMIT 1",
                *args,
            )

    async def _login_id_rules(self, project_id: str) -> LoginIDRules:
        """The project's login-id case sensitivity: sign-in compares login ids as the import stored them."""
        async with self.db.reader() as tx:
            row = await tx.fetchrow("SELECT settings FROM userio_project WHERE id = $1", project_id)
        if row is None or not row["settings"]:
            return CASE_INSENSITIVE
        settings = row["settings"]
        if isinstance(settings, str | bytes):
            return msgspec.json.decode(settings, type=ProjectSettings).login_id_rules()
        return msgspec.convert(settings, ProjectSettings).login_id_rules()

    def close(self) -> None:
        """Stop the bcrypt threads."""
        self.passwords.close()
