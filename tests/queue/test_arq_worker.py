"""The arq worker takes its settings from `QueueConfig`, and restarts cleanly after losing Redis."""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from arq import create_pool
from arq.worker import Worker
from redis.exceptions import TimeoutError as RedisTimeout

from litestar_userio import UserIOConfig
from litestar_userio.config import ExportConfig, LocalStorageConfig, QueueConfig
from litestar_userio.worker import _close, build_worker, run_worker
from tests.conftest import sqlite_connection_threads
from tests.faults.test_faults import PrivateRedis
from tests.imports.test_worker_kill import wait_for


def _worker(**queue: Any) -> Worker:
    config = UserIOConfig(
        database_url="sqlite:///unused.sqlite3", queue=QueueConfig(redis_url="redis://127.0.0.1", **queue)
    )
    return build_worker(config, handle_signals=False)


def _config(redis: PrivateRedis, sqlite_url: str, tmp_path: Path, **queue: Any) -> UserIOConfig:
    """A worker's config on a private Redis and queue, with an SQLite database and local export storage."""
    return UserIOConfig(
        database_url=sqlite_url,
        queue=QueueConfig(redis_url=redis.url, queue_name=f"userio:test:{uuid.uuid4().hex[:8]}", **queue),
        exports=ExportConfig(storage=LocalStorageConfig(directory=tmp_path)),
    )


def test_a_worker_looks_for_jobs_every_50_ms_unless_told_otherwise() -> None:
    # arq's own 0.5 s left a worker idle between bursts of chunks with hundreds queued (bench/import.py).
    assert _worker().poll_delay_s == 0.05
    assert _worker(worker_poll_delay=timedelta(milliseconds=200)).poll_delay_s == 0.2
    assert _worker(worker_max_jobs=3).max_jobs == 3


@pytest.mark.parametrize(
    ("connect_timeout", "connects"), [(None, True), (timedelta(seconds=1), False)], ids=["default", "arq-1s"]
)
async def test_a_worker_connects_to_redis_on_a_loop_blocked_past_one_second(
    tmp_path: Path, connect_timeout: timedelta | None, connects: bool
) -> None:
    """A worker opens a Redis connection per running job. At arq's 1 s limit, a connect resumed by a loop busy for
    longer timed out inside arq, which stopped a burst worker (a test run with ~20 jobs on 2 busy cores); the 1 s
    case shows the block is long enough to fail."""
    redis = PrivateRedis(tmp_path)
    redis.start()
    queue = {"redis_connect_timeout": connect_timeout} if connect_timeout else {}
    config = _config(redis, "sqlite:///unused.sqlite3", tmp_path, **queue)
    settings = build_worker(config, handle_signals=False).redis_settings
    pool = await create_pool(settings)
    connection = pool.connection_pool.connection_class(**pool.connection_pool.connection_kwargs)  # as arq's pool does
    try:
        connecting = asyncio.create_task(connection.connect())  # type: ignore[no-untyped-call]  # redis-py's
        asyncio.get_running_loop().call_soon(time.sleep, 1.5)  # the loop's other jobs, all at once
        if connects:
            await connecting
            await connection.send_command("PING")
            assert await connection.read_response() in (b"PONG", "PONG")
        else:
            with pytest.raises(RedisTimeout):
                await connecting
    finally:
        await connection.disconnect()
        await pool.aclose()
        redis.stop()


async def test_a_worker_restarted_after_losing_redis_keeps_one_sweeper(sqlite_url: str, tmp_path: Path) -> None:
    """The worker that lost Redis stops its sweeper: left running on closed services, it took the sweep lease every
    round and failed, and the restarted worker's sweeper never swept (test-hard's Redis-outage import never ended)."""
    redis = PrivateRedis(tmp_path)
    redis.start()
    config = _config(redis, sqlite_url, tmp_path, sweep_interval=timedelta(seconds=0.2))
    running = asyncio.create_task(run_worker(config, restart_delay=0.2))
    try:
        first = await wait_for(_sole_sweeper, timeout=20, interval=0.05)
        redis.stop()
        await wait_for(_done(first), timeout=20, interval=0.05)
        redis.start()
        second = await wait_for(_sole_sweeper, timeout=20, interval=0.05)
        await asyncio.sleep(1)  # a few sweep rounds

        assert _sweepers() == [second] and second is not first
    finally:
        if not running.done():
            os.kill(os.getpid(), signal.SIGTERM)  # run_worker's own stop signal
        await asyncio.wait_for(running, 30)
        redis.stop()


async def test_a_worker_whose_job_ends_cancelled_still_closes(sqlite_url: str, tmp_path: Path) -> None:
    """arq's `close` gathers the jobs it cancels: one cancelled while fetching itself from Redis ends cancelled, and
    the gather raised `CancelledError`. It ended the worker process (the Redis-outage import in test-hard never
    finished); now the close goes on: the job is waited for, the sweeper stopped, the services closed."""
    redis = PrivateRedis(tmp_path)
    redis.start()
    config = _config(redis, sqlite_url, tmp_path)
    threads_before = set(sqlite_connection_threads())
    worker = build_worker(config, handle_signals=False)
    main = asyncio.create_task(worker.async_run())
    try:
        sweeper = await wait_for(_sole_sweeper, timeout=20, interval=0.05)
        fetching = asyncio.create_task(asyncio.Event().wait())  # a job arq cancels before it ran: it ends cancelled
        worker.tasks["fetching"] = fetching
        main.cancel()

        await _close(worker)

        assert fetching.cancelled()
        assert sweeper.done()
        for _ in range(100):  # a closed connection's thread ends a moment later
            if set(sqlite_connection_threads()) <= threads_before:
                break
            await asyncio.sleep(0.05)
        assert set(sqlite_connection_threads()) <= threads_before, "the services' database was not closed"
    finally:
        main.cancel()
        redis.stop()


def _sweepers() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name() == "userio:sweeper" and not t.done()]


async def _sole_sweeper() -> asyncio.Task[Any] | None:
    sweepers = _sweepers()
    return sweepers[0] if len(sweepers) == 1 else None


def _done(task: asyncio.Task[Any]) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return task.done()

    return check
