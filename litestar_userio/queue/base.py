"""What the services need from a job queue; arq and the in-process runner both provide it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

__all__ = ["JobFunction", "JobQueue"]

JobFunction = Callable[..., Awaitable[Any]]
"""`async def job(ctx: dict[str, Any], *args)`: arq's signature; `ctx["userio"]` is the `Services`."""


class JobQueue(Protocol):
    """Enqueues jobs by function name."""

    async def enqueue(self, function: str, *args: Any, job_id: str | None = None) -> bool:
        """Queue `function(ctx, *args)`; False when a job with `job_id` is already known."""
        ...

    async def start(self) -> None:
        """Connect, or start running jobs."""
        ...

    async def close(self) -> None:
        """Disconnect, or stop running jobs."""
        ...
