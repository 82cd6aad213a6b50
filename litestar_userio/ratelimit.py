"""Rate-limit buckets (SPEC 7/8 `UserExport`): a sliding window of `limit` uses per `period`, per project.

The embedded default keeps the uses in the database, inside the caller's transaction (which holds the
project's lock), so two simultaneous requests cannot both take the last use. With arq the uses live in
Redis and one Lua script checks and takes atomically, so any number of app processes share the bucket.
"""

from __future__ import annotations

import math
import uuid
from datetime import datetime, timedelta
from typing import Any, Protocol

from litestar_userio.db.engine import Tx
from litestar_userio.db.tables import RateLimitEvent
from litestar_userio.queue.connections import redis_errors

__all__ = ["DatabaseRateLimiter", "RateLimiter", "RedisRateLimiter"]


class RateLimiter(Protocol):
    """Takes one use of a bucket, or says how long until one is free."""

    async def take(
        self, tx: Tx, project_id: str, bucket: str, limit: int, period: timedelta, now: datetime
    ) -> int | None:
        """None when a use was taken; otherwise the seconds until one frees up (for `Retry-After`)."""
        ...

    async def purge(self, tx: Tx, before: datetime) -> None:
        """Forget uses older than any window still open (the sweeper calls it)."""
        ...


class DatabaseRateLimiter:
    """Uses as rows of `userio_rate_limit_event`; call inside a transaction that locks the project."""

    async def take(
        self, tx: Tx, project_id: str, bucket: str, limit: int, period: timedelta, now: datetime
    ) -> int | None:
        """Count the uses in the window; record one if there is room."""
        event = RateLimitEvent
        uses = await tx.run(
            event.select(event.created_at)
            .where((event.project == project_id) & (event.bucket == bucket) & (event.created_at > now - period))
            .order_by(event.created_at)
            .limit(limit)
        )
        if len(uses) >= limit:
            wait: timedelta = uses[0]["created_at"] + period - now
            return max(1, math.ceil(wait.total_seconds()))
        await tx.insert(event, {"project": project_id, "bucket": bucket, "created_at": now})
        return None

    async def purge(self, tx: Tx, before: datetime) -> None:
        """Forget uses older than any window still open."""
        await tx.run(RateLimitEvent.delete().where(RateLimitEvent.created_at <= before))


_TAKE = """
local key, now, window, limit, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if redis.call('ZCARD', key) >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return tonumber(oldest[2]) + window - now
end
redis.call('ZADD', key, now, member)
redis.call('PEXPIRE', key, window)
return -1
"""


class RedisRateLimiter:
    """Uses as a sorted set per project and bucket; the check and the take are one Lua script.

    Keys live under `prefix`, scoped by the queue name, so deployments sharing a Redis keep their own buckets.
    """

    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self._script = redis.register_script(_TAKE)

    async def take(
        self, tx: Tx, project_id: str, bucket: str, limit: int, period: timedelta, now: datetime
    ) -> int | None:
        """Check and take in Redis; the transaction is not used."""
        window_ms = int(period.total_seconds() * 1000)
        with redis_errors():
            wait_ms = await self._script(
                keys=[f"{self.prefix}:{project_id}:{bucket}"],
                args=[int(now.timestamp() * 1000), window_ms, limit, uuid.uuid4().hex],
            )
        return None if int(wait_ms) < 0 else max(1, math.ceil(int(wait_ms) / 1000))

    async def purge(self, tx: Tx, before: datetime) -> None:
        """Nothing to do: each bucket's key expires with its window."""
