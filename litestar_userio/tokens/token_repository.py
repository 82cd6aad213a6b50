"""Every query of the token aggregates: a project's applications, its signing keys, and refresh tokens.

Each method runs in the caller's transaction (or reader); the services decide when to open one and what the
rules are (one active key, rotation of refresh tokens).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec

from litestar_userio.db.engine import BlockingTx, Row, Tx
from litestar_userio.db.tables import Application, Project, RefreshToken, SigningKey
from litestar_userio.users.user_repository import SignInUser, sign_in_user_from_row, sign_in_user_query
from userio_core.ids import new_id

__all__ = [
    "ApplicationRecord",
    "ApplicationRepository",
    "RefreshTokenRepository",
    "RefreshTokenRow",
    "Rotation",
    "SigningKeyRepository",
    "StoredKey",
]


class ApplicationRecord(msgspec.Struct, frozen=True):
    """A client as the token service sees it."""

    client_id: str
    name: str | None
    issue_jwt_access_token: bool
    access_token_lifetime: int


class ApplicationRepository:
    """Queries of `userio_application`."""

    async def add(self, tx: Tx, project_id: str, application: ApplicationRecord, created_at: datetime) -> None:
        """Insert a client; the database refuses a client id the project already has."""
        await tx.insert(
            Application,
            {
                "project": project_id,
                "client_id": application.client_id,
                "name": application.name,
                "issue_jwt_access_token": application.issue_jwt_access_token,
                "access_token_lifetime": application.access_token_lifetime,
                "created_at": created_at,
            },
        )

    async def get(self, tx: Tx, project_id: str, client_id: str) -> ApplicationRecord | None:
        """The project's client of that id, or None."""
        row = await tx.first(
            Application.select(
                Application.client_id,
                Application.name,
                Application.issue_jwt_access_token,
                Application.access_token_lifetime,
            ).where((Application.project == project_id) & (Application.client_id == client_id))
        )
        if row is None:
            return None
        return ApplicationRecord(
            row["client_id"], row["name"], bool(row["issue_jwt_access_token"]), row["access_token_lifetime"]
        )

    async def all(self, tx: Tx, project_id: str) -> list[ApplicationRecord]:
        """The project's clients, by client id."""
        rows = await tx.run(
            Application.select(
                Application.client_id,
                Application.name,
                Application.issue_jwt_access_token,
                Application.access_token_lifetime,
            )
            .where(Application.project == project_id)
            .order_by(Application.client_id)
        )
        return [
            ApplicationRecord(r["client_id"], r["name"], bool(r["issue_jwt_access_token"]), r["access_token_lifetime"])
            for r in rows
        ]

    async def client_ids(self, tx: Tx, project_id: str, limit: int) -> list[str]:
        """Up to `limit` of the project's client ids, in order (what an admin can pick from)."""
        rows = await tx.run(
            Application.select(Application.client_id)
            .where(Application.project == project_id)
            .order_by(Application.client_id)
            .limit(limit)
        )
        return [row["client_id"] for row in rows]


@dataclass(frozen=True)
class StoredKey:
    """A signing key as stored: its id and private key (PEM)."""

    kid: str
    private_key_pem: str


class SigningKeyRepository:
    """Queries of `userio_signing_key`."""

    async def active(self, tx: Tx, project_id: str) -> StoredKey | None:
        """The newest active key of the project, or None before its first."""
        row = await tx.first(
            SigningKey.select(SigningKey.kid, SigningKey.private_key_pem)
            .where((SigningKey.project == project_id) & SigningKey.active.eq(True))
            .order_by(SigningKey.created_at, ascending=False)
            .limit(1)
        )
        return StoredKey(row["kid"], row["private_key_pem"]) if row is not None else None

    async def lock_project(self, tx: Tx, project_id: str) -> None:
        """Hold the project's row until `tx` ends: one key change of a project at a time (SQLite has one writer)."""
        await tx.run(tx.locking(Project.select(Project.id).where(Project.id == project_id)))

    async def deactivate_all(self, tx: Tx, project_id: str) -> None:
        """No key of the project signs any more (they stay published until retired)."""
        await tx.run(SigningKey.update({SigningKey.active: False}).where(SigningKey.project == project_id))

    async def add_active(
        self, tx: Tx, project_id: str, key: StoredKey, public_jwk: dict[str, Any], created_at: datetime
    ) -> None:
        """Store a new key that signs from now on, with the JWK that publishes it."""
        await tx.insert(
            SigningKey,
            {
                "project": project_id,
                "kid": key.kid,
                "private_key_pem": key.private_key_pem,
                "public_jwk": json.dumps(public_jwk),
                "active": True,
                "created_at": created_at,
            },
        )

    async def retire(self, tx: Tx, project_id: str, kid: str, at: datetime) -> None:
        """Stop publishing the key, unless it is the active one."""
        await tx.run(
            SigningKey.update({SigningKey.retired_at: at}).where(
                (SigningKey.project == project_id) & (SigningKey.kid == kid) & SigningKey.active.eq(False)
            )
        )

    async def published_jwks(self, tx: Tx, project_id: str) -> list[dict[str, Any]]:
        """The public JWKs of the keys not retired, the active one first, then newest first."""
        rows = await tx.run(
            SigningKey.select(SigningKey.public_jwk)
            .where((SigningKey.project == project_id) & SigningKey.retired_at.is_null())
            .order_by(SigningKey.active, SigningKey.created_at, ascending=False)
        )
        return [json.loads(r["public_jwk"]) for r in rows]


@dataclass(frozen=True)
class RefreshTokenRow:
    """A stored refresh token (its hash is what finds it)."""

    id: str
    project_id: str
    user_id: str
    client_id: str
    family_id: str
    scope: str
    expires_at: datetime
    used_at: datetime | None
    revoked_at: datetime | None


_TOKEN_COLUMNS = (
    "id",
    "project_id",
    "user_id",
    "client_id",
    "family_id",
    "scope",
    "expires_at",
    "used_at",
    "revoked_at",
)
_AS_TOKEN_COLUMNS = ", ".join(f"t.{column} AS token_{column}" for column in _TOKEN_COLUMNS)
"""The token's columns beside its user's in `find_with_user`, named apart from them (`token_id`, ...)."""


def _token_row(row: Row, prefix: str = "") -> RefreshTokenRow:
    """A `RefreshTokenRow` of `_TOKEN_COLUMNS`, each named `prefix` + its name."""
    return RefreshTokenRow(
        str(row[f"{prefix}id"]),
        str(row[f"{prefix}project_id"]),
        str(row[f"{prefix}user_id"]),
        str(row[f"{prefix}client_id"]),
        str(row[f"{prefix}family_id"]),
        str(row[f"{prefix}scope"]),
        row[f"{prefix}expires_at"],
        row[f"{prefix}used_at"],
        row[f"{prefix}revoked_at"],
    )


@dataclass(frozen=True)
class Rotation:
    """A refresh token to use up at `at`, and the hash of its successor (`RefreshTokenRepository.rotate_unused`)."""

    project_id: str
    client_id: str
    token_hash: str
    successor_hash: str
    at: datetime
    expires_at: datetime
    """The successor's."""


_USE_UP = (
    "UPDATE userio_refresh_token SET used_at = $4 WHERE token_hash = $3 AND project_id = $1"
    " AND client_id = $2 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $4"
)
"""A rotation's first step on both engines: the token used up, if `_use` would let it be used."""


def _use_up_arguments(rotation: Rotation) -> tuple[str, str, str, datetime]:
    """`_USE_UP`'s $1 to $4."""
    return rotation.project_id, rotation.client_id, rotation.token_hash, rotation.at


class RefreshTokenRepository:
    """Queries of `userio_refresh_token`."""

    # Token issuance keeps hand-written SQL: `insert` (at sign-in) and the refresh grant's `find_for_use`,
    # `mark_used` and `insert`. Built with Piccolo, p50 of both in one process, 1000 calls each, two runs:
    # issuing 2622 -> 2903 and 2414 -> 2733 us on SQLite, 2030 -> 2395 and 2512 -> 2928 us on PostgreSQL
    # (+11 to +18%); rotating 3990 -> 4094 and 3369 -> 4019 us on SQLite, 1897 -> 2905 and 4011 -> 4015 us on
    # PostgreSQL (+0 to +53%, commit-bound); building and compiling one select or insert took 114-130 us of CPU
    # on that loaded 2-core machine.

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

    async def find_for_use(self, tx: Tx, token_hash: str, *, lock: bool = True) -> RefreshTokenRow | None:
        """The token of that hash, locked for this transaction (`lock=False`: read only, by a reader)."""
        row = await tx.fetchrow(
            f"SELECT {', '.join(_TOKEN_COLUMNS)}"
            f" FROM userio_refresh_token WHERE token_hash = $1{tx.for_update if lock else ''}",
            token_hash,
        )
        return None if row is None else _token_row(row)

    async def find_with_user(
        self, tx: Tx, project_id: str, token_hash: str
    ) -> tuple[RefreshTokenRow, SignInUser | None] | None:
        """The token of that hash (read only) and, in the same statement, its user in `project_id`, whole.

        The user as `UserRepository.sign_in_user` reads it (login ids, roles, groups, attributes, sign-in state);
        None when the project has no such user. A refresh grant's one read (issue 47): the token and then the user
        were two round trips.
        """
        user_where = (
            "u.project_id = $1 AND u.id = (SELECT r.user_id FROM userio_refresh_token r WHERE r.token_hash = $2)"
        )
        row = await tx.fetchrow(
            f"SELECT {_AS_TOKEN_COLUMNS}, s.*"
            f" FROM userio_refresh_token t LEFT JOIN ({sign_in_user_query(tx, user_where)}) s ON s.id = t.user_id"
            " WHERE t.token_hash = $2",
            project_id,
            token_hash,
        )
        if row is None:
            return None
        token = _token_row(row, "token_")
        return token, (sign_in_user_from_row(row) if row["id"] is not None else None)

    async def rotate_unused(self, tx: Tx, rotation: Rotation) -> bool:
        """PostgreSQL, one statement: use up the token and store its successor in its family; whether it did.

        Only a token of this project and client, not used, not revoked and not expired at `at` is used up: the
        rules `RefreshTokenService._use` checks under the row's lock, here in the UPDATE's own WHERE (a concurrent
        UPDATE of the row is waited for, and its result re-checked). False changed nothing: the caller asks why.
        """
        row = await tx.fetchrow(
            f"WITH used AS ({_USE_UP} RETURNING user_id, family_id, scope)"
            " INSERT INTO userio_refresh_token (id, project_id, user_id, client_id, family_id, token_hash, scope,"
            " created_at, expires_at) SELECT $5, $1, user_id, $2, family_id, $6, scope, $4, $7 FROM used RETURNING id",
            *_use_up_arguments(rotation),
            new_id(),
            rotation.successor_hash,
            rotation.expires_at,
        )
        return row is not None

    def rotate_unused_sqlite(self, tx: BlockingTx, rotation: Rotation) -> bool:
        """SQLite, in the writer's thread (`Database.write_at_once`): `rotate_unused`, in two statements.

        SQLite has no UPDATE inside a WITH: the same UPDATE, then, when it used the token up, the successor copied
        from its row.
        """
        if tx.execute(_USE_UP, *_use_up_arguments(rotation)) != 1:
            return False
        tx.execute(
            "INSERT INTO userio_refresh_token (id, project_id, user_id, client_id, family_id, token_hash, scope,"
            " created_at, expires_at) SELECT $2, project_id, user_id, client_id, family_id, $3, scope, $4, $5"
            " FROM userio_refresh_token WHERE token_hash = $1",
            rotation.token_hash,
            new_id(),
            rotation.successor_hash,
            rotation.at,
            rotation.expires_at,
        )
        return True

    async def mark_used(self, tx: Tx, token_id: str, at: datetime) -> None:
        """The token was exchanged for its successor."""
        await tx.execute("UPDATE userio_refresh_token SET used_at = $2 WHERE id = $1", token_id, at)

    async def revoke_family(self, tx: Tx, family_id: str, at: datetime) -> None:
        """Every token of the family stops working."""
        await tx.run(
            RefreshToken.update({RefreshToken.revoked_at: at}).where(
                (RefreshToken.family_id == family_id) & RefreshToken.revoked_at.is_null()
            )
        )
