"""Per-project RS256 signing keys: one active (signs), every unretired one published in the JWKS (rotation)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

from litestar_userio.db.engine import Database
from litestar_userio.tokens.token_repository import SigningKeyRepository, StoredKey
from userio_core.admin_keys import KeyPair, generate_key_pair, load_private_key
from userio_core.clock import Clock

__all__ = ["ActiveKey", "SigningKeyStore"]


class ActiveKey:
    """The key that signs now."""

    def __init__(self, kid: str, private_key: RSAPrivateKey) -> None:
        self.kid = kid
        self.private_key = private_key


class SigningKeyStore:
    """Creates, rotates and publishes a project's token signing keys."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self.repository = SigningKeyRepository()
        self._active: dict[str, ActiveKey] = {}
        self._first_use: dict[str, asyncio.Lock] = {}

    async def active(self, project_id: str) -> ActiveKey:
        """The project's signing key, made on first use; cached (loading a PEM costs ~48 ms, NOTES)."""
        cached = self._active.get(project_id)
        if cached is not None:
            return cached
        # A burst of a new project's first sign-ins made one key each, in transactions that deadlocked on each
        # other's rows (a 500): one of them makes the key, the others wait for it.
        async with self._first_use.setdefault(project_id, asyncio.Lock()):
            cached = self._active.get(project_id)
            if cached is not None:
                return cached
            async with self.db.reader() as tx:
                stored = await self.repository.active(tx, project_id)
            if stored is None:
                return await self._first_key(project_id)
            return self._remember(project_id, stored.kid, load_private_key(stored.private_key_pem))

    async def _first_key(self, project_id: str) -> ActiveKey:
        """The project's first key, made once across processes: the project's row is locked while it is made."""
        pair, public_jwk = await _new_pair()
        async with self.db.transaction() as tx:
            await self.repository.lock_project(tx, project_id)
            stored = await self.repository.active(tx, project_id)
            if stored is None:
                await self.repository.add_active(
                    tx, project_id, StoredKey(pair.kid, pair.private_pem), public_jwk, self.clock.now()
                )
        if stored is not None:  # another process made it first
            return self._remember(project_id, stored.kid, load_private_key(stored.private_key_pem))
        return self._remember(project_id, pair.kid, pair.private_key)

    async def rotate(self, project_id: str) -> ActiveKey:
        """Make a new active key; the previous ones stay published so tokens they signed still verify."""
        pair, public_jwk = await _new_pair()
        async with self.db.transaction() as tx:
            await self.repository.lock_project(tx, project_id)
            await self.repository.deactivate_all(tx, project_id)
            await self.repository.add_active(
                tx, project_id, StoredKey(pair.kid, pair.private_pem), public_jwk, self.clock.now()
            )
        return self._remember(project_id, pair.kid, pair.private_key)

    def _remember(self, project_id: str, kid: str, private_key: RSAPrivateKey) -> ActiveKey:
        """The project's signing key from now on (the cache every token reads)."""
        key = ActiveKey(kid, private_key)
        self._active[project_id] = key
        return key

    async def retire(self, project_id: str, kid: str) -> None:
        """Stop publishing a key that is no longer active (tokens it signed stop verifying)."""
        async with self.db.transaction() as tx:
            await self.repository.retire(tx, project_id, kid, self.clock.now())

    async def jwks(self, project_id: str) -> dict[str, Any]:
        """The JWK Set of the project's published keys, the active one first."""
        await self.active(project_id)
        async with self.db.reader() as tx:
            keys = await self.repository.published_jwks(tx, project_id)
        return {"keys": keys}


async def _new_pair() -> tuple[KeyPair, dict[str, Any]]:
    """A new RSA key pair and the JWK that publishes its public half.

    Made in a thread: generating the key takes ~70 ms, during which the event loop would serve no other request
    (cryptography releases the GIL while it works).
    """
    pair = await asyncio.to_thread(generate_key_pair)
    public_jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(pair.private_key.public_key()))
    public_jwk.update({"kid": pair.kid, "use": "sig", "alg": "RS256"})
    return pair, public_jwk
