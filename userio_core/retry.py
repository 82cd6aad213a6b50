"""Retries on tenacity with one policy: a fixed number of attempts, capped exponential backoff, last error re-raised.

The server (jobs, hook workers, files) and the `userio` client both use it, so it imports nothing of
litestar_userio.

    async for attempt in retrying(attempts=3, on=WriteConflict, backoff=Backoff(0.5)):
        with attempt:
            await write()
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import tenacity

__all__ = ["NO_WAIT", "Backoff", "OnRetry", "Retryable", "retrying", "retrying_sync"]

Retryable = type[BaseException] | tuple[type[BaseException], ...] | Callable[[BaseException], bool]
"""The failures worth another attempt: exception types, or a predicate."""
OnRetry = Callable[[BaseException, int, float], None]
"""Told of a failure about to be retried: the error, the attempt that failed (from 1) and the wait in seconds."""


@dataclass(frozen=True)
class Backoff:
    """The wait after the n-th failed attempt: `first * 2**(n-1)` seconds, at most `cap`, times a random `jitter`."""

    first: float
    cap: float = math.inf
    jitter: tuple[float, float] = (1.0, 1.0)
    """The factor's range: (1, 5) spreads the waits of writers that collided."""

    def wait(self, attempt: int) -> float:
        """Seconds to wait after attempt `attempt` (from 1) failed."""
        low, high = self.jitter
        return min(self.first * 2.0 ** (attempt - 1), self.cap) * (random.uniform(low, high) if high > low else low)


NO_WAIT = Backoff(0.0)
"""Try again at once (the failure was a race, not an outage)."""


def retrying(
    *,
    attempts: int | None,
    on: Retryable,
    backoff: Backoff,
    on_retry: OnRetry | None = None,
    asked_wait: Callable[[BaseException], float | None] | None = None,
) -> tenacity.AsyncRetrying:
    """The attempts of one operation, to run as `async for attempt in ...: with attempt: ...`.

    Args:
        attempts: How many in all; None: until one succeeds (or the block returns).
        on: Which failures are retried; any other is re-raised at once.
        backoff: The wait between attempts.
        on_retry: Called before each wait (a note, a log line).
        asked_wait: The wait a failure asks for itself (an HTTP Retry-After), in place of the backoff; None: none.
    """
    return tenacity.AsyncRetrying(
        stop=_stop(attempts),
        retry=_condition(on),
        wait=_wait(backoff, asked_wait),
        before_sleep=_before_sleep(on_retry),
        reraise=True,
    )


def retrying_sync(*, attempts: int | None, on: Retryable, backoff: Backoff = NO_WAIT) -> tenacity.Retrying:
    """The same for blocking code, to run as `for attempt in ...: with attempt: ...`."""
    return tenacity.Retrying(stop=_stop(attempts), retry=_condition(on), wait=_wait(backoff, None), reraise=True)


def _stop(attempts: int | None) -> tenacity.stop.stop_base:
    return tenacity.stop_never if attempts is None else tenacity.stop_after_attempt(attempts)


def _condition(on: Retryable) -> tenacity.retry_base:
    if isinstance(on, type | tuple):
        return tenacity.retry_if_exception_type(on)
    return tenacity.retry_if_exception(on)


def _wait(
    backoff: Backoff, asked_wait: Callable[[BaseException], float | None] | None
) -> Callable[[tenacity.RetryCallState], float]:
    def wait(state: tenacity.RetryCallState) -> float:
        asked = asked_wait(_error(state)) if asked_wait is not None else None
        return asked if asked is not None else backoff.wait(state.attempt_number)

    return wait


def _before_sleep(on_retry: OnRetry | None) -> Callable[[tenacity.RetryCallState], None]:
    def before_sleep(state: tenacity.RetryCallState) -> None:
        if on_retry is not None:
            on_retry(_error(state), state.attempt_number, state.upcoming_sleep)

    return before_sleep


def _error(state: tenacity.RetryCallState) -> BaseException:
    assert state.outcome is not None
    error = state.outcome.exception()
    assert error is not None
    return error
