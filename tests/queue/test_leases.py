"""A lease store times a takeover: from a dead holder's last renewal to another worker's acquire (issue 30)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
import redis.asyncio as aioredis

from litestar_userio import MetricsConfig
from litestar_userio.observability import telemetry
from litestar_userio.observability.metrics import REGISTRY
from litestar_userio.queue.leases import LeaseStore, MemoryLeaseStore, RedisLeaseStore, hold_lease

TTL = timedelta(milliseconds=300)


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[LeaseStore]:
    if request.param == "memory":
        yield MemoryLeaseStore()
        return
    client = aioredis.from_url(redis_url)
    prefix = f"test-{uuid.uuid4().hex}:lease"
    try:
        yield RedisLeaseStore(client, prefix)
    finally:
        keys = [key async for key in client.scan_iter(match=f"{prefix}*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def lapse(store: LeaseStore, name: str) -> None:
    """Wait until the lease ran out: its holder stopped renewing it."""
    deadline = time.monotonic() + 10
    while not await store.lapsed([name]):
        assert time.monotonic() < deadline, "the lease never lapsed"
        await asyncio.sleep(0.02)


async def test_a_takeover_is_timed_from_the_last_renewal_to_the_new_holder(store: LeaseStore) -> None:
    assert await store.acquire("chunk", "dead", TTL) is not None
    before_renewal = time.monotonic()
    assert await store.renew("chunk", "dead", TTL)
    await lapse(store, "chunk")
    taken = await store.acquire("chunk", "heir", TTL)
    waited = time.monotonic() - before_renewal
    assert taken is not None and taken.takeover_seconds is not None
    assert TTL.total_seconds() <= taken.takeover_seconds <= waited + 0.001  # Redis times whole milliseconds


async def test_a_released_lease_taken_again_is_no_takeover(store: LeaseStore) -> None:
    assert await store.acquire("chunk", "done", TTL) is not None
    assert await store.renew("chunk", "done", TTL)
    await store.release("chunk", "done")
    taken = await store.acquire("chunk", "next", TTL)
    assert taken is not None and taken.takeover_seconds is None


async def test_a_lease_released_late_after_it_lapsed_is_no_takeover(store: LeaseStore) -> None:
    """A slow worker finished its work after its lease ran out: it let go, it did not die."""
    assert await store.acquire("chunk", "slow", TTL) is not None
    await lapse(store, "chunk")
    await store.release("chunk", "slow")
    taken = await store.acquire("chunk", "next", TTL)
    assert taken is not None and taken.takeover_seconds is None


def _takeovers(kind: str) -> float:
    return REGISTRY.get_sample_value("userio_lease_takeover_seconds_count", {"kind": kind}) or 0.0


async def test_holding_a_dead_workers_lease_counts_one_takeover_of_its_kind(store: LeaseStore) -> None:
    telemetry.configure(MetricsConfig(), None)
    try:
        before = _takeovers("export")
        assert await store.acquire("export:1", "dead", TTL) is not None
        await lapse(store, "export:1")
        async with hold_lease(store, "export:1", TTL, "export") as held:
            assert held
        assert _takeovers("export") == before + 1
        async with hold_lease(store, "export:1", TTL, "export") as held:  # the last holder let go
            assert held
        assert _takeovers("export") == before + 1
    finally:
        telemetry.reset()
