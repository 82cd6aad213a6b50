"""Which pending work the sweeper enqueues again: the one rule imports and exports share.

A work item is pending in the database; it is either waiting (enqueued at some time) or started (a worker
claimed it). The sweeper takes back: work enqueued `stale_after` ago and never started (Redis lost its queue);
work a worker took (claimed in the database, or marked by the queue `lease_ttl` ago) whose lease is not held
(its worker died); with `older_than` (a new in-process runner), everything pending since then.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, TypeVar

from litestar_userio.config import QueueConfig
from litestar_userio.db.engine import Database, Tx
from litestar_userio.errors import WriteConflict
from litestar_userio.queue.queue_protocol import JobQueue

__all__ = ["Pending", "Stale", "choose_stale", "requeue"]

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Pending(Generic[K]):
    """One pending work item: its key, its lease's name and when it was enqueued (None: a worker claimed it)."""

    key: K
    lease: str
    enqueued_at: datetime | None


@dataclass
class Stale(Generic[K]):
    """The work to enqueue again; `taken_over` is what a dead worker held (it goes ahead of the backlog)."""

    chosen: list[K] = field(default_factory=list)
    taken_over: set[K] = field(default_factory=set)


async def choose_stale(
    pending: Sequence[Pending[K]],
    *,
    queue: JobQueue,
    config: QueueConfig,
    now: datetime,
    job_key: Callable[[str], K | None],
    older_than: datetime | None = None,
) -> Stale[K]:
    """The pending work nobody is doing; `job_key` names the work item of a queue job id (None: not ours)."""
    cutoff = older_than or now - config.stale_after
    chosen = [item.key for item in pending if item.enqueued_at is not None and item.enqueued_at <= cutoff]
    if older_than is not None:
        return Stale(chosen + [item.key for item in pending if item.enqueued_at is None])
    if not pending:
        return Stale(chosen)
    stalled = {job_key(job) for job in await queue.stalled_jobs(config.lease_ttl)}
    grace = now - config.lease_ttl  # work enqueued again just now waits for its new job
    started = [
        item for item in pending if item.enqueued_at is None or (item.key in stalled and item.enqueued_at <= grace)
    ]
    lapsed = await queue.leases.lapsed([item.lease for item in started])
    taken_over = [item.key for item in started if item.lease in lapsed]
    return Stale(list(dict.fromkeys(chosen + taken_over)), set(taken_over))


async def requeue(
    db: Database,
    pending: Sequence[Pending[K]],
    *,
    queue: JobQueue,
    config: QueueConfig,
    now: datetime,
    job_key: Callable[[str], K | None],
    mark: Callable[[Tx, list[K]], Awaitable[Sequence[tuple[K, int]]]],
    enqueue: Callable[[K, str, bool], Awaitable[None]],
    older_than: datetime | None = None,
) -> int:
    """The sweep: choose the stale work, stamp it enqueued, enqueue each again; returns how many.

    `mark` stamps those still pending and returns them with their runs so far. It runs in a transaction that never
    waits behind a locked row: such a row is being worked on right now, or held by a session the sweep ends first
    next round (`Database.end_silent_sessions`). `enqueue` gets a new run name (runs so far and the time), so the
    queue takes the job again under a fresh id; a dead worker's work goes first.
    """
    stale = await choose_stale(pending, queue=queue, config=config, now=now, job_key=job_key, older_than=older_than)
    if not stale.chosen:
        return 0
    try:
        async with db.transaction(lock_timeout=config.sweep_interval) as tx:
            marked = await mark(tx, stale.chosen)
    except WriteConflict:
        return 0
    stamp = int(now.timestamp() * 1000)
    for key, attempts in marked:
        await enqueue(key, f"{attempts}-{stamp}", key in stale.taken_over)
    return len(marked)
