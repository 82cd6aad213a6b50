"""Jobs on Redis through arq: the queue the web process enqueues into (the worker is `litestar_userio.worker`).

Any number of worker processes may share a queue. A running job holds a lease in Redis and renews it; when its
worker is killed the lease lapses within `lease_ttl`, and the sweeper (every `sweep_interval`) enqueues the work
again under a fresh job id. arq would also run the dead job again once its in-progress mark expires
(`job_timeout` + 10 s); by then it finds the work done. The job functions are idempotent (import chunks commit
their writes and their done-mark together).

Every key this deployment writes carries the queue name: job ids and leases (the sweeper's included), so
deployments sharing a Redis never meet. Two that share the queue name too (a misconfiguration: staging beside
production, two test runs) would take each other's jobs, so every job carries its deployment's id
(`DEPLOYMENT_KWARG`, `Database.deployment_id`): a worker that takes another deployment's job logs it in one line
naming both and puts the job back for its owner (`put_back`), instead of finding no work and dropping it.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from arq.constants import in_progress_key_prefix
from redis.exceptions import RedisError

from litestar_userio.config import QueueConfig
from litestar_userio.queue.connections import redis_errors
from litestar_userio.queue.leases import RedisLeaseStore

__all__ = ["DEPLOYMENT_KWARG", "ArqQueue", "redis_settings"]

DEPLOYMENT_KWARG = "userio_deployment"
"""The keyword argument every job carries: the id of the deployment that enqueued it (the worker strips it)."""
_PUT_BACK_DELAY = timedelta(milliseconds=250)
"""A job put back for its owner waits this long, so the worker that put it back takes others first."""

logger = logging.getLogger("litestar_userio.queue")

_FRONT = datetime.fromtimestamp(1, UTC)
_JOB_EXPIRY = timedelta(days=1)
"""arq's default expiry of a queued job; given explicitly with `_FRONT`, whose score would make arq's negative."""


def redis_settings(queue: QueueConfig) -> RedisSettings:
    """The connection settings arq gets for `queue.redis_url`, in the worker and the web process alike."""
    if queue.redis_url is None:
        raise ValueError("arq needs QueueConfig.redis_url")
    settings = RedisSettings.from_dsn(queue.redis_url)
    settings.conn_timeout = queue.redis_connect_timeout.total_seconds()  # type: ignore[assignment]
    return settings


class ArqQueue:
    """Enqueues into an arq queue on Redis."""

    def __init__(self, queue: QueueConfig) -> None:
        self.settings = redis_settings(queue)
        self.queue_name = queue.queue_name
        self.in_progress_timeout = queue.job_timeout + timedelta(seconds=10)
        """How long arq's in-progress mark of a job lives (arq: the longest job timeout plus 10 s)."""
        self._pool: ArqRedis | None = None
        self._leases: RedisLeaseStore | None = None
        self.deployment_id: str | None = None
        """This deployment's id, carried by every job it enqueues (`bind_deployment`)."""
        self._foreign: set[str] = set()

    def first_sight(self, deployment_id: str) -> bool:
        """Whether a job of that other deployment is seen here for the first time (the log names it once)."""
        if deployment_id in self._foreign:
            return False
        self._foreign.add(deployment_id)
        return True

    def bind_deployment(self, deployment_id: str | None) -> None:
        """Tag every job enqueued from now on with `deployment_id`."""
        self.deployment_id = deployment_id

    async def start(self) -> None:
        """Open the Redis pool; with Redis down, start anyway (tasks are stored; enqueues fail until it is back)."""
        settings = dataclasses.replace(self.settings, conn_retries=0)
        try:
            self._pool = await create_pool(settings, default_queue_name=self.queue_name)
        except (OSError, RedisError) as exc:
            logger.warning("Redis is unavailable at start (%s); jobs are enqueued once it is back", exc)
            self._pool = ArqRedis(
                host=settings.host,
                port=settings.port,
                db=settings.database,
                password=settings.password,
                username=settings.username,
                ssl=settings.ssl,
                socket_connect_timeout=settings.conn_timeout,
            )
            self._pool.default_queue_name = self.queue_name

    @property
    def pool(self) -> ArqRedis:
        """The Redis pool (after `start`)."""
        if self._pool is None:
            raise RuntimeError("ArqQueue.start() was not called")
        return self._pool

    @property
    def leases(self) -> RedisLeaseStore:
        """Leases in Redis under `<queue name>:lease`."""
        if self._leases is None:
            self._leases = RedisLeaseStore(self.pool, prefix=f"{self.queue_name}:lease")
        return self._leases

    async def enqueue(self, function: str, *args: Any, job_id: str | None = None, first: bool = False) -> bool:
        """Queue a job; False when arq still knows a job with this id (queued, running or its result kept).

        The id is scoped by the queue name: arq keeps `arq:job:<id>` and friends outside the queue's own key, so a
        job without an id of its own gets a random one under the same scope (two deployments on one Redis never
        share a key). `first` gives the job the score of a job deferred to 1970, so workers take it before the
        others waiting.
        """
        scoped = f"{self.queue_name}:{job_id if job_id is not None else uuid.uuid4().hex}"
        options: dict[str, Any] = {"_defer_until": _FRONT, "_expires": _JOB_EXPIRY} if first else {}
        if self.deployment_id is not None:
            options[DEPLOYMENT_KWARG] = self.deployment_id
        with redis_errors():
            job = await self.pool.enqueue_job(function, *args, _job_id=scoped, _queue_name=self.queue_name, **options)
        return job is not None

    async def put_back(self, function: str, args: tuple[Any, ...], deployment_id: str) -> None:
        """Queue again, under a fresh id and a little later, a job another deployment enqueued, with its id.

        Its owner's workers take it: nothing of that deployment is lost or waits for a sweep.
        """
        options: dict[str, Any] = {DEPLOYMENT_KWARG: deployment_id, "_defer_by": _PUT_BACK_DELAY}
        with redis_errors():
            await self.pool.enqueue_job(
                function, *args, _job_id=f"{self.queue_name}:{uuid.uuid4().hex}", _queue_name=self.queue_name, **options
            )

    async def stalled_jobs(self, picked_before: timedelta) -> list[str]:
        """Jobs of this queue whose in-progress mark was set at least `picked_before` ago (it dies with its TTL).

        A worker killed after arq marked a job but before the job took its lease leaves only this mark; arq itself
        would run the job again when the mark expires, `job_timeout` + 10 s later.
        """
        now_ms = int(datetime.now(UTC).timestamp() * 1000)
        with redis_errors():
            ids = await self.pool.zrangebyscore(self.queue_name, "-inf", now_ms)
            if not ids:
                return []
            async with self.pool.pipeline(transaction=False) as pipe:
                for job_id in ids:
                    pipe.pttl(in_progress_key_prefix + job_id.decode())
                ttls = await pipe.execute()
        newest = (self.in_progress_timeout - picked_before).total_seconds() * 1000
        prefix = f"{self.queue_name}:"
        return [
            job_id.decode().removeprefix(prefix) for job_id, ttl in zip(ids, ttls, strict=True) if 0 < ttl <= newest
        ]

    async def serve(self, ctx: dict[str, Any]) -> None:
        """Nothing: arq workers (`litestar userio worker`) run the jobs."""

    async def ready(self) -> bool:
        """Redis answers a PING."""
        try:
            return bool(await self.pool.ping())
        except (OSError, RedisError):
            return False

    async def close(self) -> None:
        """Close the Redis pool."""
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
