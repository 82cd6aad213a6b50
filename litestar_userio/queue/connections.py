"""The Redis boundary: a Redis client error leaves our code as `QueueUnavailable`, and nothing above looks at it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from redis.exceptions import RedisError

from litestar_userio.errors import QueueUnavailable

__all__ = ["redis_errors"]


@contextmanager
def redis_errors() -> Iterator[None]:
    """Turn a Redis client error (refused, reset, timed out, loading) into `QueueUnavailable`."""
    try:
        yield
    except (RedisError, OSError) as error:
        raise QueueUnavailable() from error
