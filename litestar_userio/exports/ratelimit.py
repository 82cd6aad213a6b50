"""Rate-limit buckets (the `UserExport` bucket): a sliding window of `limit` uses per `period`, per project.

See docs/reference.md#limits.

Uses are rows of the database, taken inside the caller's transaction, whatever the queue backend: the export's
admission locks the project's row, checks for a running export, takes a use and stores the task in one
transaction, so a use is taken exactly when a task is admitted. A bucket beside the transaction (Redis) kept the
use of an admission that rolled back.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from litestar_userio.db.engine import Tx
from litestar_userio.db.tables import RateLimitEvent

__all__ = ["DatabaseRateLimiter"]


class DatabaseRateLimiter:
    """Uses as rows of `userio_rate_limit_event`; call inside a transaction that locks the project."""

    async def take(
        self, tx: Tx, project_id: str, bucket: str, limit: int, period: timedelta, now: datetime
    ) -> int | None:
        """Take one use: None when taken, else the seconds until one frees up (for `Retry-After`).

        The bucket's uses older than its own window go first: a project may set a window longer than the
        plugin's, and only the bucket knows it. So a project keeps at most `limit` rows between exports.
        """
        event = RateLimitEvent
        in_bucket = (event.project == project_id) & (event.bucket == bucket)
        await tx.run(event.delete().where(in_bucket & (event.created_at <= now - period)))
        uses = await tx.run(event.select(event.created_at).where(in_bucket).order_by(event.created_at).limit(limit))
        if len(uses) >= limit:
            wait: timedelta = uses[0]["created_at"] + period - now
            return max(1, math.ceil(wait.total_seconds()))
        await tx.insert(event, {"project": project_id, "bucket": bucket, "created_at": now})
        return None
