"""The Redis boundary: a Redis client error leaves our code as `QueueUnavailable`, and nothing above looks at it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec

from litestar_userio.errors import QueueUnavailable

__all__ = ["redis_errors"]


@contextmanager
def redis_errors() -> Iterator[None]:
    """Turn a Redis client error (refused, reset, timed out, loading) into `QueueUnavailable`."""
    try:
        yield
    except _ERRORS as error:
        raise QueueUnavailable() from error


def _client_errors() -> tuple[type[BaseException], ...]:
    """The Redis client's errors, when it is installed (the `redis` extra); OSError always."""
    if find_spec("redis") is None:
        return (OSError,)
    from redis.exceptions import RedisError

    return (RedisError, OSError)


_ERRORS = _client_errors()
