"""Refresh tokens for the host's `refresh_token` grant: stored hashed, rotated on every use, revoked on reuse.

A refresh token is 32 random bytes (URL-safe base64) handed out once; the database keeps only its SHA-256. Each
use marks it used and hands out a successor in the same family. Presenting a used token again means it leaked
(or a client raced itself): the whole family is revoked, so neither the thief nor the client can go on with
it (RFC 9700 section 4.14.2, refresh token rotation).

A refresh is all or nothing (issue 29): `check` only reads (a reuse it finds still revokes), the host issues the
new tokens, and only then `rotate` commits the rotation. Tokens that were never delivered (a hook threw or timed
out, no worker was free, the server failed) use nothing up: the client's retry with the same token works.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from litestar_userio.db.engine import Database
from litestar_userio.errors import RefreshTokenInvalid
from litestar_userio.observability import telemetry
from litestar_userio.tokens.token_repository import RefreshTokenRepository, RefreshTokenRow, Rotation
from litestar_userio.users.user_repository import SignInUser
from userio_core.clock import Clock
from userio_core.ids import new_id

__all__ = ["RefreshGrant", "RefreshTokenService"]


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class RefreshGrant:
    """What a valid refresh token grants: the user, the scope of the first sign-in, and the successor token.

    The successor is stored, and the presented token used up, only by `RefreshTokenService.rotate`.
    """

    user_id: str
    scope: str
    refresh_token: str
    token_hash: str
    """Of the presented token, which `rotate` uses up."""
    client_id: str


class RefreshTokenService:
    """Issues and rotates refresh tokens."""

    def __init__(self, db: Database, clock: Clock, lifetime: timedelta) -> None:
        self.db = db
        self.clock = clock
        self.lifetime = lifetime
        self._tokens = RefreshTokenRepository()

    async def issue(self, project_id: str, client_id: str, user_id: str, scope: str) -> str:
        """A new refresh token (a new family): returned once, stored as its hash."""
        token = secrets.token_urlsafe(32)
        now = self.clock.now()
        async with self.db.transaction() as tx:
            await self._tokens.insert(
                tx,
                project_id=project_id,
                user_id=user_id,
                client_id=client_id,
                family_id=new_id(),
                token_hash=_hash(token),
                scope=scope,
                created_at=now,
                expires_at=now + self.lifetime,
            )
        telemetry.token_issued("refresh")
        return token

    async def check(self, project_id: str, client_id: str, token: str) -> RefreshGrant:
        """What the refresh token grants, changing nothing; `RefreshTokenInvalid` when it cannot be used.

        A token used before revokes its whole family; the revocation commits before the error is raised. One read
        (no transaction) unless the token was used before.
        """
        token_hash = _hash(token)
        async with self.db.reader() as tx:
            row = await self._tokens.find_for_use(tx, token_hash, lock=False)
        return await self._grant(row, project_id, client_id, token_hash)

    async def check_with_user(
        self, project_id: str, client_id: str, token: str
    ) -> tuple[RefreshGrant, SignInUser | None]:
        """`check`, and the token's user in the same read: whole, as a sign-in reads it; None when not in the project.

        One statement (`RefreshTokenRepository.find_with_user`) where `check` then reading the user took two.
        """
        token_hash = _hash(token)
        found = await self.db.point_read(lambda tx: self._tokens.find_with_user(tx, project_id, token_hash))
        row, user = found if found is not None else (None, None)
        return await self._grant(row, project_id, client_id, token_hash), user

    async def _grant(
        self, row: RefreshTokenRow | None, project_id: str, client_id: str, token_hash: str
    ) -> RefreshGrant:
        """What the token read without a lock grants; `RefreshTokenInvalid` (a reuse revokes its family first)."""
        if row is not None and row.revoked_at is None and row.used_at is not None:
            return await self._use(project_id, client_id, token_hash, None)  # revoked under the row's lock
        refusal = self._refusal(row, project_id, client_id, self.clock.now())
        if refusal is not None or row is None:
            raise RefreshTokenInvalid(refusal)
        return RefreshGrant(row.user_id, row.scope, secrets.token_urlsafe(32), token_hash, client_id)

    @staticmethod
    def _refusal(row: RefreshTokenRow | None, project_id: str, client_id: str, now: datetime) -> str | None:
        """Why a token that was not used before cannot be used, or None."""
        if row is None or row.project_id != project_id or row.client_id != client_id:
            return "the refresh token is not valid for this client"
        if row.revoked_at is not None:
            return "the refresh token was revoked"
        if row.expires_at <= now:
            return "the refresh token expired"
        return None

    async def rotate(self, project_id: str, grant: RefreshGrant) -> None:
        """Use up the checked token and store its successor, once the new tokens are issued.

        Checked again under the row's lock: a concurrent refresh that used the token first makes this one a reuse
        (its family is revoked, `RefreshTokenInvalid`), exactly as if the two had come one after the other.
        """
        if not await self._rotate_at_once(project_id, grant):
            await self._use(project_id, grant.client_id, grant.token_hash, grant.refresh_token)
        telemetry.token_issued("refresh")

    async def _rotate_at_once(self, project_id: str, grant: RefreshGrant) -> bool:
        """The rotation in one trip to the database; whether it rotated.

        PostgreSQL: one statement, which commits on its own. SQLite: two statements run whole in the writer's
        thread (`Database.write_at_once`, which commits the rotations of concurrent refreshes together). Either
        way one round trip instead of five (BEGIN, the locked read, the update, the insert, COMMIT), and it rotates
        only a token `_use` would rotate. When it did not (a token used, revoked or expired since `check`), `_use`
        finds out why, under the row's lock.
        """
        now = self.clock.now()
        rotation = Rotation(
            project_id, grant.client_id, grant.token_hash, _hash(grant.refresh_token), now, now + self.lifetime
        )
        if self.db.dialect == "sqlite":
            return await self.db.write_at_once(lambda tx: self._tokens.rotate_unused_sqlite(tx, rotation))
        async with self.db.reader() as tx:  # no transaction: a single statement is atomic
            return await self._tokens.rotate_unused(tx, rotation)

    async def _use(self, project_id: str, client_id: str, token_hash: str, successor: str | None) -> RefreshGrant:
        """Check the token; with a `successor`, also use it up and store the successor."""
        now = self.clock.now()
        new = successor or secrets.token_urlsafe(32)
        refusal: str | None = None
        async with self.db.transaction() as tx:
            row = await self._tokens.find_for_use(tx, token_hash)
            if row is None or row.project_id != project_id or row.client_id != client_id:
                refusal = "the refresh token is not valid for this client"
            elif row.revoked_at is not None:
                refusal = "the refresh token was revoked"
            elif row.used_at is not None:
                await self._tokens.revoke_family(tx, row.family_id, now)
                refusal = "the refresh token was already used; every token of this sign-in is now revoked"
            elif row.expires_at <= now:
                refusal = "the refresh token expired"
            elif successor is not None:
                await self._tokens.mark_used(tx, row.id, now)
                await self._tokens.insert(
                    tx,
                    project_id=project_id,
                    user_id=row.user_id,
                    client_id=client_id,
                    family_id=row.family_id,
                    token_hash=_hash(new),
                    scope=row.scope,
                    created_at=now,
                    expires_at=now + self.lifetime,
                )
        if refusal is not None or row is None:
            raise RefreshTokenInvalid(refusal)
        return RefreshGrant(row.user_id, row.scope, new, token_hash, client_id)
