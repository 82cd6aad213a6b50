"""The change log's feed, cursors and retention, and the consumers that follow it (docs/changes.md).

Consumers. A consumer is anything with a `name`, an `async wants_imports(tx, project_id)` (False: an import's entries
are passed over, not handed to it) and an `async handle(tx, project_id, entries)`; every process that should advance it
builds its `ChangeService` with it (`consumers=`, in the composition root). `advance(project_id, consumer)` then runs,
in one transaction: lock the consumer's row of `userio_change_consumer` (project, name), read the next settled entries
after its position, `handle` them (the consumer's own writes go in the same `tx`), save the position after the last. So
a consumer sees every committed entry of a project once per successful transaction, in the log's order, and at least
once overall: a `handle` that raises, or a crash before the commit, leaves the position where it was and the same
entries come again (a consumer drops duplicates by `entry.id` where its effect is outside `tx`). Two processes never
handle the same entries at once (the row lock).

When: `wake(project_id)` after a commit of this process (the change services call it) advances each of the
service's consumers of that project in a background task; a poll every `ChangeLogConfig.poll_interval` (from
`start`) and each sweep catch what other processes committed (`catch_up`). A new consumer starts at the oldest
kept entry; one whose position fell behind the retention continues after the purged entries, and says so in the log.

The Litestar user events (docs/reference.md#events) are the first consumer (`changes/events_consumer.py`, given to it in
a web process by `Services.start(emit=...)`); the webhooks' (`webhooks/consumer.py`) in every process that runs jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import msgspec

from litestar_userio.changes.change_repository import ChangeRepository
from litestar_userio.changes.cursors import LATEST, decode_cursor, encode_cursor
from litestar_userio.changes.entries import ChangeEntry, ChangeOrigin, Position
from litestar_userio.config import ChangeLogConfig
from litestar_userio.db.engine import Database, Tx
from litestar_userio.errors import ChangeCursorExpired, InvalidRequest
from userio_core.clock import Clock

__all__ = ["ChangeConsumer", "ChangePage", "ChangeService", "FeedEntry", "entry_document", "feed_entry"]

logger = logging.getLogger("litestar_userio.changes")

_PURGE_BATCH = 5000
_TOTPS = b'"totps":[{'


class ChangeConsumer(Protocol):
    """A follower of every project's change log with a durable position (see the module docstring)."""

    name: str
    """Its key in `userio_change_consumer` (64 characters at most), the same in every process."""

    async def wants_imports(self, tx: Tx, project_id: str) -> bool:
        """False: the project's import entries are passed over unread, not handed to `handle`.

        The position moves past them. Asked in each page's transaction: a consumer that wants them only for some
        projects (a webhook with `include_import`) spares the others reading and decoding 100 000 imported users
        (bench/import.py).
        """
        ...

    async def handle(self, tx: Tx, project_id: str, entries: Sequence[ChangeEntry]) -> None:
        """Take `entries` (in order, at least once); writes in `tx` commit with the new position.

        A consumer may also have `async committed(project_id)`, called once that transaction committed (the webhooks
        wake their delivery job there).
        """


class FeedEntry(msgspec.Struct):
    """An entry as the feed answers it (docs/changes.md)."""

    id: str
    cursor: str
    type: str
    user_id: str
    occurred_at: str
    origin: dict[str, str]
    user: msgspec.Raw | None


@dataclass
class ChangePage:
    """A page of the feed: `next_cursor` is where to ask next (also when `items` is empty)."""

    items: list[FeedEntry]
    next_cursor: str
    has_more: bool


def entry_document(entry: ChangeEntry) -> bytes | None:
    """The entry's `user` as JSON: the user after the change (`mfa.totps` empty), None for a deletion."""
    if entry.kind == "deleted" or entry.document is None:
        return None
    document = entry.document
    if _TOTPS in document:  # stored as the events carry it (one `{}` per TOTP); an entry shows none
        decoded = msgspec.json.decode(document)
        decoded["mfa"]["totps"] = []
        return msgspec.json.encode(decoded)
    return document


_encode_timestamp = msgspec.json.Encoder().encode
_timestamps: dict[datetime, str] = {}


def _timestamp(value: datetime) -> str:
    """RFC 3339, cached: the entries of one chunk or request share their time."""
    text = _timestamps.get(value)
    if text is None:
        if len(_timestamps) > 4096:
            _timestamps.clear()
        text = _timestamps[value] = _encode_timestamp(value)[1:-1].decode()
    return text


_origins: dict[ChangeOrigin, dict[str, str]] = {}


def _origin_json(origin: ChangeOrigin) -> dict[str, str]:
    """The entry's `origin`, cached: a page's entries share a few (an import's one task)."""
    found = _origins.get(origin)
    if found is None:
        if len(_origins) > 4096:
            _origins.clear()
        found = _origins[origin] = origin.to_json()
    return found


def feed_entry(project_id: str, entry: ChangeEntry) -> FeedEntry:
    """`entry` as the feed answers it: the one serialization of an entry (the `userio.change` event is its JSON)."""
    document = entry_document(entry)
    return FeedEntry(
        id=entry.id,
        cursor=encode_cursor(project_id, entry.position),
        type=entry.type,
        user_id=entry.user_id,
        occurred_at=_timestamp(entry.occurred_at),
        origin=_origin_json(entry.origin),
        user=None if document is None else msgspec.Raw(document),
    )


class ChangeService:
    """The feed (`page`), cursors and watermarks, retention (`purge`) and consumers (`start`, `wake`)."""

    def __init__(
        self, db: Database, config: ChangeLogConfig, clock: Clock, *, consumers: Sequence[ChangeConsumer] = ()
    ) -> None:
        self.db = db
        self.config = config
        self.clock = clock
        self.repository = ChangeRepository()
        self._consumers: tuple[ChangeConsumer, ...] = tuple(consumers)
        """The consumers this process advances (the composition root's: the events, the webhooks)."""
        self._woken: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()
        self._poller: asyncio.Task[None] | None = None

    # The feed.

    async def page(self, project_id: str, *, cursor: str | None = None, limit: int = 100) -> ChangePage:
        """The entries after `cursor` (from the oldest kept without one; none and the newest's cursor for `latest`).

        `InvalidCursor` for a cursor not of this project; `ChangeCursorExpired` when entries after it were purged.
        """
        if not 1 <= limit <= 1000:
            raise InvalidRequest("limit must be between 1 and 1000")
        async with self.db.reader() as tx:
            if cursor == LATEST:
                return ChangePage([], encode_cursor(project_id, await self._latest(tx, project_id)), False)
            after = await self.position(tx, project_id, cursor)
            entries = await self.repository.page(tx, project_id, after, limit + 1)
        items = [feed_entry(project_id, entry) for entry in entries[:limit]]
        last = entries[limit - 1].position if len(entries) > limit else (entries[-1].position if entries else after)
        return ChangePage(items, encode_cursor(project_id, last), len(entries) > limit)

    async def position(self, tx: Tx, project_id: str, cursor: str | None) -> Position:
        """Where `cursor` (or an export's `since`) points; the horizon without one; checked against retention."""
        horizon = await self.repository.horizon(tx, project_id)
        if cursor is None:
            return horizon
        position = decode_cursor(project_id, cursor)
        if position < horizon:
            raise ChangeCursorExpired()
        return position

    async def watermark(self, tx: Tx, project_id: str) -> str:
        """The cursor of the newest entry settled in `tx`'s snapshot (an export's): every entry up to it is in it."""
        newest = await self.repository.newest(tx, project_id, in_snapshot=True)
        horizon = await self.repository.horizon(tx, project_id)
        return encode_cursor(project_id, max(newest or horizon, horizon))

    async def changed_since(self, tx: Tx, project_id: str, since: str) -> set[str]:
        """The users with an entry after `since` that `tx`'s snapshot sees (a delta export)."""
        return await self.repository.changed_users(tx, project_id, await self.position(tx, project_id, since))

    def check_cursor(self, project_id: str, cursor: str) -> None:
        """`InvalidCursor` unless `cursor` is one of this project's (no database: an export request's `since`)."""
        decode_cursor(project_id, cursor)

    async def _latest(self, tx: Tx, project_id: str) -> Position:
        newest = await self.repository.newest(tx, project_id)
        horizon = await self.repository.horizon(tx, project_id)
        return max(newest or horizon, horizon)

    # Retention.

    async def purge(self) -> int:
        """Delete the entries older than `retention` (the sweeper), a batch per transaction; how many."""
        before = self.clock.now() - self.config.retention
        async with self.db.reader() as tx:
            project_ids = await self.repository.project_ids(tx)
        purged = 0
        for project_id in project_ids:
            while True:
                async with self.db.transaction() as tx:
                    count = await self.repository.purge(tx, project_id, before, _PURGE_BATCH)
                purged += count
                if count < _PURGE_BATCH:
                    break
        return purged

    # Consumers.

    def start(self) -> None:
        """Poll for the consumers every `poll_interval` until `close` (nothing to poll for without consumers).

        Call it once, from a running event loop; `wake` advances them sooner after this process's own commits.
        """
        if self._consumers and self._poller is None:
            self._poller = asyncio.get_running_loop().create_task(self._poll(), name="userio:changes")

    def wake(self, project_id: str) -> None:
        """After a commit that appended entries of `project_id`: advance this process's consumers of it soon."""
        if not self._consumers:
            return
        running = self._woken.get(project_id)
        if running is not None and not running.done():
            self._again.add(project_id)  # it may have read before this commit: one more round after it
            return
        with contextlib.suppress(RuntimeError):  # no running loop: the poll catches up
            self._woken[project_id] = asyncio.get_running_loop().create_task(
                self._advance_all(project_id), name=f"userio:changes:{project_id}"
            )

    async def advance(self, project_id: str, consumer: ChangeConsumer) -> int:
        """Hand `consumer` every settled entry after its position, a page per transaction; how many."""
        handled = 0
        while True:
            async with self.db.transaction() as tx:
                now = self.clock.now()
                stored = await self.repository.lock_consumer(tx, project_id, consumer.name, Position(0, 0), now)
                position = stored
                horizon = await self.repository.horizon(tx, project_id)
                if position < horizon:
                    logger.warning(
                        "consumer %s of project %s fell behind the change log's retention: entries were purged"
                        " before it handled them",
                        consumer.name,
                        project_id,
                    )
                    position = horizon
                entries, read_to = await self.repository.page_without_imports(
                    tx,
                    project_id,
                    position,
                    self.config.consumer_page,
                    with_imports=await consumer.wants_imports(tx, project_id),
                )
                if entries:
                    await consumer.handle(tx, project_id, entries)
                if read_to != stored:
                    await self.repository.save_consumer(tx, project_id, consumer.name, read_to, now)
            committed = getattr(consumer, "committed", None)
            if entries and committed is not None:  # optional: work the consumer's writes made due (webhooks)
                await committed(project_id)
            handled += len(entries)
            if len(entries) < self.config.consumer_page:
                return handled

    async def catch_up(self) -> int:
        """Advance each consumer in every project it is behind in (the poll, the sweep); how many."""
        handled = 0
        for consumer in self._consumers:
            async with self.db.reader() as tx:
                behind = await self.repository.projects_behind(tx, consumer.name)
            for project_id in behind:
                handled += await self.advance(project_id, consumer)
        return handled

    async def positions(self, project_ids: Sequence[str]) -> dict[tuple[str, str], Position]:
        """(project, consumer) -> position, for the given projects."""
        async with self.db.reader() as tx:
            return await self.repository.consumer_positions(tx, project_ids)

    async def _advance_all(self, project_id: str) -> None:
        try:
            while True:
                self._again.discard(project_id)
                for consumer in self._consumers:
                    await self.advance(project_id, consumer)
                if project_id not in self._again:
                    return
        except Exception:  # the poll tries again
            logger.warning("consumers of project %s could not advance", project_id, exc_info=True)

    async def _poll(self) -> None:
        interval = self.config.poll_interval.total_seconds()
        while True:
            await asyncio.sleep(interval)
            try:
                await self.catch_up()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("the change log's consumers could not catch up", exc_info=True)

    async def close(self) -> None:
        """Stop the poll and the woken rounds."""
        tasks: list[asyncio.Task[Any]] = [t for t in self._woken.values() if not t.done()]
        if self._poller is not None:
            tasks.append(self._poller)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._poller = None
        self._woken.clear()
