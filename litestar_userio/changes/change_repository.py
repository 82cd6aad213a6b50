"""Every statement of the change log: append in the caller's transaction, page in commit order, purge, consumers.

Hand-written SQL, a measured path (docs/changes.md): the append rides the writer's own bulk path (COPY on
PostgreSQL, one `executemany` on SQLite) and the feed's page is one index range scan bounded by the snapshot's xmin,
which Piccolo's builder does not express.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, cast

import msgspec

from litestar_userio.changes.entries import ChangeEntry, ChangeKind, ChangeOrigin, Position, UserChange
from litestar_userio.db.engine import Row, Tx
from litestar_userio.db.tables import Project

__all__ = ["ChangeRepository"]

_COLUMNS = ("project_id", "user_id", "kind", "occurred_at", "origin_kind", "task_id", "document")
_ENTRY = (
    "seq, xact, project_id, user_id, kind, occurred_at, origin_kind, task_id, document, batch, batch_index, entries"
)
_BATCHED = 32
"""Appends of at least this many entries are one bulk row of `userio_change` (migration 2026-12-02T03), their
documents one `userio_change_documents` row: 2 000 rows of 1 KB each are not compressed (a row is compressed only
over 2 KB), one row of 2 MB is (lz4, about 4:1 on the bench's users). Measured on bench/import.py, the entries' WAL
per user: 1 184 bytes with a row and a document each, 395 with the documents in one row, about 170 with the
entries in one row too."""
_BLOCK = 4096
"""A bulk row's entries at most: on PostgreSQL each row's `seq` is the top of a block of this many positions (the
identity steps by it), its entries the block's last positions."""
_decode_list = msgspec.json.Decoder(list[str]).decode
_encode = msgspec.json.encode
_START = Position(0, 0)


_SETTLED = (
    "SELECT LEAST(pg_snapshot_xmax(pg_current_snapshot())::text::bigint,"
    " (SELECT min(backend_xid::text::bigint) FROM pg_stat_activity WHERE datname = current_database()),"
    " (SELECT min(transaction::text::bigint) FROM pg_prepared_xacts WHERE database = current_database())) AS bound"
)
"""PostgreSQL: below this transaction id, every transaction that can write our entries has settled.

Those of this database that held an id when it ran are still running (`pg_stat_activity.backend_xid`, shown to
every role; prepared ones in `pg_prepared_xacts`), and none drawn since (`xmax`) is older; every other one below
ended. So a later statement (a new
snapshot: READ COMMITTED) sees every entry below it that will ever exist, and the visible prefix of the order only
grows at its end. Bounded by this database's transactions, not the whole cluster's (`pg_snapshot_xmin`): another
database's long transaction does not hold the feed back (docs/changes.md#order)."""

_IN_SNAPSHOT = " AND xact < pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
"""PostgreSQL, inside one snapshot (REPEATABLE READ, the export's): entries of transactions below its xmin, all
settled and all visible in it."""


async def _settled(tx: Tx, param: int) -> tuple[str, tuple[int, ...]]:
    """The condition (as `$param`) and argument that keep a query to settled entries.

    Nothing on SQLite, whose writers are serialized: every committed entry is settled.
    """
    if tx.dialect != "postgres":
        return "", ()
    row = await tx.fetchrow(_SETTLED)
    assert row is not None
    return f" AND xact < ${param}", (int(row["bound"]),)


def _entries_after(row: Row, after: Position) -> int:
    """How many of the row's entries lie after `after` (the row itself does)."""
    count = row["entries"]
    if count is None:
        return 1
    return min(int(count), int(row["seq"]) - after.seq) if int(row["xact"]) == after.xact else int(count)


def _entries(
    row: Row, lists: dict[Position, Row], batches: dict[int, list[bytes]], after: Position, room: int
) -> list[ChangeEntry]:
    """The entries of a row after `after`, `room` at most: itself, or a bulk row's.

    A bulk row's `entries` end at its `seq`; their users and kinds are in `lists`, by the row's position.
    """
    document = row["document"]
    count = row["entries"]
    xact, project_id, occurred_at = int(row["xact"]), row["project_id"], row["occurred_at"]
    origin = ChangeOrigin(row["origin_kind"], row["task_id"])
    if count is not None:
        bulk = batches.get(int(row["batch"])) or []
        listed = lists[Position(xact, int(row["seq"]))]
        user_ids, kinds = _decode_list(listed["user_ids"]), _decode_list(listed["kinds"])
        first = int(row["seq"]) - int(count) + 1
        skip = int(count) - _entries_after(row, after)  # a bulk row the cursor is inside of
        return [
            ChangeEntry(
                seq=first + i,
                xact=xact,
                project_id=project_id,
                user_id=user_id,
                kind=cast("ChangeKind", kind),
                occurred_at=occurred_at,
                origin=origin,
                document=bulk[i] if i < len(bulk) else None,
            )
            for i, (user_id, kind) in enumerate(zip(user_ids, kinds, strict=True))
            if skip <= i < skip + room
        ]
    if document is None and row["batch"] is not None:
        lines = batches.get(int(row["batch"]))
        document = None if lines is None else lines[int(row["batch_index"])]
    elif document is not None:
        document = document.encode()
    return [
        ChangeEntry(
            seq=int(row["seq"]),
            xact=xact,
            project_id=project_id,
            user_id=row["user_id"],
            kind=cast("ChangeKind", row["kind"]),
            occurred_at=occurred_at,
            origin=origin,
            document=document,
        )
    ]


async def _batches(tx: Tx, rows: Sequence[Row]) -> dict[int, list[bytes]]:
    """The documents of the bulk appends `rows` refer to, by batch id, as lines."""
    ids = sorted({int(row["batch"]) for row in rows if row["document"] is None and row["batch"] is not None})
    if not ids:
        return {}
    found = await tx.fetch(f"SELECT id, documents FROM userio_change_documents WHERE {tx.any('id', 1)}", tx.array(ids))
    return {int(row["id"]): row["documents"].encode().split(b"\n") for row in found}


async def _bulk_lists(
    tx: Tx, project_id: str, after: Position, rows: Sequence[Row], with_imports: bool
) -> dict[Position, Row]:
    """The users and kinds of the bulk rows among `rows`, by position.

    Read apart, for the rows that fill the page only: a page of 1000 rows may be 1000 bulk rows, of which the first
    fills it.
    """
    bulk = [row for row in rows if row["entries"] is not None]
    if not bulk:
        return {}
    found = await tx.fetch(
        "SELECT xact, seq, user_ids, kinds FROM userio_change WHERE project_id = $1 AND (xact, seq) > ($2, $3)"
        " AND (xact, seq) <= ($4, $5) AND entries IS NOT NULL AND ($6 OR origin_kind <> 'import')",
        project_id,
        after.xact,
        after.seq,
        int(bulk[-1]["xact"]),
        int(bulk[-1]["seq"]),
        with_imports,
    )
    return {Position(int(row["xact"]), int(row["seq"])): row for row in found}


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
        if len(changes) < _BATCHED:
            await tx.insert_many(
                "userio_change",
                _COLUMNS,
                [(project_id, c.user_id, c.kind, at, kind, task_id, c.document.decode()) for c in changes],
            )
            return
        for start in range(0, len(changes), _BLOCK):
            await self._append_bulk(tx, project_id, changes[start : start + _BLOCK], kind, task_id, at)

    @staticmethod
    async def _append_bulk(
        tx: Tx, project_id: str, changes: Sequence[UserChange], kind: str, task_id: str | None, at: datetime
    ) -> None:
        """One bulk row of at most `_BLOCK` entries, its documents one row (migration 2026-12-02T03)."""
        row = await tx.fetchrow(
            "INSERT INTO userio_change_documents (project_id, documents) VALUES ($1, $2) RETURNING id",
            project_id,
            b"\n".join(c.document for c in changes).decode(),
        )
        assert row is not None
        # PostgreSQL: the identity's next block; SQLite (writers serialized): the last position drawn + the entries.
        seq = "" if tx.dialect == "postgres" else "seq, "
        drawn = (
            ""
            if tx.dialect == "postgres"
            else "COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'userio_change'), 0) + $7, "
        )
        await tx.execute(
            f"INSERT INTO userio_change ({seq}project_id, user_id, kind, occurred_at, origin_kind, task_id, batch,"
            f" entries, user_ids, kinds) VALUES ({drawn}$1, '', '', $2, $3, $4, $5, $7, $6, $8)",
            project_id,
            at,
            kind,
            task_id,
            int(row["id"]),
            _encode([c.user_id for c in changes]).decode(),
            len(changes),
            _encode([c.kind for c in changes]).decode(),
        )

    async def page(self, tx: Tx, project_id: str, after: Position, limit: int) -> list[ChangeEntry]:
        """Up to `limit` settled entries after `after`, in order."""
        entries, _ = await self.page_without_imports(tx, project_id, after, limit, with_imports=True)
        return entries

    async def page_without_imports(
        self, tx: Tx, project_id: str, after: Position, limit: int, *, with_imports: bool = False
    ) -> tuple[list[ChangeEntry], Position]:
        """Up to `limit` settled entries after `after`, in order, and the position read up to.

        An import's entries are passed over unless `with_imports`. The position is the last entry's on a full page,
        else the newest settled entry's (imports included). A consumer that skips imports passes 100 000 imported
        users' entries without reading them (bench/import.py).
        """
        settled, bound = await _settled(tx, 6)
        rows = await tx.fetch(
            f"SELECT {_ENTRY} FROM userio_change WHERE project_id = $1 AND (xact, seq) > ($2, $3){settled}"
            " AND ($5 OR origin_kind <> 'import') ORDER BY xact, seq LIMIT $4",
            project_id,
            after.xact,
            after.seq,
            limit,
            with_imports,
            *bound,
        )
        # A row holds one entry or more (a bulk row, which may start before `after`): `limit` rows hold at least
        # `limit` entries after it, and the rows that fill the page are read whole (users, kinds, documents).
        total = 0
        for used, row in enumerate(rows, 1):
            total += _entries_after(row, after)
            if total >= limit:
                rows = rows[:used]
                break
        lists = await _bulk_lists(tx, project_id, after, rows, with_imports)
        batches = await _batches(tx, rows)
        entries: list[ChangeEntry] = []
        for row in rows:
            entries += _entries(row, lists, batches, after, limit - len(entries))
        if len(entries) == limit or with_imports:
            return entries, entries[-1].position if entries else after
        # Under the same bound: every entry below it was visible to the query above and is to this one.
        newest = await tx.fetchrow(
            f"SELECT xact, seq FROM userio_change WHERE project_id = $1 AND (xact, seq) > ($2, $3)"
            f"{settled.replace('$6', '$4')} ORDER BY xact DESC, seq DESC LIMIT 1",
            project_id,
            after.xact,
            after.seq,
            *bound,
        )
        return entries, after if newest is None else Position(int(newest["xact"]), int(newest["seq"]))

    async def newest(self, tx: Tx, project_id: str, *, in_snapshot: bool = False) -> Position | None:
        """The position of the newest settled entry; None when the project's log is empty.

        `in_snapshot`: of the entries settled in `tx`'s own snapshot (an export's REPEATABLE READ), so that every
        entry up to it is visible there.
        """
        bound: tuple[int, ...] = ()
        if in_snapshot:
            settled = _IN_SNAPSHOT if tx.dialect == "postgres" else ""
        else:
            settled, bound = await _settled(tx, 2)
        row = await tx.fetchrow(
            f"SELECT xact, seq FROM userio_change WHERE project_id = $1{settled} ORDER BY xact DESC, seq DESC LIMIT 1",
            project_id,
            *bound,
        )
        return None if row is None else Position(int(row["xact"]), int(row["seq"]))

    async def horizon(self, tx: Tx, project_id: str) -> Position:
        """The newest position purged from the project's log ((0, 0) when none was)."""
        row = await tx.fetchrow("SELECT xact, seq FROM userio_change_horizon WHERE project_id = $1", project_id)
        return _START if row is None else Position(int(row["xact"]), int(row["seq"]))

    async def changed_users(self, tx: Tx, project_id: str, after: Position) -> set[str]:
        """The users of every entry after `after` that `tx`'s snapshot sees (settled or not): a delta export's."""
        rows = await tx.fetch(
            "SELECT xact, seq, user_id, entries, user_ids FROM userio_change"
            " WHERE project_id = $1 AND (xact, seq) > ($2, $3)",
            project_id,
            after.xact,
            after.seq,
        )
        users: set[str] = set()
        for row in rows:
            if row["entries"] is None:
                users.add(row["user_id"])
                continue
            xact, first = int(row["xact"]), int(row["seq"]) - int(row["entries"]) + 1
            users.update(u for i, u in enumerate(_decode_list(row["user_ids"])) if Position(xact, first + i) > after)
        return users

    async def purge(self, tx: Tx, project_id: str, before: datetime, limit: int) -> int:
        """Delete the oldest run of the project's rows that occurred before `before`, at most `limit`; their entries.

        At least `limit` entries when `limit` rows went (a bulk row holds many), so the caller goes on.

        Walks the order from its oldest end (its one index), so a project with nothing to purge costs one probe;
        the horizon rises to the newest entry purged: a cursor before it has missed entries (410).
        """
        oldest = await tx.fetchrow(
            "SELECT occurred_at FROM userio_change WHERE project_id = $1 ORDER BY xact, seq LIMIT 1", project_id
        )
        if oldest is None or oldest["occurred_at"] >= before:
            return 0  # one probe of the index for a project with nothing to purge, every sweep
        rows = await tx.fetch(
            "SELECT xact, seq, occurred_at, entries FROM userio_change WHERE project_id = $1"
            " ORDER BY xact, seq LIMIT $2",
            project_id,
            limit,
        )
        purged = entries = 0  # rows, and the entries they hold (a bulk row holds many)
        for row in rows:
            if row["occurred_at"] >= before:
                break
            purged += 1
            entries += row["entries"] or 1
        if not purged:
            return 0
        newest = Position(int(rows[purged - 1]["xact"]), int(rows[purged - 1]["seq"]))
        await tx.execute(
            "DELETE FROM userio_change WHERE project_id = $1 AND (xact, seq) <= ($2, $3)",
            project_id,
            newest.xact,
            newest.seq,
        )
        # A bulk append's documents go once no entry of the project needs them: every batch older than the oldest
        # still referenced (batch ids grow with time; a later one left over goes at a later purge).
        await tx.execute(
            "DELETE FROM userio_change_documents WHERE project_id = $1 AND id < COALESCE("
            "(SELECT min(batch) FROM userio_change WHERE project_id = $1), 9223372036854775807)",
            project_id,
        )
        await tx.execute(
            "INSERT INTO userio_change_horizon (project_id, xact, seq) VALUES ($1, $2, $3)"
            " ON CONFLICT (project_id) DO UPDATE SET xact = excluded.xact, seq = excluded.seq"
            " WHERE (userio_change_horizon.xact, userio_change_horizon.seq) < (excluded.xact, excluded.seq)",
            project_id,
            newest.xact,
            newest.seq,
        )
        return entries

    async def project_ids(self, tx: Tx) -> list[str]:
        """Every project's id (the purge goes through them)."""
        return [row["id"] for row in await tx.run(Project.select(Project.id))]

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
        settled, bound = await _settled(tx, 2)
        rows = await tx.fetch(
            "SELECT p.id FROM userio_project p"
            " LEFT JOIN userio_change_consumer c ON c.project_id = p.id AND c.name = $1"
            " WHERE EXISTS (SELECT 1 FROM userio_change e WHERE e.project_id = p.id"
            " AND (e.xact, e.seq) > (COALESCE(c.xact, -1), COALESCE(c.seq, -1))"
            f"{settled.replace('xact', 'e.xact', 1)})",
            name,
            *bound,
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
