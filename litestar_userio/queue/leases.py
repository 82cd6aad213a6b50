"""Leases: a running job holds one for its work item and renews it; when its worker dies the lease lapses.

The sweeper enqueues again the work whose lease lapsed, so a killed worker's chunks run again within seconds
(`QueueConfig.lease_ttl` plus one `sweep_interval`) instead of after arq's in-progress timeout. A lease is not
what keeps a chunk from being applied twice: its transaction locks the chunk row and checks it is still
pending. The lease keeps a second worker from starting the same work while the first is alive.

Each queue backend brings its store: Redis for arq (shared by every worker), memory for the in-process runner
(whose jobs die only with the process, and a new process enqueues everything pending at start).

Beside each lease a store keeps its holder's last sign of life (acquire or renew), longer than the lease and
deleted by `release`: a new holder that finds one of another owner took over from a worker that died, and
`acquire` says how long after that worker's last renewal (`userio_lease_takeover_seconds`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from litestar_userio.observability import telemetry
from litestar_userio.queue.connections import redis_errors

__all__ = ["LeaseStore", "MemoryLeaseStore", "RedisLeaseStore", "Taken", "hold_lease"]

RENEWAL_KEPT = timedelta(days=1)
"""How long a holder's last renewal outlives it in Redis: a takeover later than that is not timed."""


@dataclass(frozen=True)
class Taken:
    """A lease just acquired.

    `takeover_seconds`: the time since the last renewal of a previous holder that never released it (its worker
    died); None when nobody held it or its holder let go.
    """

    takeover_seconds: float | None = None


logger = logging.getLogger("litestar_userio.queue")


class LeaseStore(Protocol):
    """Time-limited, renewable ownership of named work items."""

    async def acquire(self, name: str, owner: str, ttl: timedelta) -> Taken | None:
        """Take the lease unless someone else holds it (None)."""
        ...

    async def renew(self, name: str, owner: str, ttl: timedelta) -> bool:
        """Extend a lease we hold; False when it lapsed and someone else took it."""
        ...

    async def release(self, name: str, owner: str) -> None:
        """Let go of a lease we hold."""
        ...

    async def lapsed(self, names: Sequence[str]) -> set[str]:
        """Of these leases, once taken, those nobody holds any more: their holder died or let go."""
        ...


class MemoryLeaseStore:
    """Leases of this process's jobs (the in-process runner).

    It judges only leases it gave out: one whose job ended without finishing its work has lapsed; leases of
    other processes are not its to judge (the stale rule and the start-up requeue cover those).
    """

    _REMEMBERED = 10_000

    def __init__(self) -> None:
        self._held: dict[str, tuple[str, float]] = {}
        self._released: OrderedDict[str, None] = OrderedDict()
        self._renewed: dict[str, tuple[str, float]] = {}

    async def acquire(self, name: str, owner: str, ttl: timedelta) -> Taken | None:
        """Take the lease unless a live one is held."""
        now = time.monotonic()
        holder = self._held.get(name)
        if holder is not None and holder[0] != owner and holder[1] > now:
            return None
        self._held[name] = (owner, now + ttl.total_seconds())
        self._released.pop(name, None)
        previous = self._renewed.get(name)
        self._renewed[name] = (owner, now)
        return Taken(now - previous[1] if previous is not None and previous[0] != owner else None)

    async def renew(self, name: str, owner: str, ttl: timedelta) -> bool:
        """Extend our lease."""
        holder = self._held.get(name)
        if holder is None or holder[0] != owner:
            return False
        now = time.monotonic()
        self._held[name] = (owner, now + ttl.total_seconds())
        self._renewed[name] = (owner, now)
        return True

    async def release(self, name: str, owner: str) -> None:
        """Let go, and remember the name: it has lapsed if its work is still pending."""
        if self._renewed.get(name, ("",))[0] == owner:
            del self._renewed[name]
        holder = self._held.get(name)
        if holder is not None and holder[0] == owner:
            del self._held[name]
            self._released[name] = None
            while len(self._released) > self._REMEMBERED:
                self._released.popitem(last=False)

    async def lapsed(self, names: Sequence[str]) -> set[str]:
        """Names this process held and let go of (or whose lease ran out); none of other processes."""
        now = time.monotonic()
        found = set()
        for name in names:
            holder = self._held.get(name)
            if name in self._released or (holder is not None and holder[1] <= now):
                found.add(name)
                self._released.pop(name, None)
        return found


# KEYS: the lease, its holder's last renewal (a hash: owner, at in ms of the Redis server's clock, which every
# worker shares). ARGV: owner, lease TTL in ms, how long the renewal is kept in ms.
_NOW_MS = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"
_SEEN = (
    "redis.call('HSET', KEYS[2], 'owner', ARGV[1], 'at', string.format('%d', now))"
    " redis.call('PEXPIRE', KEYS[2], ARGV[3])\n"
)
_ACQUIRE = (
    """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
local previous = redis.call('HMGET', KEYS[2], 'owner', 'at')
"""
    + _NOW_MS
    + _SEEN
    + """
if previous[1] and previous[1] ~= ARGV[1] then return now - tonumber(previous[2]) end
return -1
"""
)
_RENEW = (
    """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""
    + _NOW_MS
    + _SEEN
    + "return 1"
)
_RELEASE = """
if redis.call('HGET', KEYS[2], 'owner') == ARGV[1] then redis.call('DEL', KEYS[2]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisLeaseStore:
    """Leases as Redis keys with a TTL under `prefix` (the queue name, so deployments sharing a Redis never meet).

    A lapsed lease is a missing key: the caller asks only about work that was taken and is still pending. The
    holder's last renewal is a hash under `prefix.renewed:`, written by the same script as the lease.
    """

    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    def _keys(self, name: str) -> list[str]:
        return [self._key(name), f"{self.prefix}.renewed:{name}"]

    def _key(self, name: str) -> str:
        return f"{self.prefix}:{name}"

    @staticmethod
    def _args(owner: str, ttl: timedelta) -> list[str | int]:
        return [owner, int(ttl.total_seconds() * 1000), int(RENEWAL_KEPT.total_seconds() * 1000)]

    async def acquire(self, name: str, owner: str, ttl: timedelta) -> Taken | None:
        """SET NX with the TTL, and the renewal record swapped for ours (one Lua script)."""
        with redis_errors():
            after_ms = await self._acquire(keys=self._keys(name), args=self._args(owner, ttl))
        if after_ms is None:
            return None
        return Taken(int(after_ms) / 1000 if int(after_ms) >= 0 else None)

    async def renew(self, name: str, owner: str, ttl: timedelta) -> bool:
        """Extend the TTL if the key still names us, and note the time (one Lua script)."""
        with redis_errors():
            return bool(await self._renew(keys=self._keys(name), args=self._args(owner, ttl)))

    async def release(self, name: str, owner: str) -> None:
        """Delete the key if it still names us, and our renewal record (even when the lease lapsed meanwhile)."""
        with redis_errors():
            await self._release(keys=self._keys(name), args=[owner])

    async def lapsed(self, names: Sequence[str]) -> set[str]:
        """The names without a key."""
        if not names:
            return set()
        with redis_errors():
            async with self.redis.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.exists(self._key(name))
                found = await pipe.execute()
        return {name for name, exists in zip(names, found, strict=True) if not exists}


@contextlib.asynccontextmanager
async def hold_lease(store: LeaseStore, name: str, ttl: timedelta, kind: str) -> AsyncIterator[bool]:
    """Hold `name` while the block runs, renewing it every quarter of `ttl`; yields False when someone else holds it.

    Taking over a dead worker's lease is timed under `kind` (`import_chunk`, `export`). A renewal that fails (the
    lease lapsed and another worker took it) is logged: that worker's transaction waits for ours on the chunk's row
    lock and then finds the work done.
    """
    owner = uuid.uuid4().hex
    taken = await store.acquire(name, owner, ttl)
    if taken is None:
        yield False
        return
    if taken.takeover_seconds is not None:
        telemetry.lease_taken_over(kind, taken.takeover_seconds)

    async def renew_forever() -> None:
        while True:
            await asyncio.sleep(ttl.total_seconds() / 4)
            try:
                if not await store.renew(name, owner, ttl):
                    logger.warning("lost the lease on %s; another worker may start it again", name)
                    return
            except Exception as exc:  # the store is away for a moment: try again at the next tick
                logger.warning("could not renew the lease on %s: %s", name, exc)

    renewer = asyncio.create_task(renew_forever(), name=f"userio:lease:{name}")
    try:
        yield True
    finally:
        renewer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewer
        try:
            await store.release(name, owner)
        except Exception as exc:  # it lapses by itself
            logger.warning("could not release the lease on %s: %s", name, exc)
