"""Time as a dependency, so expiry rules are tested by moving a clock rather than sleeping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

__all__ = ["Clock", "FrozenClock", "SystemClock"]


class Clock(Protocol):
    """Gives the current time in UTC."""

    def now(self) -> datetime:
        """Return the current aware UTC time."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """Return the current aware UTC time."""
        return datetime.now(UTC)


class FrozenClock:
    """A clock that only moves when told to (tests)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime.now(UTC)

    def now(self) -> datetime:
        """Return the frozen time."""
        return self._now

    def advance(self, delta: timedelta) -> None:
        """Move the clock forward."""
        self._now += delta
