"""Projects and what belongs to them: domains, admin API keys, settings, roles, groups, custom attributes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any, cast

import msgspec

from litestar_userio.clock import Clock
from litestar_userio.db.engine import Database, Tx
from litestar_userio.projects.repository import KEY_TABLES, KeyTable, ProjectRecord, ProjectRepository
from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.users.custom_attributes import CustomAttributeSpec

__all__ = ["ProjectRecord", "ProjectService", "normalize_host"]


def normalize_host(host: str) -> str:
    """The domain of a Host header: lower case, without the port (`localhost:8443` -> `localhost`)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _key_table(table: str) -> KeyTable:
    """`table` if it names the role or group keys; anything else is a caller's mistake."""
    if table not in KEY_TABLES:
        raise ValueError(table)
    return cast(KeyTable, table)


class ProjectService:
    """Reads and writes projects; used by the admin auth, the CLI and the jobs."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self.repository = ProjectRepository()

    @asynccontextmanager
    async def _reading(self, tx: Tx | None) -> AsyncIterator[Tx]:
        """The caller's transaction when there is one, else a reader."""
        if tx is not None:
            yield tx
        else:
            async with self.db.reader() as reader:
                yield reader

    async def create(
        self, project_id: str, domains: Iterable[str], settings: ProjectSettings | None = None
    ) -> ProjectRecord:
        """Create a project with its domains; fails if the id or a domain is taken."""
        project = ProjectRecord(project_id, settings or ProjectSettings())
        async with self.db.transaction() as tx:
            await self.repository.add(tx, project, [normalize_host(d) for d in domains], self.clock.now())
        return project

    async def get(self, project_id: str, tx: Tx | None = None) -> ProjectRecord | None:
        """The project, or None."""
        async with self._reading(tx) as reader:
            return await self.repository.get(reader, project_id)

    async def by_host(self, host: str) -> ProjectRecord | None:
        """The project a Host header names (SPEC 5.4), or None."""
        async with self.db.reader() as reader:
            return await self.repository.by_domain(reader, normalize_host(host))

    async def update_settings(self, project_id: str, **changes: Any) -> ProjectRecord:
        """Change some settings of a project."""
        async with self.db.transaction() as tx:
            project = await self.repository.get(tx, project_id)
            if project is None:
                raise LookupError(project_id)
            settings = msgspec.structs.replace(project.settings, **changes)
            await self.repository.save_settings(tx, project_id, settings)
        return ProjectRecord(project_id, settings)

    async def add_admin_key(self, project_id: str, kid: str, public_key_pem: str) -> None:
        """Trust a public key for the project's Admin API JWTs (several allow rotation)."""
        async with self.db.transaction() as tx:
            await self.repository.add_admin_key(tx, project_id, kid, public_key_pem, self.clock.now())

    async def admin_keys(self, project_id: str) -> dict[str, str]:
        """Map each key id to its public key PEM."""
        async with self.db.reader() as reader:
            return await self.repository.admin_keys(reader, project_id)

    async def add_keys(self, project_id: str, table: str, keys: Iterable[str]) -> list[str]:
        """Define role or group keys (`table` is `userio_role` or `userio_group`); returns the ones added."""
        key_table = _key_table(table)
        async with self.db.transaction() as tx:
            return await self.repository.add_keys(tx, project_id, key_table, list(keys), self.clock.now())

    async def declare_custom_attribute(self, project_id: str, spec: CustomAttributeSpec) -> None:
        """Declare (or redeclare) a custom attribute; declared ones are checked on import."""
        async with self.db.transaction() as tx:
            await self.repository.put_custom_attribute(tx, project_id, spec)

    async def custom_schema(self, project_id: str, tx: Tx | None = None) -> dict[str, CustomAttributeSpec]:
        """Declared custom attributes in declaration order; empty when the project declares none."""
        async with self._reading(tx) as reader:
            return await self.repository.custom_attributes(reader, project_id)

    async def domain_owner(self, domain: str) -> str | None:
        """The project a domain already selects, or None."""
        async with self.db.reader() as reader:
            return await self.repository.domain_owner(reader, normalize_host(domain))

    async def list_projects(self) -> list[tuple[str, list[str]]]:
        """Every project id with its domains, by id."""
        async with self.db.reader() as reader:
            return await self.repository.all_with_domains(reader)

    async def list_keys(self, project_id: str, table: str) -> list[str]:
        """The role or group keys of a project (`table` is `userio_role` or `userio_group`), sorted."""
        key_table = _key_table(table)
        async with self.db.reader() as reader:
            return await self.repository.keys(reader, project_id, key_table)
