"""OAuth clients of a project. Whether a client gets JWT access tokens is its own setting (SPEC 6.1 rule 4)."""

from __future__ import annotations

import time

import msgspec

from litestar_userio.clock import Clock
from litestar_userio.db.engine import Database

__all__ = ["ApplicationRecord", "ApplicationService"]


class ApplicationRecord(msgspec.Struct, frozen=True):
    """A client as the token service sees it."""

    client_id: str
    name: str | None
    issue_jwt_access_token: bool
    access_token_lifetime: int


class ApplicationService:
    """Reads and writes a project's applications."""

    def __init__(self, db: Database, clock: Clock, cache_ttl: float = 2.0) -> None:
        self.db = db
        self.clock = clock
        self.cache_ttl = cache_ttl
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
        """Register a client; its id is unique within the project."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO userio_application (project_id, client_id, name, issue_jwt_access_token,"
                " access_token_lifetime, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
                project_id,
                client_id,
                name,
                issue_jwt_access_token,
                access_token_lifetime,
                self.clock.now(),
            )
        self._cache.pop((project_id, client_id), None)
        return ApplicationRecord(client_id, name, issue_jwt_access_token, access_token_lifetime)

    async def get(self, project_id: str, client_id: str) -> ApplicationRecord | None:
        """The client, or None; a process reuses what it read for `cache_ttl` seconds (every token asks)."""
        cached = self._cache.get((project_id, client_id))
        if cached is not None and time.monotonic() - cached[0] < self.cache_ttl:
            return cached[1]
        application = await self._read(project_id, client_id)
        self._cache[(project_id, client_id)] = (time.monotonic(), application)
        return application

    async def _read(self, project_id: str, client_id: str) -> ApplicationRecord | None:
        async with self.db.reader() as tx:
            row = await tx.fetchrow(
                "SELECT client_id, name, issue_jwt_access_token, access_token_lifetime FROM userio_application"
                " WHERE project_id = $1 AND client_id = $2",
                project_id,
                client_id,
            )
        if row is None:
            return None
        return ApplicationRecord(
            row["client_id"], row["name"], bool(row["issue_jwt_access_token"]), row["access_token_lifetime"]
        )
