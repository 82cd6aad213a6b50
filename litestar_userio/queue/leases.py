"""Leases: a running job holds one for its work item and renews it; when its worker dies the lease lapses.

The sweeper enqueues again the work whose lease lapsed, so a killed worker's chunks run again within seconds
(`QueueConfig.lease_ttl` plus one `sweep_interval`) instead of after arq's in-progress timeout. A lease is not
what keeps a chunk from being applied twice: its transaction locks the chunk row and checks it is still
pending. The lease keeps a second worker from starting the same work while the first is alive.

Each queue backend brings its store: Redis for arq (shared by every worker), memory for the in-process runner
(whose jobs die only with the process, and a new process enqueues everything pending at start).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta
from typing import Any, Protocol

from litestar_userio.queue.connections import redis_errors

__all__ = ["LeaseStore", "MemoryLeaseStore", "RedisLeaseStore", "hold_lease"]

logger = logging.getLogger("litestar_userio.queue")


class LeaseStore(Protocol):
    """Time-limited, renewable ownership of named work items."""

    async def acquire(self, name: str, owner: str, ttl: timedelta) -> bool:
        """Take the lease unless someone else holds it."""
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

    async def acquire(self, name: str, owner: str, ttl: timedelta) -> bool:
        """Take the lease unless a live one is held."""
        holder = self._held.get(name)
        if holder is not None and holder[0] != owner and holder[1] > time.monotonic():
            return False
        self._held[name] = (owner, time.monotonic() + ttl.total_seconds())
        self._released.pop(name, None)
        return True

    async def renew(self, name: str, owner: str, ttl: timedelta) -> bool:
        """Extend our lease."""
        holder = self._held.get(name)
        if holder is None or holder[0] != owner:
            return False
        self._held[name] = (owner, time.monotonic() + ttl.total_seconds())
        return True

    async def release(self, name: str, owner: str) -> None:
        """Let go, and remember the name: it has lapsed if its work is still pending."""
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


_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisLeaseStore:
    """Leases as Redis keys with a TTL under `prefix` (the queue name, so deployments sharing a Redis never meet).

    A lapsed lease is a missing key: the caller asks only about work that was taken and is still pending.
    """

    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    def _key(self, name: str) -> str:
        return f"{self.prefix}:{name}"

    async def acquire(self, name: str, owner: str, ttl: timedelta) -> bool:
        """SET NX with the TTL."""
        with redis_errors():
            return bool(await self.redis.set(self._key(name), owner, nx=True, px=int(ttl.total_seconds() * 1000)))

    async def renew(self, name: str, owner: str, ttl: timedelta) -> bool:
        """Extend the TTL if the key still names us (one Lua script)."""
        with redis_errors():
            return bool(await self._renew(keys=[self._key(name)], args=[owner, int(ttl.total_seconds() * 1000)]))

    async def release(self, name: str, owner: str) -> None:
        """Delete the key if it still names us."""
        with redis_errors():
            await self._release(keys=[self._key(name)], args=[owner])

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
async def hold_lease(store: LeaseStore, name: str, ttl: timedelta) -> AsyncIterator[bool]:
    """Hold `name` while the block runs, renewing it every quarter of `ttl`; yields False when someone else holds it.

    A renewal that fails (the lease lapsed and another worker took it) is logged: that worker's transaction waits
    for ours on the chunk's row lock and then finds the work done.
    """
    owner = uuid.uuid4().hex
    if not await store.acquire(name, owner, ttl):
        yield False
        return

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
