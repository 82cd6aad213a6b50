"""The arq worker process (`litestar userio worker`): the plugin's jobs, its services, a sweeper, restarts.

It sits above the queue layer: it builds `Services` and registers `litestar_userio.jobs`, which the queue
layer (`queue/arq.py`, enqueue only) never imports.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import signal
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any, cast

from arq.typing import WorkerCoroutine
from arq.worker import Retry, Worker, func
from redis.exceptions import RedisError

from litestar_userio.config import UserIOConfig
from litestar_userio.db.engine import Database
from litestar_userio.errors import ServiceUnavailable, WriteConflict
from litestar_userio.jobs import observe_queue, plugin_jobs
from litestar_userio.observability import telemetry
from litestar_userio.queue.arq import DEPLOYMENT_KWARG, ArqQueue, redis_settings
from litestar_userio.queue.queue_protocol import CONTEXT_KEY, JobFunction
from litestar_userio.services import Services
from userio_core.retry import Backoff

__all__ = ["build_worker", "check_worker", "run_worker", "serve_metrics"]

logger = logging.getLogger("litestar_userio.worker")

_CHECK_TIMEOUT = 5.0
"""Seconds `--check` may take in all (a probe's own timeout is usually a few seconds)."""


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


def _own_jobs_only(name: str, function: JobFunction) -> JobFunction:
    """Run a job of this deployment; put another deployment's job back for its owner, named in one log line.

    Two deployments whose workers read one Redis queue (the same `queue_name` and Redis database) take each other's
    jobs: a chunk job of the other deployment finds no chunk here and would count as done, its task left pending
    until a sweep. Each job carries its deployment's id (`queue/arq.py`); an untagged one (enqueued before the
    upgrade) runs here as before.
    """

    @functools.wraps(function)
    async def job(ctx: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        owner = kwargs.pop(DEPLOYMENT_KWARG, None)
        queue = ctx[CONTEXT_KEY].queue
        ours = queue.deployment_id
        if owner is None or ours is None or owner == ours:
            return await function(ctx, *args)
        if queue.first_sight(owner):
            logger.error(
                "queue %r on Redis is shared by two deployments: this one (deployment %s) and deployment %s, whose"
                " jobs this worker takes; give each deployment its own QueueConfig.queue_name or Redis database"
                " (their jobs are put back for their owner meanwhile)",
                queue.queue_name,
                ours,
                owner,
            )
        await queue.put_back(name, args, owner)
        return None

    return job


async def _sweep_forever(ctx: dict[str, Any], sweep: JobFunction, interval: timedelta) -> None:
    """The sweeper of one worker: every `interval`, unless another worker swept within it (a lease decides).

    It runs beside arq's job slots, not as a cron job: a cron job waits behind every job queued before it, and a
    sweeper stuck behind a long backlog would leave a dead worker's chunks waiting as long.
    """
    leases = ctx[CONTEXT_KEY].queue.leases
    owner = uuid.uuid4().hex
    while True:
        try:
            if await leases.acquire("sweep", owner, interval * 0.9):
                await sweep(ctx)
            else:  # every worker reports the queue, so a scrape of any of them shows it
                await observe_queue(ctx)
        except Exception as exc:  # the next tick tries again
            logger.warning("sweep failed: %s", exc)
        await asyncio.sleep(interval.total_seconds())


def build_worker(config: UserIOConfig, **overrides: Any) -> Worker:
    """An arq worker running the plugin's jobs for `config` (`litestar userio worker`, tests)."""
    if config.queue.redis_url is None:
        raise ValueError("the arq worker needs QueueConfig.redis_url")
    timeout = config.queue.job_timeout.total_seconds()
    jobs = plugin_jobs()
    functions = {name: f for name, f in jobs.functions.items() if name != jobs.recover}
    # workers share the queue: none may take the others' running work at its start

    async def startup(ctx: dict[str, Any]) -> None:
        queue = ArqQueue(config.queue)
        ctx[CONTEXT_KEY] = await Services.start(config, queue=queue)
        ctx["userio_sweeper"] = asyncio.create_task(
            _sweep_forever(ctx, functions[jobs.sweep], config.queue.sweep_interval), name="userio:sweeper"
        )

    settings: dict[str, Any] = {
        "functions": [
            func(
                cast("WorkerCoroutine", _own_jobs_only(name, _retry_when_unavailable(f))),
                name=name,
                timeout=timeout,
                max_tries=config.queue.max_tries,
            )
            for name, f in functions.items()
        ],
        "redis_settings": redis_settings(config.queue),
        "queue_name": config.queue.queue_name,
        "on_startup": startup,
        "on_shutdown": _shutdown,
        "max_jobs": config.queue.worker_max_jobs,
        "poll_delay": config.queue.worker_poll_delay,
        "job_timeout": timeout,
        "max_tries": config.queue.max_tries,
        "keep_result": 60,
    }
    settings.update(overrides)
    return Worker(**settings)


async def check_worker(config: UserIOConfig) -> bool:
    """Whether the database and Redis answer within a few seconds (`litestar userio worker --check`, a probe).

    Checked from a fresh process, as a container's probe runs it beside the worker.
    """
    if config.queue.redis_url is None:
        return False
    db = Database(config.database_url, pool_size=1)
    queue = ArqQueue(config.queue)
    try:
        async with asyncio.timeout(_CHECK_TIMEOUT):
            await db.start()
            await queue.start()
            return await db.ready() and await queue.ready()
    except Exception:  # unreachable, refused, timed out: not ready, whatever the cause
        return False
    finally:
        with contextlib.suppress(Exception):
            await queue.close()
        with contextlib.suppress(Exception):
            await db.close()


def serve_metrics(config: UserIOConfig, port: int | None = None) -> Callable[[], None]:
    """Start this worker process's own metrics endpoint (`MetricsConfig.worker_port`, or `port`); returns its stop.

    Each worker serves its own registry rather than prometheus-client's multiprocess mode: workers are separate
    processes, often on separate hosts, which Prometheus discovers anyway; multiprocess mode needs a shared
    directory and a cleanup on every worker exit, and would add the file writes to every increment of a hot path.
    """
    metrics = config.metrics
    port = port if port is not None else (metrics.worker_port if metrics is not None else None)
    if metrics is None or port is None:
        return lambda: None
    telemetry.configure(metrics, config.tracing)
    from litestar_userio.observability.metrics import serve

    try:
        return serve(port, metrics.worker_address)
    except OSError as exc:  # another worker of this host has the port: it runs, unscraped, rather than not at all
        logger.warning(
            "this worker serves no metrics: port %s is taken (%s); give each worker of a host its own --metrics-port",
            port,
            exc.strerror or exc,
        )
        return lambda: None


async def run_worker(
    config: UserIOConfig, *, burst: bool = False, restart_delay: float = 2.0, metrics_port: int | None = None
) -> None:
    """Run an arq worker until SIGINT/SIGTERM (or, with `burst`, until the queue is empty).

    arq's own loop dies when Redis goes away (and then hangs on its way out); this one closes that worker
    and starts another once Redis answers again. Work is never lost meanwhile: it is pending in the database,
    and the sweeper enqueues it again. With metrics configured, the process serves them on `metrics_port` (default
    `MetricsConfig.worker_port`) the whole time, across those restarts.
    """
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    stop_metrics = serve_metrics(config, metrics_port)
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
        stop_metrics()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def _shutdown(ctx: dict[str, Any]) -> None:
    """Stop the sweeper, then close the services.

    A sweeper left running on closed services would go on taking the sweep lease every round and fail, and the
    next worker's sweeper would never get it.
    """
    if "userio_sweeper" in ctx:
        ctx["userio_sweeper"].cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ctx["userio_sweeper"]
    if CONTEXT_KEY in ctx:
        await ctx[CONTEXT_KEY].close()


async def _close(worker: Worker) -> None:
    """Close a worker even when Redis is gone, or when one of its jobs ended cancelled.

    arq's `close` cancels the running jobs and gathers them: a job cancelled while it was still fetching itself
    from Redis ends cancelled, and the gather raises `CancelledError`; with Redis gone, `close` fails before its
    `on_shutdown`. Either way the rest of the close is done here. Let through, that `CancelledError` ended the
    worker process for good, and Redis coming back found no worker (test-hard's Redis-outage import never ended).
    """
    try:
        await worker.close()
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # this close itself was cancelled
        await _finish_close(worker)
    except Exception:
        await _finish_close(worker)


async def _finish_close(worker: Worker) -> None:
    """What arq's `close` left undone: wait for the cancelled jobs, stop the sweeper, close services and pool."""
    await asyncio.gather(*worker.tasks.values(), return_exceptions=True)
    await _shutdown(worker.ctx)
    if worker._pool is not None:
        with contextlib.suppress(Exception):
            await worker._pool.aclose()
