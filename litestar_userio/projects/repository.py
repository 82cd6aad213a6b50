"""Every query of a project: its row and settings, domains, Admin API keys, role and group keys, custom attributes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

import msgspec

from litestar_userio.db.engine import Tx
from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.users.custom_attributes import CustomAttributeSpec
from litestar_userio.users.repository import UserRepository

__all__ = ["KEY_TABLES", "KeyTable", "ProjectRecord", "ProjectRepository"]

KeyTable = Literal["userio_role", "userio_group"]
KEY_TABLES: frozenset[str] = frozenset(get_args(KeyTable))
"""The tables of role and group keys, the only names `add_keys` and `keys` accept."""

_CONSTRAINTS = ("minimum", "maximum", "enum")


@dataclass(frozen=True)
class ProjectRecord:
    """A project as the request handlers see it."""

    id: str
    settings: ProjectSettings


def _settings(raw: Any) -> ProjectSettings:
    if isinstance(raw, str | bytes):
        return msgspec.json.decode(raw, type=ProjectSettings)
    return msgspec.convert(raw or {}, ProjectSettings)


def _dump(settings: ProjectSettings) -> str:
    return msgspec.json.encode(settings).decode()


class ProjectRepository:
    """SQL of the project tables; each method runs in the caller's transaction or reader."""

    def __init__(self) -> None:
        self.users = UserRepository()
        """Role and group rows are written in one place, the users repository (the import creates them too)."""

    async def add(self, tx: Tx, project: ProjectRecord, domains: Iterable[str], now: datetime) -> None:
        """Insert a project with its (already normalized) domains; a taken id or domain is a `WriteConflict`."""
        await tx.execute(
            "INSERT INTO userio_project (id, created_at, settings) VALUES ($1, $2, $3)",
            project.id,
            now,
            _dump(project.settings),
        )
        for domain in domains:
            await tx.execute(
                "INSERT INTO userio_project_domain (domain, project_id) VALUES ($1, $2)", domain, project.id
            )

    async def get(self, tx: Tx, project_id: str) -> ProjectRecord | None:
        """The project, or None."""
        row = await tx.fetchrow("SELECT id, settings FROM userio_project WHERE id = $1", project_id)
        return ProjectRecord(row["id"], _settings(row["settings"])) if row else None

    async def by_domain(self, tx: Tx, domain: str) -> ProjectRecord | None:
        """The project a (normalized) domain selects, or None."""
        row = await tx.fetchrow(
            "SELECT p.id, p.settings FROM userio_project_domain d JOIN userio_project p ON p.id = d.project_id"
            " WHERE d.domain = $1",
            domain,
        )
        return ProjectRecord(row["id"], _settings(row["settings"])) if row else None

    async def domain_owner(self, tx: Tx, domain: str) -> str | None:
        """The id of the project a (normalized) domain selects, or None."""
        row = await tx.fetchrow("SELECT project_id FROM userio_project_domain WHERE domain = $1", domain)
        return str(row["project_id"]) if row else None

    async def save_settings(self, tx: Tx, project_id: str, settings: ProjectSettings) -> None:
        """Replace the project's settings."""
        await tx.execute("UPDATE userio_project SET settings = $2 WHERE id = $1", project_id, _dump(settings))

    async def all_with_domains(self, tx: Tx) -> list[tuple[str, list[str]]]:
        """Every project id with its domains, by id."""
        projects = await tx.fetch("SELECT id FROM userio_project ORDER BY id")
        domains = await tx.fetch("SELECT domain, project_id FROM userio_project_domain ORDER BY domain")
        by_project: dict[str, list[str]] = {str(p["id"]): [] for p in projects}
        for row in domains:
            by_project.setdefault(str(row["project_id"]), []).append(str(row["domain"]))
        return list(by_project.items())

    async def add_admin_key(self, tx: Tx, project_id: str, kid: str, public_key_pem: str, now: datetime) -> None:
        """Trust one more public key for the project's Admin API JWTs."""
        await tx.execute(
            "INSERT INTO userio_admin_api_key (kid, project_id, public_key_pem, created_at) VALUES ($1, $2, $3, $4)",
            kid,
            project_id,
            public_key_pem,
            now,
        )

    async def admin_keys(self, tx: Tx, project_id: str) -> dict[str, str]:
        """Each key id with its public key PEM."""
        rows = await tx.fetch("SELECT kid, public_key_pem FROM userio_admin_api_key WHERE project_id = $1", project_id)
        return {r["kid"]: r["public_key_pem"] for r in rows}

    async def add_keys(self, tx: Tx, project_id: str, table: KeyTable, keys: Sequence[str], now: datetime) -> list[str]:
        """Add the role or group keys the project lacks; returns those, in the order given."""
        existing = await self.users.key_ids(tx, project_id, table, keys)
        added = [key for key in dict.fromkeys(keys) if key not in existing]
        await self.users.key_ids(tx, project_id, table, added, create_at=now)
        return added

    async def keys(self, tx: Tx, project_id: str, table: KeyTable) -> list[str]:
        """The project's role or group keys, sorted."""
        rows = await tx.fetch(f"SELECT key FROM {table} WHERE project_id = $1 ORDER BY key", project_id)
        return [str(r["key"]) for r in rows]

    async def put_custom_attribute(self, tx: Tx, project_id: str, spec: CustomAttributeSpec) -> None:
        """Declare a custom attribute, or replace its declaration; either way it becomes the last declared."""
        constraints = {k: v for k in _CONSTRAINTS if (v := getattr(spec, k)) is not None}
        row = await tx.fetchrow("SELECT COUNT(*) AS n FROM userio_custom_attribute WHERE project_id = $1", project_id)
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

    async def custom_attributes(self, tx: Tx, project_id: str) -> dict[str, CustomAttributeSpec]:
        """The declared custom attributes by name, in declaration order."""
        rows = await tx.fetch(
            "SELECT name, type, constraints FROM userio_custom_attribute WHERE project_id = $1 ORDER BY position",
            project_id,
        )
        return {
            r["name"]: msgspec.convert(
                {"name": r["name"], "type": r["type"], **json.loads(r["constraints"] or "{}")}, CustomAttributeSpec
            )
            for r in rows
        }
