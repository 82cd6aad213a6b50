"""Every query of a project's hooks: the hook list, its settings and versions, secrets, and the run log."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from litestar_userio.db.engine import Row, Tx

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


class HookRepository:
    """SQL of the hook tables; each method runs in the caller's transaction."""

    async def hooks(self, tx: Tx, project_id: str) -> list[HookRow]:
        """The project's hooks in their saved order."""
        rows = await tx.fetch(
            "SELECT event, source, javascript, source_id, on_error FROM userio_hook WHERE project_id = $1"
            " ORDER BY position",
            project_id,
        )
        return [
            HookRow(r["event"], r["source"], r["javascript"], r["source_id"], r["on_error"] or "deny") for r in rows
        ]

    async def replace_hooks(self, tx: Tx, project_id: str, hooks: Sequence[HookRow], now: datetime) -> None:
        """Replace the whole ordered list."""
        await tx.execute("DELETE FROM userio_hook WHERE project_id = $1", project_id)
        await tx.insert_many(
            "userio_hook",
            ("project_id", "position", "event", "source", "javascript", "source_id", "on_error", "created_at"),
            [
                (project_id, position, h.event, h.source, h.javascript, h.source_id, h.on_error, now)
                for position, h in enumerate(hooks)
            ],
        )

    async def allowlist(self, tx: Tx, project_id: str) -> list[str]:
        """The saved fetch allowlist (empty when never saved)."""
        row = await tx.fetchrow("SELECT fetch_allowlist FROM userio_hook_settings WHERE project_id = $1", project_id)
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
        row = await tx.fetchrow(
            "INSERT INTO userio_hook_settings (project_id, fetch_allowlist, version, updated_at)"
            " VALUES ($1, $2, 1, $3)"
            " ON CONFLICT (project_id) DO UPDATE SET fetch_allowlist = excluded.fetch_allowlist,"
            " version = userio_hook_settings.version + 1, updated_at = excluded.updated_at"
            " RETURNING version",
            project_id,
            json.dumps(list(allowlist)),
            now,
        )
        assert row is not None
        version = int(row["version"])
        await tx.execute(
            "INSERT INTO userio_hook_version (project_id, version, created_at, actor_kid, actor_sub, body)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            project_id,
            version,
            now,
            actor[0],
            actor[1],
            json.dumps(body),
        )
        return version

    async def versions(self, tx: Tx, project_id: str) -> list[VersionRow]:
        """Every version, newest first, without bodies."""
        rows = await tx.fetch(
            "SELECT version, created_at, actor_kid, actor_sub FROM userio_hook_version WHERE project_id = $1"
            " ORDER BY version DESC",
            project_id,
        )
        return [VersionRow(r["version"], _datetime(r["created_at"]), r["actor_kid"], r["actor_sub"], {}) for r in rows]

    async def version(self, tx: Tx, project_id: str, version: int) -> VersionRow | None:
        """One version with its body."""
        row = await tx.fetchrow(
            "SELECT version, created_at, actor_kid, actor_sub, body FROM userio_hook_version"
            " WHERE project_id = $1 AND version = $2",
            project_id,
            version,
        )
        if row is None:
            return None
        return VersionRow(
            row["version"], _datetime(row["created_at"]), row["actor_kid"], row["actor_sub"], json.loads(row["body"])
        )

    async def put_secret(self, tx: Tx, project_id: str, name: str, sealed: str, now: datetime) -> None:
        """Insert or replace a sealed secret."""
        await tx.execute(
            "INSERT INTO userio_hook_secret (project_id, name, ciphertext, updated_at) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT (project_id, name) DO UPDATE SET ciphertext = excluded.ciphertext,"
            " updated_at = excluded.updated_at",
            project_id,
            name,
            sealed,
            now,
        )

    async def delete_secret(self, tx: Tx, project_id: str, name: str) -> bool:
        """Whether a secret of that name was there to delete."""
        row = await tx.fetchrow(
            "DELETE FROM userio_hook_secret WHERE project_id = $1 AND name = $2 RETURNING name", project_id, name
        )
        return row is not None

    async def secret_count(self, tx: Tx, project_id: str) -> int:
        """How many secrets the project holds."""
        row = await tx.fetchrow("SELECT COUNT(*) AS n FROM userio_hook_secret WHERE project_id = $1", project_id)
        return int(row["n"]) if row is not None else 0

    async def secrets(self, tx: Tx, project_id: str) -> list[Row]:
        """`name`, `ciphertext` and `updated_at` of each secret, by name."""
        rows = await tx.fetch(
            "SELECT name, ciphertext, updated_at FROM userio_hook_secret WHERE project_id = $1 ORDER BY name",
            project_id,
        )
        return [{**r, "updated_at": _datetime(r["updated_at"])} for r in rows]

    async def add_runs(self, tx: Tx, runs: Sequence[tuple[str, RunRow]]) -> None:
        """Append run log entries (project id, entry)."""
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
        columns = (
            "id, event, hook_index, started_at, duration_ms, outcome, error_kind, console, claims_added, sampled_rate"
        )
        if before is None:
            rows = await tx.fetch(
                f"SELECT {columns} FROM userio_hook_run WHERE project_id = $1 ORDER BY id DESC LIMIT $2",
                project_id,
                limit,
            )
        else:
            rows = await tx.fetch(
                f"SELECT {columns} FROM userio_hook_run WHERE project_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
                project_id,
                before,
                limit,
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
        await tx.execute("DELETE FROM userio_hook_run WHERE started_at < $1", before)
