"""Job queues: arq on Redis, or the in-process runner; `build_queue` is the one place that chooses."""

from __future__ import annotations

from litestar_userio.config import UserIOConfig
from litestar_userio.extras import require
from litestar_userio.queue.queue_protocol import JobQueue, Jobs

__all__ = ["JobQueue", "Jobs", "build_queue"]


def build_queue(config: UserIOConfig, jobs: Jobs, *, run_jobs: bool = True) -> JobQueue:
    """The arq queue when the config names a Redis and this process serves jobs; else the in-process runner.

    `run_jobs=False` (CLI commands) gives an in-process queue that is never served: nothing runs, nothing connects.
    """
    if config.queue.redis_url and run_jobs:
        require("arq", "redis", "QueueConfig.redis_url")
        from litestar_userio.queue.arq import ArqQueue

        return ArqQueue(config.queue)
    from litestar_userio.queue.inprocess import InProcessQueue

    return InProcessQueue(
        jobs.functions,
        concurrency=config.queue.concurrency,
        max_tries=config.queue.max_tries,
        sweep_job=jobs.sweep,
        recover_job=jobs.recover,
        sweep_interval=config.queue.sweep_interval,
    )
