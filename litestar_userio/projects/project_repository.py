"""Every query of a project: its row and settings, domains, Admin API keys, role and group keys, custom attributes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

import msgspec

from litestar_userio.db.engine import Tx
from litestar_userio.db.tables import AdminAPIKey, CustomAttribute, Group, Project, ProjectDomain, Role
from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.users.custom_attributes import CustomAttributeSpec
from litestar_userio.users.user_repository import UserRepository

__all__ = ["KEY_TABLES", "KeyTable", "ProjectRecord", "ProjectRepository"]

KeyTable = Literal["userio_role", "userio_group"]
KEY_TABLES: frozenset[str] = frozenset(get_args(KeyTable))
"""The tables of role and group keys, the only names `add_keys` and `keys` accept."""

_KEY_TABLES: dict[KeyTable, type[Role] | type[Group]] = {"userio_role": Role, "userio_group": Group}
_CONSTRAINTS = ("minimum", "maximum", "enum")


@dataclass(frozen=True)
class ProjectRecord:
    """A project as the request handlers see it."""

    id: str
    settings: ProjectSettings


def _settings(raw: Any) -> ProjectSettings:
    """The stored settings; a null reads as the default (every nullable setting's default is null).

    `project configure --set NAME` without `=VALUE` used to store null even for a true/false setting, and the project
    could then not be read at all; such a value reads as the default now.
    """
    stored = msgspec.json.decode(raw) if isinstance(raw, str | bytes) else raw or {}
    return msgspec.convert({k: v for k, v in stored.items() if v is not None}, ProjectSettings)


def _dump(settings: ProjectSettings) -> str:
    return msgspec.json.encode(settings).decode()


class ProjectRepository:
    """SQL of the project tables; each method runs in the caller's transaction or reader."""

    def __init__(self) -> None:
        self.users = UserRepository()
        """Role and group rows are written in one place, the users repository (the import creates them too)."""

    async def add(self, tx: Tx, project: ProjectRecord, domains: Iterable[str], now: datetime) -> None:
        """Insert a project with its (already normalized) domains; a taken id or domain is a `WriteConflict`."""
        await tx.insert(Project, {"id": project.id, "created_at": now, "settings": _dump(project.settings)})
        await tx.insert(ProjectDomain, *({"domain": domain, "project": project.id} for domain in domains))

    # `get`, `by_domain` and `admin_keys` run on every admin request and every chunk: plain SQL, as building and
    # compiling their Piccolo queries cost 0.2-0.35 ms of CPU per call, several times the round trip.

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
        row = await tx.first(ProjectDomain.select(ProjectDomain.project).where(ProjectDomain.domain == domain))
        return str(row["project_id"]) if row else None

    async def save_settings(self, tx: Tx, project_id: str, settings: ProjectSettings) -> None:
        """Replace the project's settings."""
        await tx.run(Project.update({Project.settings: _dump(settings)}).where(Project.id == project_id))

    async def all_with_domains(self, tx: Tx) -> list[tuple[str, list[str]]]:
        """Every project id with its domains, by id."""
        projects = await tx.run(Project.select(Project.id).order_by(Project.id))
        domains = await tx.run(
            ProjectDomain.select(ProjectDomain.domain, ProjectDomain.project).order_by(ProjectDomain.domain)
        )
        by_project: dict[str, list[str]] = {str(p["id"]): [] for p in projects}
        for row in domains:
            by_project.setdefault(str(row["project_id"]), []).append(str(row["domain"]))
        return list(by_project.items())

    async def add_admin_key(self, tx: Tx, project_id: str, kid: str, public_key_pem: str, now: datetime) -> None:
        """Trust one more public key for the project's Admin API JWTs."""
        await tx.insert(
            AdminAPIKey, {"kid": kid, "project": project_id, "public_key_pem": public_key_pem, "created_at": now}
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
        keys = _KEY_TABLES[table]
        rows = await tx.run(keys.select(keys.key).where(keys.project == project_id).order_by(keys.key))
        return [str(r["key"]) for r in rows]

    async def put_custom_attribute(self, tx: Tx, project_id: str, spec: CustomAttributeSpec) -> None:
        """Declare a custom attribute, or replace its declaration; either way it becomes the last declared."""
        constraints = {k: v for k in _CONSTRAINTS if (v := getattr(spec, k)) is not None}
        declared = await tx.first(CustomAttribute.count().where(CustomAttribute.project == project_id))
        await tx.run(
            CustomAttribute.delete().where(
                (CustomAttribute.project == project_id) & (CustomAttribute.name == spec.name)
            )
        )
        await tx.insert(
            CustomAttribute,
            {
                "project": project_id,
                "name": spec.name,
                "type": spec.type,
                "constraints": json.dumps(constraints),
                "position": declared["count"] if declared else 0,
            },
        )

    async def custom_attributes(self, tx: Tx, project_id: str) -> dict[str, CustomAttributeSpec]:
        """The declared custom attributes by name, in declaration order."""
        rows = await tx.run(
            CustomAttribute.select(CustomAttribute.name, CustomAttribute.type, CustomAttribute.constraints)
            .where(CustomAttribute.project == project_id)
            .order_by(CustomAttribute.position)
        )
        return {
            r["name"]: msgspec.convert(
                {"name": r["name"], "type": r["type"], **json.loads(r["constraints"] or "{}")}, CustomAttributeSpec
            )
            for r in rows
        }
