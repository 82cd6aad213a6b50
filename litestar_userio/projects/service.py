"""Projects and what belongs to them: domains, admin API keys, settings, roles, groups, custom attributes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import msgspec

from litestar_userio.clock import Clock
from litestar_userio.db.engine import Database, Tx
from litestar_userio.ids import new_id
from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.users.custom_attributes import CustomAttributeSpec

__all__ = ["ProjectRecord", "ProjectService", "normalize_host"]


@dataclass(frozen=True)
class ProjectRecord:
    """A project as the request handlers see it."""

    id: str
    settings: ProjectSettings


def normalize_host(host: str) -> str:
    """The domain of a Host header: lower case, without the port (`localhost:8443` -> `localhost`)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _settings(raw: Any) -> ProjectSettings:
    if isinstance(raw, str | bytes):
        return msgspec.json.decode(raw, type=ProjectSettings)
    return msgspec.convert(raw or {}, ProjectSettings)


class ProjectService:
    """Reads and writes projects; used by the admin auth, the CLI and the jobs."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    async def create(
        self, project_id: str, domains: Iterable[str], settings: ProjectSettings | None = None
    ) -> ProjectRecord:
        """Create a project with its domains; fails if the id or a domain is taken."""
        settings = settings or ProjectSettings()
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO userio_project (id, created_at, settings) VALUES ($1, $2, $3)",
                project_id,
                self.clock.now(),
                msgspec.json.encode(settings).decode(),
            )
            for domain in domains:
                await tx.execute(
                    "INSERT INTO userio_project_domain (domain, project_id) VALUES ($1, $2)",
                    normalize_host(domain),
                    project_id,
                )
        return ProjectRecord(project_id, settings)

    @asynccontextmanager
    async def _reading(self, tx: Tx | None) -> AsyncIterator[Tx]:
        if tx is not None:
            yield tx
        else:
            async with self.db.reader() as reader:
                yield reader

    async def get(self, project_id: str, tx: Tx | None = None) -> ProjectRecord | None:
        """The project, or None."""
        async with self._reading(tx) as reader:
            row = await reader.fetchrow("SELECT id, settings FROM userio_project WHERE id = $1", project_id)
        return ProjectRecord(row["id"], _settings(row["settings"])) if row else None

    async def by_host(self, host: str) -> ProjectRecord | None:
        """The project a Host header names (SPEC 5.4), or None."""
        async with self.db.reader() as reader:
            row = await reader.fetchrow(
                "SELECT p.id, p.settings FROM userio_project_domain d JOIN userio_project p ON p.id = d.project_id"
                " WHERE d.domain = $1",
                normalize_host(host),
            )
        return ProjectRecord(row["id"], _settings(row["settings"])) if row else None

    async def update_settings(self, project_id: str, **changes: Any) -> ProjectRecord:
        """Change some settings of a project."""
        async with self.db.transaction() as tx:
            project = await self.get(project_id, tx)
            if project is None:
                raise LookupError(project_id)
            settings = msgspec.structs.replace(project.settings, **changes)
            await tx.execute(
                "UPDATE userio_project SET settings = $2 WHERE id = $1",
                project_id,
                msgspec.json.encode(settings).decode(),
            )
        return ProjectRecord(project_id, settings)

    async def add_admin_key(self, project_id: str, kid: str, public_key_pem: str) -> None:
        """Trust a public key for the project's Admin API JWTs (several allow rotation)."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO userio_admin_api_key (kid, project_id, public_key_pem, created_at)"
                " VALUES ($1, $2, $3, $4)",
                kid,
                project_id,
                public_key_pem,
                self.clock.now(),
            )

    async def admin_keys(self, project_id: str) -> dict[str, str]:
        """Map each key id to its public key PEM."""
        async with self.db.reader() as reader:
            rows = await reader.fetch(
                "SELECT kid, public_key_pem FROM userio_admin_api_key WHERE project_id = $1", project_id
            )
        return {r["kid"]: r["public_key_pem"] for r in rows}

    async def add_keys(self, project_id: str, table: str, keys: Iterable[str]) -> list[str]:
        """Define role or group keys (`table` is `userio_role` or `userio_group`); returns the ones added."""
        if table not in {"userio_role", "userio_group"}:
            raise ValueError(table)
        added = []
        async with self.db.transaction() as tx:
            for key in keys:
                existing = await tx.fetchrow(
                    f"SELECT id FROM {table} WHERE project_id = $1 AND key = $2", project_id, key
                )
                if existing is None:
                    await tx.execute(
                        f"INSERT INTO {table} (id, project_id, key, name, created_at) VALUES ($1, $2, $3, NULL, $4)",
                        new_id(),
                        project_id,
                        key,
                        self.clock.now(),
                    )
                    added.append(key)
        return added

    async def declare_custom_attribute(self, project_id: str, spec: CustomAttributeSpec) -> None:
        """Declare (or redeclare) a custom attribute; declared ones are checked on import."""
        constraints = {k: v for k in ("minimum", "maximum", "enum") if (v := getattr(spec, k)) is not None}
        async with self.db.transaction() as tx:
            row = await tx.fetchrow(
                "SELECT COUNT(*) AS n FROM userio_custom_attribute WHERE project_id = $1", project_id
            )
            await tx.execute(
                "DELETE FROM userio_custom_attribute WHERE project_id = $1 AND name = $2", project_id, spec.name
            )
            await tx.execute(
                "INSERT INTO userio_custom_attribute (project_id, name, type, constraints, position)"
                " VALUES ($1, $2, $3, $4, $5)",
                project_id,
                spec.name,
                spec.type,
                json.dumps(constraints),
                row["n"] if row else 0,
            )

    async def custom_schema(self, project_id: str, tx: Tx | None = None) -> dict[str, CustomAttributeSpec]:
        """Declared custom attributes in declaration order; empty when the project declares none."""
        async with self._reading(tx) as reader:
            rows = await reader.fetch(
                "SELECT name, type, constraints FROM userio_custom_attribute WHERE project_id = $1 ORDER BY position",
                project_id,
            )
        return {
            r["name"]: msgspec.convert(
                {"name": r["name"], "type": r["type"], **json.loads(r["constraints"] or "{}")}, CustomAttributeSpec
            )
            for r in rows
        }

    async def domain_owner(self, domain: str) -> str | None:
        """The project a domain already selects, or None."""
        async with self.db.reader() as reader:
            row = await reader.fetchrow(
                "SELECT project_id FROM userio_project_domain WHERE domain = $1", normalize_host(domain)
            )
        return str(row["project_id"]) if row else None

    async def list_projects(self) -> list[tuple[str, list[str]]]:
        """Every project id with its domains, by id."""
        async with self.db.reader() as reader:
            projects = await reader.fetch("SELECT id FROM userio_project ORDER BY id")
            domains = await reader.fetch("SELECT domain, project_id FROM userio_project_domain ORDER BY domain")
        by_project: dict[str, list[str]] = {str(p["id"]): [] for p in projects}
        for row in domains:
            by_project.setdefault(str(row["project_id"]), []).append(str(row["domain"]))
        return list(by_project.items())

    async def list_keys(self, project_id: str, table: str) -> list[str]:
        """The role or group keys of a project (`table` is `userio_role` or `userio_group`), sorted."""
        if table not in {"userio_role", "userio_group"}:
            raise ValueError(table)
        async with self.db.reader() as reader:
            rows = await reader.fetch(f"SELECT key FROM {table} WHERE project_id = $1 ORDER BY key", project_id)
        return [str(r["key"]) for r in rows]
