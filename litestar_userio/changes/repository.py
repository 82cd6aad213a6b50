"""Every statement of the change log: append in the caller's transaction, page in commit order, purge, consumers.

Hand-written SQL, a measured path (docs/changes.md): the append rides the writer's own bulk path (COPY on
PostgreSQL, one `executemany` on SQLite) and the feed's page is one index range scan bounded by the snapshot's xmin,
which Piccolo's builder does not express.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, cast

from litestar_userio.changes.model import ChangeEntry, ChangeKind, ChangeOrigin, Position, UserChange
from litestar_userio.db.engine import Row, Tx

__all__ = ["ChangeRepository"]

_COLUMNS = ("project_id", "user_id", "kind", "occurred_at", "origin_kind", "task_id", "document")
_ENTRY = "seq, xact, project_id, user_id, kind, occurred_at, origin_kind, task_id, document"
_START = Position(0, 0)


def _settled(tx: Tx) -> str:
    """The condition that an entry's transaction is settled.

    PostgreSQL: every transaction older than the snapshot's xmin committed or rolled back, so no entry can appear
    before a visible one later. SQLite's writers are serialized: every committed entry is settled.
    """
    if tx.dialect == "postgres":
        return " AND xact < pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
    return ""


def _entry(row: Row) -> ChangeEntry:
    document = row["document"]
    return ChangeEntry(
        seq=int(row["seq"]),
        xact=int(row["xact"]),
        project_id=row["project_id"],
        user_id=row["user_id"],
        kind=cast("ChangeKind", row["kind"]),
        occurred_at=row["occurred_at"],
        origin=ChangeOrigin(row["origin_kind"], row["task_id"]),
        document=None if document is None else document.encode(),
    )


class ChangeRepository:
    """The change log's rows (`userio_change`), its purge horizons and its consumers' cursors."""

    async def append(
        self, tx: Tx, project_id: str, changes: Sequence[UserChange], origin: ChangeOrigin, at: datetime
    ) -> None:
        """Append `changes` in `tx`, in order: one COPY (PostgreSQL) or one `executemany` (SQLite) for them all.

        The position is the database's (column defaults: the transaction's id, a sequence), so a rolled-back
        change leaves nothing and the order is commit order (docs/changes.md).
        """
        if not changes:
            return
        kind, task_id = origin.kind, origin.task_id
        await tx.insert_many(
            "userio_change",
            _COLUMNS,
            [(project_id, c.user_id, c.kind, at, kind, task_id, c.document.decode()) for c in changes],
        )

    async def page(self, tx: Tx, project_id: str, after: Position, limit: int) -> list[ChangeEntry]:
        """Up to `limit` settled entries after `after`, in order."""
        rows = await tx.fetch(
            f"SELECT {_ENTRY} FROM userio_change WHERE project_id = $1 AND (xact, seq) > ($2, $3){_settled(tx)}"
            " ORDER BY xact, seq LIMIT $4",
            project_id,
            after.xact,
            after.seq,
            limit,
        )
        return [_entry(row) for row in rows]

    async def newest(self, tx: Tx, project_id: str) -> Position | None:
        """The position of the newest settled entry; None when the project's log is empty."""
        row = await tx.fetchrow(
            f"SELECT xact, seq FROM userio_change WHERE project_id = $1{_settled(tx)} ORDER BY xact DESC, seq DESC"
            " LIMIT 1",
            project_id,
        )
        return None if row is None else Position(int(row["xact"]), int(row["seq"]))

    async def horizon(self, tx: Tx, project_id: str) -> Position:
        """The newest position purged from the project's log ((0, 0) when none was)."""
        row = await tx.fetchrow("SELECT xact, seq FROM userio_change_horizon WHERE project_id = $1", project_id)
        return _START if row is None else Position(int(row["xact"]), int(row["seq"]))

    async def changed_users(self, tx: Tx, project_id: str, after: Position) -> set[str]:
        """The users of every entry after `after` that `tx`'s snapshot sees (settled or not): a delta export's."""
        rows = await tx.fetch(
            "SELECT DISTINCT user_id FROM userio_change WHERE project_id = $1 AND (xact, seq) > ($2, $3)",
            project_id,
            after.xact,
            after.seq,
        )
        return {row["user_id"] for row in rows}

    async def purge(self, tx: Tx, before: datetime, limit: int) -> int:
        """Delete up to `limit` entries that occurred before `before`; how many.

        Every entry of their projects up to the newest of them goes too, and each project's horizon rises to it.
        """
        rows = await tx.fetch(
            "DELETE FROM userio_change WHERE seq IN"
            " (SELECT seq FROM userio_change WHERE occurred_at < $1 ORDER BY occurred_at LIMIT $2)"
            " RETURNING project_id, xact, seq",
            before,
            limit,
        )
        newest: dict[str, Position] = {}
        for row in rows:
            position = Position(int(row["xact"]), int(row["seq"]))
            if position > newest.get(row["project_id"], _START):
                newest[row["project_id"]] = position
        for project_id, position in newest.items():
            # Entries are purged by age, the horizon by position: what lies before it goes too, so a cursor at or
            # after the horizon never misses a kept entry and one before it is told it expired.
            await tx.execute(
                "DELETE FROM userio_change WHERE project_id = $1 AND (xact, seq) <= ($2, $3)",
                project_id,
                position.xact,
                position.seq,
            )
            await tx.execute(
                "INSERT INTO userio_change_horizon (project_id, xact, seq) VALUES ($1, $2, $3)"
                " ON CONFLICT (project_id) DO UPDATE SET xact = excluded.xact, seq = excluded.seq"
                " WHERE (userio_change_horizon.xact, userio_change_horizon.seq) < (excluded.xact, excluded.seq)",
                project_id,
                position.xact,
                position.seq,
            )
        return len(rows)

    # Consumers (docs/changes.md#consumers).

    async def lock_consumer(self, tx: Tx, project_id: str, name: str, start: Position, at: datetime) -> Position:
        """The consumer's position in the project's log, its row locked until `tx` ends (made at `start` if new)."""
        await tx.execute(
            "INSERT INTO userio_change_consumer (project_id, name, xact, seq, updated_at) VALUES ($1, $2, $3, $4, $5)"
            " ON CONFLICT (project_id, name) DO NOTHING",
            project_id,
            name,
            start.xact,
            start.seq,
            at,
        )
        row = await tx.fetchrow(
            f"SELECT xact, seq FROM userio_change_consumer WHERE project_id = $1 AND name = $2{tx.for_update}",
            project_id,
            name,
        )
        assert row is not None
        return Position(int(row["xact"]), int(row["seq"]))

    async def save_consumer(self, tx: Tx, project_id: str, name: str, position: Position, at: datetime) -> None:
        """Move the consumer's position (in the transaction of its own writes)."""
        await tx.execute(
            "UPDATE userio_change_consumer SET xact = $3, seq = $4, updated_at = $5"
            " WHERE project_id = $1 AND name = $2",
            project_id,
            name,
            position.xact,
            position.seq,
            at,
        )

    async def projects_behind(self, tx: Tx, name: str) -> list[str]:
        """The projects with a settled entry after the consumer's position (or with entries and no position yet)."""
        rows = await tx.fetch(
            "SELECT p.id FROM userio_project p"
            " LEFT JOIN userio_change_consumer c ON c.project_id = p.id AND c.name = $1"
            " WHERE EXISTS (SELECT 1 FROM userio_change e WHERE e.project_id = p.id"
            " AND (c.project_id IS NULL OR (e.xact, e.seq) > (c.xact, c.seq))"
            f"{_settled(tx).replace('xact', 'e.xact', 1)})",
            name,
        )
        return [row["id"] for row in rows]

    async def consumer_positions(self, tx: Tx, project_ids: Iterable[str]) -> dict[tuple[str, str], Position]:
        """(project, consumer name) -> position, for the given projects (operations, tests)."""
        ids = sorted(set(project_ids))
        if not ids:
            return {}
        rows: list[Any] = await tx.fetch(
            f"SELECT project_id, name, xact, seq FROM userio_change_consumer WHERE {tx.any('project_id', 1)}",
            tx.array(ids),
        )
        return {(r["project_id"], r["name"]): Position(int(r["xact"]), int(r["seq"])) for r in rows}
