"""Refresh tokens for the host's `refresh_token` grant: stored hashed, rotated on every use, revoked on reuse.

A refresh token is 32 random bytes (URL-safe base64) handed out once; the database keeps only its SHA-256. Each
use marks it used and hands out a successor in the same family. Presenting a used token again means it leaked
(or a client raced itself): the whole family is revoked, so neither the thief nor the client can go on with
it (RFC 9700 section 4.14.2, refresh token rotation).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from litestar_userio.clock import Clock
from litestar_userio.db.engine import Database
from litestar_userio.errors import RefreshTokenInvalid
from litestar_userio.ids import new_id
from litestar_userio.observability import telemetry
from litestar_userio.tokens.repository import RefreshTokenRepository

__all__ = ["RefreshGrant", "RefreshTokenService"]


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class RefreshGrant:
    """What a valid refresh token grants: the user, the scope of the first sign-in, and the successor token."""

    user_id: str
    scope: str
    refresh_token: str


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

    async def rotate(self, project_id: str, client_id: str, token: str) -> RefreshGrant:
        """Exchange a refresh token for its successor; `RefreshTokenInvalid` when it cannot be used.

        A token used before revokes its whole family; the revocation commits before the error is raised.
        """
        now = self.clock.now()
        successor = secrets.token_urlsafe(32)
        refusal: str | None = None
        async with self.db.transaction() as tx:
            row = await self._tokens.find_for_use(tx, _hash(token))
            if row is None or row.project_id != project_id or row.client_id != client_id:
                refusal = "the refresh token is not valid for this client"
            elif row.revoked_at is not None:
                refusal = "the refresh token was revoked"
            elif row.used_at is not None:
                await self._tokens.revoke_family(tx, row.family_id, now)
                refusal = "the refresh token was already used; every token of this sign-in is now revoked"
            elif row.expires_at <= now:
                refusal = "the refresh token expired"
            else:
                await self._tokens.mark_used(tx, row.id, now)
                await self._tokens.insert(
                    tx,
                    project_id=project_id,
                    user_id=row.user_id,
                    client_id=client_id,
                    family_id=row.family_id,
                    token_hash=_hash(successor),
                    scope=row.scope,
                    created_at=now,
                    expires_at=now + self.lifetime,
                )
        if refusal is not None or row is None:
            raise RefreshTokenInvalid(refusal)
        telemetry.token_issued("refresh")
        return RefreshGrant(row.user_id, row.scope, successor)
