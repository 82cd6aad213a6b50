"""Every query of a project's hooks: the hook list, its settings and versions, secrets, and the run log."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from piccolo.custom_types import Combinable
from piccolo.querystring import QueryString

from litestar_userio.db.engine import Row, Tx
from litestar_userio.db.tables import Hook, HookRunRecord, HookSecret, HookSettings, HookVersion

__all__ = ["HookRepository", "HookRow", "RunRow", "VersionRow"]


@dataclass(frozen=True)
class HookRow:
    """A stored hook."""

    event: str
    source: str
    javascript: str
    source_id: str
    on_error: str


@dataclass(frozen=True)
class VersionRow:
    """A saved version; `body` is empty when versions are listed."""

    version: int
    created_at: datetime
    actor_kid: str | None
    actor_sub: str | None
    body: dict[str, Any]


@dataclass(frozen=True)
class RunRow:
    """One entry of the run log (the columns of `userio_hook_run` but the project)."""

    event: str
    hook_index: int
    started_at: datetime
    duration_ms: float
    outcome: str
    error_kind: str | None
    console: list[dict[str, str]]
    claims_added: list[str]
    sampled_rate: float


def _datetime(value: Any) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def _next_version() -> QueryString:
    """The stored version plus one, table-qualified: beside `EXCLUDED`, PostgreSQL finds a bare column ambiguous."""
    return QueryString(f"{HookSettings.version._meta.get_full_name(with_alias=False)} + 1")


class HookRepository:
    """Queries of the hook tables; each method runs in the caller's transaction."""

    async def hooks(self, tx: Tx, project_id: str) -> list[HookRow]:
        """The project's hooks in their saved order."""
        rows = await tx.run(
            Hook.select(Hook.event, Hook.source, Hook.javascript, Hook.source_id, Hook.on_error)
            .where(Hook.project == project_id)
            .order_by(Hook.position)
        )
        return [
            HookRow(r["event"], r["source"], r["javascript"], r["source_id"], r["on_error"] or "deny") for r in rows
        ]

    async def replace_hooks(self, tx: Tx, project_id: str, hooks: Sequence[HookRow], now: datetime) -> None:
        """Replace the whole ordered list."""
        await tx.run(Hook.delete().where(Hook.project == project_id))
        await tx.insert(
            Hook,
            *(
                {
                    "project": project_id,
                    "position": position,
                    "event": h.event,
                    "source": h.source,
                    "javascript": h.javascript,
                    "source_id": h.source_id,
                    "on_error": h.on_error,
                    "created_at": now,
                }
                for position, h in enumerate(hooks)
            ),
        )

    async def allowlist(self, tx: Tx, project_id: str) -> list[str]:
        """The saved fetch allowlist (empty when never saved)."""
        row = await tx.first(
            HookSettings.select(HookSettings.fetch_allowlist).where(HookSettings.project == project_id)
        )
        return list(json.loads(row["fetch_allowlist"])) if row is not None else []

    async def add_version(
        self,
        tx: Tx,
        project_id: str,
        body: dict[str, Any],
        allowlist: Sequence[str],
        actor: tuple[str | None, str | None],
        now: datetime,
    ) -> int:
        """Save the settings and record `body` as the next version; returns its number.

        The settings row is updated in place first, so concurrent saves queue on its lock (PostgreSQL) or on the
        single writer (SQLite) and never take the same number.
        """
        fetch_allowlist = json.dumps(list(allowlist))
        row = await tx.first(
            lambda: (
                HookSettings.insert(
                    HookSettings(project=project_id, fetch_allowlist=fetch_allowlist, version=1, updated_at=now)
                )
                .on_conflict(
                    target=HookSettings.project,
                    action="DO UPDATE",
                    values=[
                        HookSettings.fetch_allowlist,
                        (HookSettings.version, _next_version()),
                        HookSettings.updated_at,
                    ],
                )
                .returning(HookSettings.version)
            )
        )
        assert row is not None
        version = int(row["version"])
        await tx.insert(
            HookVersion,
            {
                "project": project_id,
                "version": version,
                "created_at": now,
                "actor_kid": actor[0],
                "actor_sub": actor[1],
                "body": json.dumps(body),
            },
        )
        return version

    async def versions(self, tx: Tx, project_id: str) -> list[VersionRow]:
        """Every version, newest first, without bodies."""
        rows = await tx.run(
            HookVersion.select(
                HookVersion.version, HookVersion.created_at, HookVersion.actor_kid, HookVersion.actor_sub
            )
            .where(HookVersion.project == project_id)
            .order_by(HookVersion.version, ascending=False)
        )
        return [VersionRow(r["version"], _datetime(r["created_at"]), r["actor_kid"], r["actor_sub"], {}) for r in rows]

    async def version(self, tx: Tx, project_id: str, version: int) -> VersionRow | None:
        """One version with its body."""
        row = await tx.first(
            HookVersion.select(
                HookVersion.version,
                HookVersion.created_at,
                HookVersion.actor_kid,
                HookVersion.actor_sub,
                HookVersion.body,
            ).where((HookVersion.project == project_id) & (HookVersion.version == version))
        )
        if row is None:
            return None
        return VersionRow(
            row["version"], _datetime(row["created_at"]), row["actor_kid"], row["actor_sub"], json.loads(row["body"])
        )

    async def put_secret(self, tx: Tx, project_id: str, name: str, sealed: str, now: datetime) -> None:
        """Insert or replace a sealed secret."""
        await tx.run(
            lambda: HookSecret.insert(
                HookSecret(project=project_id, name=name, ciphertext=sealed, updated_at=now)
            ).on_conflict(
                target=(HookSecret.project, HookSecret.name),
                action="DO UPDATE",
                values=[HookSecret.ciphertext, HookSecret.updated_at],
            )
        )

    async def delete_secret(self, tx: Tx, project_id: str, name: str) -> bool:
        """Whether a secret of that name was there to delete."""
        row = await tx.first(
            HookSecret.delete()
            .where((HookSecret.project == project_id) & (HookSecret.name == name))
            .returning(HookSecret.name)
        )
        return row is not None

    async def secrets(self, tx: Tx, project_id: str) -> list[Row]:
        """`name`, `ciphertext` and `updated_at` of each secret, by name."""
        rows = await tx.run(
            HookSecret.select(HookSecret.name, HookSecret.ciphertext, HookSecret.updated_at)
            .where(HookSecret.project == project_id)
            .order_by(HookSecret.name)
        )
        return [{**r, "updated_at": _datetime(r["updated_at"])} for r in rows]

    async def add_runs(self, tx: Tx, runs: Sequence[tuple[str, RunRow]]) -> None:
        """Append run log entries (project id, entry): a batch per flush, so COPY rather than a Piccolo insert."""
        await tx.insert_many(
            "userio_hook_run",
            (
                "project_id",
                "event",
                "hook_index",
                "started_at",
                "duration_ms",
                "outcome",
                "error_kind",
                "console",
                "claims_added",
                "sampled_rate",
            ),
            [
                (
                    project_id,
                    r.event,
                    r.hook_index,
                    r.started_at,
                    r.duration_ms,
                    r.outcome,
                    r.error_kind,
                    json.dumps(r.console),
                    json.dumps(r.claims_added),
                    r.sampled_rate,
                )
                for project_id, r in runs
            ],
        )

    async def runs(self, tx: Tx, project_id: str, limit: int, before: int | None) -> list[tuple[int, RunRow]]:
        """Newest first: up to `limit` entries older than the entry `before` (an id), with their ids."""
        run = HookRunRecord
        where: Combinable = run.project == project_id
        if before is not None:
            where &= run.id < before
        rows = await tx.run(
            run.select(
                run.id,
                run.event,
                run.hook_index,
                run.started_at,
                run.duration_ms,
                run.outcome,
                run.error_kind,
                run.console,
                run.claims_added,
                run.sampled_rate,
            )
            .where(where)
            .order_by(run.id, ascending=False)
            .limit(limit)
        )
        return [
            (
                int(r["id"]),
                RunRow(
                    r["event"],
                    r["hook_index"],
                    _datetime(r["started_at"]),
                    float(r["duration_ms"]),
                    r["outcome"],
                    r["error_kind"],
                    json.loads(r["console"]),
                    json.loads(r["claims_added"]),
                    float(r["sampled_rate"]),
                ),
            )
            for r in rows
        ]

    async def purge_runs(self, tx: Tx, before: datetime) -> None:
        """Drop run log entries that started before `before`."""
        await tx.run(HookRunRecord.delete().where(HookRunRecord.started_at < before))
