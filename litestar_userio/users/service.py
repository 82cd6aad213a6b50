"""User-facing operations the host's own endpoints call: signing in with an imported password."""

from __future__ import annotations

import asyncio

import bcrypt

from litestar_userio.db.engine import Database, Row
from litestar_userio.users.formats import LOGIN_ID_ATTRIBUTES, normalize_login_id

__all__ = ["UserService"]

_BCRYPT_MAX_BYTES = 72


class UserService:
    """Users of a project, as the host's sign-in sees them."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._dummy_hashes: dict[str, bytes] = {}

    async def verify_password(self, project_id: str, login_id: str, password: str) -> str | None:
        """The user id when `password` matches the user's primary password, else None.

        An unknown login id, or a user without a password, costs the same bcrypt work as a wrong password
        (a dummy hash of the project's usual cost), so timing does not tell which login ids exist.
        bcrypt compares only the first 72 bytes, as the systems the hashes come from did.
        """
        row = await self._password_row(project_id, login_id)
        candidate = password.encode()[:_BCRYPT_MAX_BYTES]
        if row is None or row["password_hash"] is None:
            await asyncio.to_thread(bcrypt.checkpw, candidate, await self._dummy_hash(project_id))
            return None
        stored = row["password_hash"].encode()
        try:
            ok = await asyncio.to_thread(bcrypt.checkpw, candidate, stored)
        except ValueError:
            ok = False
        return row["user_id"] if ok else None

    async def _password_row(self, project_id: str, login_id: str) -> Row | None:
        args: list[str] = [project_id]
        clauses = []
        for attribute, key in LOGIN_ID_ATTRIBUTES.items():
            args += [key, normalize_login_id(attribute, login_id)]
            clauses.append(f"(i.login_id_key = ${len(args) - 1} AND i.normalized_value = ${len(args)})")
        async with self.db.reader() as tx:
            return await tx.fetchrow(
                "SELECT i.user_id, a.password_hash FROM userio_identity i"
                " LEFT JOIN userio_authenticator a"
                " ON a.user_id = i.user_id AND a.kind = 'primary' AND a.type = 'password'"
                f" WHERE i.project_id = $1 AND ({' OR '.join(clauses)}) LIMIT 1",
                *args,
            )

    async def _dummy_hash(self, project_id: str) -> bytes:
        if project_id not in self._dummy_hashes:
            async with self.db.reader() as tx:
                row = await tx.fetchrow(
                    "SELECT password_hash FROM userio_authenticator WHERE project_id = $1 AND kind = 'primary'"
                    " AND type = 'password' LIMIT 1",
                    project_id,
                )
            cost = int(row["password_hash"][4:6]) if row and row["password_hash"] else 10
            salt = bcrypt.gensalt(rounds=min(max(cost, 4), 31))
            self._dummy_hashes[project_id] = await asyncio.to_thread(bcrypt.hashpw, b"userio-dummy", salt)
        return self._dummy_hashes[project_id]
