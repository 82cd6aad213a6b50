"""Projects and what belongs to them: domains, admin API keys, settings, roles, groups, custom attributes."""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any, cast

import idna
import msgspec

from litestar_userio.db.engine import Database, Tx
from litestar_userio.projects.project_repository import KEY_TABLES, KeyTable, ProjectRecord, ProjectRepository
from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.users.custom_attributes import CustomAttributeSpec, declaration_problems
from userio_core.attribute_formats import KEY_PATTERN
from userio_core.clock import Clock

__all__ = ["ProjectRecord", "ProjectService", "normalize_host", "project_domain"]

_KEY = re.compile(KEY_PATTERN)
_ASCII_HOST = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)(?:\.(?!-)[a-z0-9_-]{1,63}(?<!-))*")
"""Labels of letters, digits, `-` and `_` (a container's service name), dot-separated; none starts or ends with `-`."""


def normalize_host(host: str) -> str:
    """The domain of a Host header: lower case, without the port (`localhost:8443` -> `localhost`)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def project_domain(text: str) -> str:
    """A domain as a project stores it, the form a Host header arrives in; ValueError naming what is wrong.

    Lower case; an internationalized name in its ASCII form (`bücher.example` -> `xn--bcher-kva.example`, what
    browsers send); an IP address in its compressed form, IPv6 in brackets. A port is refused: the Host header's
    is ignored, so one here could never match.
    """
    host = text.strip().lower()
    literal = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        address = ipaddress.ip_address(literal)
    except ValueError:
        pass
    else:
        return f"[{address.compressed}]" if address.version == 6 else address.compressed
    if ":" in host:
        raise ValueError(f"domain {text!r}: give the host name without a port (a Host header's port is ignored)")
    if host.isascii():
        if len(host) <= 253 and _ASCII_HOST.fullmatch(host):
            return host
        raise ValueError(
            f"domain {text!r} is not a host name: labels of letters, digits, '-' and '_' separated by dots"
        )
    try:
        return idna.encode(host, uts46=True, transitional=False).decode("ascii")
    except (idna.IDNAError, UnicodeError) as exc:
        raise ValueError(f"domain {text!r} is not a host name: {exc}") from None


def _key_table(table: str) -> KeyTable:
    """`table` if it names the role or group keys; anything else is a caller's mistake."""
    if table not in KEY_TABLES:
        raise ValueError(table)
    return cast(KeyTable, table)


class ProjectService:
    """Reads and writes projects; used by the admin auth, the CLI and the jobs."""

    def __init__(self, db: Database, clock: Clock, cache_ttl: timedelta = timedelta(seconds=2)) -> None:
        self.db = db
        self.clock = clock
        self.cache_ttl = cache_ttl.total_seconds()
        """`UserIOConfig.project_cache_ttl`: how long `by_host` reuses a project it found."""
        self.repository = ProjectRepository()
        self._by_host: dict[str, tuple[float, ProjectRecord]] = {}
        """Domain -> (when read, the project): found projects only, so a project created elsewhere is seen at once."""
        self._writes = 0
        """Settings changes in this process: a `by_host` read that one overlapped keeps nothing (it may be older)."""

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
        """Create a project with its domains; fails if the id or a domain is taken, ValueError for a bad domain."""
        project = ProjectRecord(project_id, settings or ProjectSettings())
        stored = [project_domain(d) for d in domains]
        async with self.db.transaction() as tx:
            await self.repository.add(tx, project, stored, self.clock.now())
        return project

    async def get(self, project_id: str, tx: Tx | None = None) -> ProjectRecord | None:
        """The project, or None."""
        async with self._reading(tx) as reader:
            return await self.repository.get(reader, project_id)

    async def by_host(self, host: str) -> ProjectRecord | None:
        """The project a Host header names (docs/reference.md#authentication-projects-and-hosts), or None.

        Every request asks (the token endpoint, the admin API, SCIM, the JWKS): a project found is reused for
        `cache_ttl` (`UserIOConfig.project_cache_ttl`). A change of its settings through this service is seen at
        once; one made by another process (`userio project configure`) within `cache_ttl`. A host no project has
        is not remembered: a project created anywhere is found by the next request.
        """
        domain = normalize_host(host)
        cached = self._by_host.get(domain)
        if cached is not None and time.monotonic() - cached[0] < self.cache_ttl:
            return cached[1]
        writes, read_at = self._writes, time.monotonic()
        async with self.db.reader() as reader:
            project = await self.repository.by_domain(reader, domain)
        if project is None:
            self._by_host.pop(domain, None)
        elif self.cache_ttl > 0 and writes == self._writes:
            self._by_host[domain] = (read_at, project)
        return project

    def _forget(self, project_id: str) -> None:
        """What `by_host` remembers of the project (its settings changed in this process)."""
        self._writes += 1
        for domain in [d for d, (_, project) in self._by_host.items() if project.id == project_id]:
            del self._by_host[domain]

    async def update_settings(self, project_id: str, **changes: Any) -> ProjectRecord:
        """Change some settings of a project; ValueError naming a setting that does not exist or a wrong value."""
        async with self.db.transaction() as tx:
            project = await self.repository.get(tx, project_id)
            if project is None:
                raise LookupError(project_id)
            try:  # converted, not replaced: a value of the wrong type must not reach the stored settings
                settings = msgspec.convert({**msgspec.structs.asdict(project.settings), **changes}, ProjectSettings)
            except msgspec.ValidationError as exc:
                raise ValueError(f"invalid project settings: {exc}") from None
            await self.repository.save_settings(tx, project_id, settings)
        self._forget(project_id)
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
        """Define role or group keys (`table` is `userio_role` or `userio_group`); returns the ones added.

        ValueError for a key no record could name (`KEY_PATTERN`).
        """
        key_table = _key_table(table)
        keys = list(keys)
        if bad := [key for key in keys if not _KEY.fullmatch(key)]:
            raise ValueError(
                f"invalid keys {', '.join(map(repr, bad))}: a letter or '_', then up to 39 letters, digits, ':' or '_'"
            )
        async with self.db.transaction() as tx:
            return await self.repository.add_keys(tx, project_id, key_table, keys, self.clock.now())

    async def declare_custom_attribute(self, project_id: str, spec: CustomAttributeSpec) -> None:
        """Declare (or redeclare) a custom attribute; declared ones are checked on import.

        ValueError naming every problem of the declaration (`declaration_problems`).
        """
        if problems := declaration_problems(spec):
            raise ValueError(f"custom attribute {spec.name!r}: {'; '.join(problems)}")
        async with self.db.transaction() as tx:
            await self.repository.put_custom_attribute(tx, project_id, spec)

    async def custom_schema(self, project_id: str, tx: Tx | None = None) -> dict[str, CustomAttributeSpec]:
        """Declared custom attributes in declaration order; empty when the project declares none."""
        async with self._reading(tx) as reader:
            return await self.repository.custom_attributes(reader, project_id)

    async def domain_owner(self, domain: str) -> str | None:
        """The project a domain (as `project_domain` takes it) already selects, or None."""
        async with self.db.reader() as reader:
            return await self.repository.domain_owner(reader, project_domain(domain))

    async def list_projects(self) -> list[tuple[str, list[str]]]:
        """Every project id with its domains, by id."""
        async with self.db.reader() as reader:
            return await self.repository.all_with_domains(reader)

    async def list_keys(self, project_id: str, table: str) -> list[str]:
        """The role or group keys of a project (`table` is `userio_role` or `userio_group`), sorted."""
        key_table = _key_table(table)
        async with self.db.reader() as reader:
            return await self.repository.keys(reader, project_id, key_table)
