"""Jobs on Redis through arq: the queue the web process enqueues into, and the worker that runs them.

Any number of worker processes may share a queue. A running job holds a lease in Redis and renews it; when its
worker is killed the lease lapses within `lease_ttl`, and the sweeper (every `sweep_interval`) enqueues the work
again under a fresh job id. arq would also run the dead job again once its in-progress mark expires
(`job_timeout` + 10 s); by then it finds the work done. The job functions are idempotent (import chunks commit
their writes and their done-mark together).

Every key this deployment writes carries the queue name: job ids, rate-limit buckets and leases (the sweeper's
included), so deployments sharing a Redis never meet.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import signal
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from arq.constants import in_progress_key_prefix
from arq.typing import WorkerCoroutine
from arq.worker import Retry, Worker, func
from redis.exceptions import RedisError

from litestar_userio.config import UserIOConfig
from litestar_userio.errors import ServiceUnavailable, WriteConflict
from litestar_userio.queue.base import JobFunction
from litestar_userio.queue.connections import redis_errors
from litestar_userio.queue.leases import RedisLeaseStore
from litestar_userio.queue.registry import RECOVER_JOB, SWEEP_JOB, job_functions
from litestar_userio.ratelimit import RedisRateLimiter
from litestar_userio.retry import Backoff

__all__ = ["ArqQueue", "build_worker", "run_worker"]

logger = logging.getLogger("litestar_userio.queue")

_FRONT = datetime.fromtimestamp(1, UTC)
_JOB_EXPIRY = timedelta(days=1)
"""arq's default expiry of a queued job; given explicitly with `_FRONT`, whose score would make arq's negative."""


class ArqQueue:
    """Enqueues into an arq queue on Redis."""

    def __init__(self, redis_url: str, queue_name: str, job_timeout: timedelta = timedelta(minutes=2)) -> None:
        self.redis_url = redis_url
        self.queue_name = queue_name
        self.in_progress_timeout = job_timeout + timedelta(seconds=10)
        """How long arq's in-progress mark of a job lives (arq: the longest job timeout plus 10 s)."""
        self._pool: ArqRedis | None = None
        self._limiter: RedisRateLimiter | None = None
        self._leases: RedisLeaseStore | None = None

    async def start(self) -> None:
        """Open the Redis pool; with Redis down, start anyway (tasks are stored; enqueues fail until it is back)."""
        settings = RedisSettings.from_dsn(self.redis_url)
        settings.conn_retries = 0
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
    def limiter(self) -> RedisRateLimiter:
        """Buckets in Redis under `<queue name>:ratelimit`."""
        if self._limiter is None:
            self._limiter = RedisRateLimiter(self.pool, prefix=f"{self.queue_name}:ratelimit")
        return self._limiter

    @property
    def leases(self) -> RedisLeaseStore:
        """Leases in Redis under `<queue name>:lease`."""
        if self._leases is None:
            self._leases = RedisLeaseStore(self.pool, prefix=f"{self.queue_name}:lease")
        return self._leases

    async def enqueue(self, function: str, *args: Any, job_id: str | None = None, first: bool = False) -> bool:
        """Queue a job; False when arq still knows a job with this id (queued, running or its result kept).

        The id is scoped by the queue name: arq keeps `arq:job:<id>` and friends outside the queue's own key.
        `first` gives the job the score of a job deferred to 1970, so workers take it before the others waiting.
        """
        scoped = f"{self.queue_name}:{job_id}" if job_id is not None else None
        options: dict[str, Any] = {"_defer_until": _FRONT, "_expires": _JOB_EXPIRY} if first else {}
        with redis_errors():
            job = await self.pool.enqueue_job(function, *args, _job_id=scoped, _queue_name=self.queue_name, **options)
        return job is not None

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

    async def close(self) -> None:
        """Close the Redis pool."""
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None


def _retry_when_unavailable(function: JobFunction) -> JobFunction:
    """Turn a database or Redis outage into arq's `Retry` (with backoff): arq retries nothing else.

    Conflicts that outlasted their retries too. The work is pending in the database either way; retrying soon
    just spares waiting for the sweeper.
    """

    @functools.wraps(function)
    async def job(ctx: dict[str, Any], *args: Any) -> Any:
        try:
            return await function(ctx, *args)
        except (ServiceUnavailable, WriteConflict) as exc:
            raise Retry(defer=Backoff(2.0, cap=30.0).wait(int(ctx.get("job_try", 1)))) from exc

    return job


async def _sweep_forever(ctx: dict[str, Any], sweep: JobFunction, interval: timedelta) -> None:
    """The sweeper of one worker: every `interval`, unless another worker swept within it (a lease decides).

    It runs beside arq's job slots, not as a cron job: a cron job waits behind every job queued before it, and a
    sweeper stuck behind a long backlog would leave a dead worker's chunks waiting as long.
    """
    leases = ctx["userio"].queue.leases
    owner = uuid.uuid4().hex
    while True:
        try:
            if await leases.acquire("sweep", owner, interval * 0.9):
                await sweep(ctx)
        except Exception as exc:  # the next tick tries again
            logger.warning("sweep failed: %s", exc)
        await asyncio.sleep(interval.total_seconds())


def build_worker(config: UserIOConfig, **overrides: Any) -> Worker:
    """An arq worker running the plugin's jobs for `config` (`litestar userio worker`, tests)."""
    if config.queue.redis_url is None:
        raise ValueError("the arq worker needs QueueConfig.redis_url")
    timeout = config.queue.job_timeout.total_seconds()
    functions = job_functions()
    functions.pop(RECOVER_JOB)  # workers share the queue: none may take the others' running work at its start

    async def startup(ctx: dict[str, Any]) -> None:
        from litestar_userio.services import Services

        queue = ArqQueue(config.queue.redis_url or "", config.queue.queue_name, config.queue.job_timeout)
        ctx["userio"] = await Services.start(config, queue=queue)
        ctx["userio_sweeper"] = asyncio.create_task(
            _sweep_forever(ctx, functions[SWEEP_JOB], config.queue.sweep_interval), name="userio:sweeper"
        )

    async def shutdown(ctx: dict[str, Any]) -> None:
        if "userio_sweeper" in ctx:
            ctx["userio_sweeper"].cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ctx["userio_sweeper"]
        if "userio" in ctx:
            await ctx["userio"].close()

    settings: dict[str, Any] = {
        "functions": [
            func(
                cast("WorkerCoroutine", _retry_when_unavailable(f)),
                name=name,
                timeout=timeout,
                max_tries=config.queue.max_tries,
            )
            for name, f in functions.items()
        ],
        "redis_settings": RedisSettings.from_dsn(config.queue.redis_url),
        "queue_name": config.queue.queue_name,
        "on_startup": startup,
        "on_shutdown": shutdown,
        "max_jobs": config.queue.worker_max_jobs,
        "job_timeout": timeout,
        "max_tries": config.queue.max_tries,
        "keep_result": 60,
    }
    settings.update(overrides)
    return Worker(**settings)


async def run_worker(config: UserIOConfig, *, burst: bool = False, restart_delay: float = 2.0) -> None:
    """Run an arq worker until SIGINT/SIGTERM (or, with `burst`, until the queue is empty).

    arq's own loop dies when Redis goes away (and then hangs on its way out); this one closes that worker
    and starts another once Redis answers again. Work is never lost meanwhile: it is pending in the database,
    and the sweeper enqueues it again.
    """
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        while not stop.is_set():
            worker = build_worker(config, burst=burst, handle_signals=False)
            main = asyncio.create_task(worker.async_run())
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({main, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not main.done():
                main.cancel()
            failure: BaseException | None = None
            try:
                await main
            except asyncio.CancelledError:
                pass
            except Exception as exc:
                failure = exc
            await _close(worker)
            if failure is None:
                if burst or stop.is_set():
                    return
                continue
            if not isinstance(failure, ServiceUnavailable | RedisError | OSError):  # arq's own loop talks to Redis
                raise failure
            logger.warning("the worker lost Redis or the database (%s); restarting in %.0f s", failure, restart_delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), restart_delay)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def _close(worker: Worker) -> None:
    """Close a worker even when Redis is gone (arq's `close` then fails before closing our services)."""
    try:
        await worker.close()
    except Exception:
        services = worker.ctx.get("userio")
        if services is not None:
            await services.close()
        if worker._pool is not None:
            with contextlib.suppress(Exception):
                await worker._pool.aclose()
