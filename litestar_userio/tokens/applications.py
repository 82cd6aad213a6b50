"""OAuth clients of a project. Whether a client gets JWT access tokens is its own setting.

See docs/reference.md#hooks-jwt-access-tokens.
"""

from __future__ import annotations

import re
import time

from litestar_userio.db.engine import Database
from litestar_userio.errors import InvalidSignInRequest
from litestar_userio.tokens.token_repository import ApplicationRecord, ApplicationRepository
from userio_core.attribute_formats import storable_text
from userio_core.clock import Clock

__all__ = ["ApplicationRecord", "ApplicationService", "refuse_unstorable_sign_in"]

_CLIENT_ID = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?")


def refuse_unstorable_sign_in(**parameters: str) -> None:
    """`InvalidSignInRequest` (RFC 6749 `invalid_request`) naming the first token-request parameter holding U+0000.

    No login id or client id holds it (the one rule, `userio_core.attribute_formats.storable_text`), and PostgreSQL
    refuses the query that would look for one: refused here, before any lookup, on every deployment alike.
    """
    for name, value in parameters.items():
        if not storable_text(value):
            raise InvalidSignInRequest(f"{name} must not contain U+0000 (NUL)")


class ApplicationService:
    """Reads and writes a project's applications."""

    def __init__(self, db: Database, clock: Clock, cache_ttl: float = 2.0) -> None:
        self.db = db
        self.clock = clock
        self.cache_ttl = cache_ttl
        self.repository = ApplicationRepository()
        self._cache: dict[tuple[str, str], tuple[float, ApplicationRecord | None]] = {}

    async def create(
        self,
        project_id: str,
        client_id: str,
        *,
        issue_jwt_access_token: bool,
        name: str | None = None,
        access_token_lifetime: int = 1800,
    ) -> ApplicationRecord:
        """Register a client; its id is unique within the project.

        ValueError for an id no token request could carry: empty, spaces at its ends, or beyond RFC 6749's
        printable ASCII (`VSCHAR`), or longer than 255 characters.
        """
        if not _CLIENT_ID.fullmatch(client_id):
            raise ValueError(
                f"invalid client id {client_id!r}: 1-255 printable ASCII characters, no spaces at either end"
            )
        application = ApplicationRecord(client_id, name, issue_jwt_access_token, access_token_lifetime)
        async with self.db.transaction() as tx:
            await self.repository.add(tx, project_id, application, self.clock.now())
        self._cache.pop((project_id, client_id), None)
        return application

    async def get(self, project_id: str, client_id: str) -> ApplicationRecord | None:
        """The client, or None; a process reuses what it read for `cache_ttl` seconds (every token asks)."""
        cached = self._cache.get((project_id, client_id))
        if cached is not None and time.monotonic() - cached[0] < self.cache_ttl:
            return cached[1]
        async with self.db.reader() as tx:
            application = await self.repository.get(tx, project_id, client_id)
        self._cache[(project_id, client_id)] = (time.monotonic(), application)
        return application

    async def client_ids(self, project_id: str, limit: int = 20) -> list[str]:
        """Up to `limit` of the project's client ids, in order."""
        async with self.db.reader() as tx:
            return await self.repository.client_ids(tx, project_id, limit)

    async def all(self, project_id: str) -> list[ApplicationRecord]:
        """The project's clients, by client id."""
        async with self.db.reader() as tx:
            return await self.repository.all(tx, project_id)
