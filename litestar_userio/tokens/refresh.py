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
from datetime import datetime, timedelta

from litestar_userio.clock import Clock
from litestar_userio.db.engine import Database, Tx
from litestar_userio.errors import RefreshTokenInvalid
from litestar_userio.ids import new_id

__all__ = ["RefreshGrant", "RefreshTokenRepository", "RefreshTokenService"]


def _aware(value: object) -> datetime:
    assert isinstance(value, datetime)
    return value


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class RefreshGrant:
    """What a valid refresh token grants: the user, the scope of the first sign-in, and the successor token."""

    user_id: str
    scope: str
    refresh_token: str


class RefreshTokenRepository:
    """The SQL of refresh tokens."""

    async def insert(
        self,
        tx: Tx,
        *,
        project_id: str,
        user_id: str,
        client_id: str,
        family_id: str,
        token_hash: str,
        scope: str,
        created_at: datetime,
        expires_at: datetime,
    ) -> None:
        """Store one token (its hash)."""
        await tx.execute(
            "INSERT INTO userio_refresh_token (id, project_id, user_id, client_id, family_id, token_hash, scope,"
            " created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            new_id(),
            project_id,
            user_id,
            client_id,
            family_id,
            token_hash,
            scope,
            created_at,
            expires_at,
        )

    async def find_for_use(self, tx: Tx, token_hash: str) -> dict[str, object] | None:
        """The token's row, locked for this transaction."""
        row = await tx.fetchrow(
            "SELECT id, project_id, user_id, client_id, family_id, scope, expires_at, used_at, revoked_at"
            f" FROM userio_refresh_token WHERE token_hash = $1{tx.for_update}",
            token_hash,
        )
        return dict(row) if row is not None else None

    async def mark_used(self, tx: Tx, token_id: str, at: datetime) -> None:
        """The token was exchanged for its successor."""
        await tx.execute("UPDATE userio_refresh_token SET used_at = $2 WHERE id = $1", token_id, at)

    async def revoke_family(self, tx: Tx, family_id: str, at: datetime) -> None:
        """Every token of the family stops working."""
        await tx.execute(
            "UPDATE userio_refresh_token SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL",
            family_id,
            at,
        )


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
            if row is None or row["project_id"] != project_id or row["client_id"] != client_id:
                refusal = "the refresh token is not valid for this client"
            elif row["revoked_at"] is not None:
                refusal = "the refresh token was revoked"
            elif row["used_at"] is not None:
                await self._tokens.revoke_family(tx, str(row["family_id"]), now)
                refusal = "the refresh token was already used; every token of this sign-in is now revoked"
            elif _aware(row["expires_at"]) <= now:
                refusal = "the refresh token expired"
            else:
                await self._tokens.mark_used(tx, str(row["id"]), now)
                await self._tokens.insert(
                    tx,
                    project_id=project_id,
                    user_id=str(row["user_id"]),
                    client_id=client_id,
                    family_id=str(row["family_id"]),
                    token_hash=_hash(successor),
                    scope=str(row["scope"]),
                    created_at=now,
                    expires_at=now + self.lifetime,
                )
        if refusal is not None or row is None:
            raise RefreshTokenInvalid(refusal)
        return RefreshGrant(str(row["user_id"]), str(row["scope"]), successor)
