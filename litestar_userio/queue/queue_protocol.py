"""What the services need from a job queue; arq and the in-process runner both provide it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from litestar_userio.queue.leases import LeaseStore

__all__ = ["CONTEXT_KEY", "JobFunction", "JobQueue", "Jobs"]

CONTEXT_KEY = "userio"
"""The key the plugin's `Services` sit under in a job's context (arq's `ctx`)."""

JobFunction = Callable[..., Awaitable[Any]]
"""`async def job(ctx: dict[str, Any], *args)`: arq's signature; `ctx[CONTEXT_KEY]` is the `Services`."""


@dataclass(frozen=True)
class Jobs:
    """What a queue runs, handed to it from above (`litestar_userio.jobs`): the queue knows no job of its own."""

    functions: Mapping[str, JobFunction]
    """Every job function by the name it is enqueued under."""
    sweep: str
    """The periodic housekeeping job, run by each process that serves jobs (one at a time across a deployment)."""
    recover: str
    """The job that takes over a previous process's work at the start of an in-process runner."""


class JobQueue(Protocol):
    """Enqueues jobs by function name, and brings the helpers that must live where the jobs run.

    The lease store comes with the backend (Redis for arq, memory for the in-process runner), so nothing else needs
    to know which backend runs. Rate-limit buckets are not the queue's: they are taken in the database, inside the
    transaction that admits the work (`ratelimit.py`).
    """

    @property
    def leases(self) -> LeaseStore:
        """Leases of running jobs, visible to whoever may take their work over."""
        ...

    async def enqueue(self, function: str, *args: Any, job_id: str | None = None, first: bool = False) -> bool:
        """Queue `function(ctx, *args)`; False when a job with `job_id` is already known.

        `first` puts the job ahead of those waiting: work taken over from a dead worker has waited already.
        """
        ...

    async def stalled_jobs(self, picked_before: timedelta) -> list[str]:
        """Ids of jobs a worker took at least `picked_before` ago and has not finished (it may have died).

        The in-process runner has none to report: its jobs die only with the process.
        """
        ...

    def bind_deployment(self, deployment_id: str | None) -> None:
        """The deployment's id (`Database.deployment_id`), which a shared queue's jobs carry (arq); None: untagged."""
        ...

    async def start(self) -> None:
        """Connect (arq); nothing for the in-process runner."""
        ...

    async def ready(self) -> bool:
        """Whether jobs can be enqueued now (readiness probe): Redis answers, or always for the in-process runner."""
        ...

    async def serve(self, ctx: dict[str, Any]) -> None:
        """Begin running jobs in this process with `ctx` (in-process runner); nothing for arq (workers run them)."""
        ...

    async def close(self) -> None:
        """Disconnect, or stop running jobs."""
        ...
