"""Property and hostile-input tests: the import against a reference model, export requests, compiler fuzzing.

Hypothesis profiles: `userio-quick` (the default: few examples, derandomized so CI is stable, no example database)
and `userio-hard` (many random examples, failures saved in `.hypothesis/`), chosen with
`USERIO_HYPOTHESIS_PROFILE=hard`. The tests here take `PROFILE` as their parent settings rather than loading a
profile globally, so the rest of the suite keeps its own Hypothesis settings.

Async tests and Hypothesis: an `async def` test decorated with `@given` works under pytest-asyncio (1.x), which wraps
Hypothesis' inner test so that each example's coroutine runs to completion on the session event loop (the loop every
fixture here lives on). Fixtures are set up once per test, not per example, so each example makes its own project
(`HealthCheck.function_scoped_fixture` is suppressed for that reason); shrinking and the falsifying example report
work as for a sync test.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["PROFILE", "PROFILE_NAME", "many", "scaled"]

_SHARED = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
}

settings.register_profile("userio-quick", max_examples=30, derandomize=True, database=None, **_SHARED)
settings.register_profile("userio-hard", max_examples=200, **_SHARED)

PROFILE_NAME = "userio-hard" if os.environ.get("USERIO_HYPOTHESIS_PROFILE") == "hard" else "userio-quick"
PROFILE = settings.get_profile(PROFILE_NAME)
"""Parent settings of every property test in this directory; tests scale `max_examples` from it."""


def scaled(fraction: float) -> settings:
    """The profile with `fraction` times its examples: below 1 where examples are expensive, above where cheap."""
    return settings(PROFILE, max_examples=max(5, int(PROFILE.max_examples * fraction)))


def many(hard: int, main: int) -> int:
    """`hard` examples under the hard profile, `main` otherwise: for a property test outside this directory that
    keeps its own settings (random, with the example database) and is cheap enough for thousands of examples.
    `make test-hard` runs its file with the hard profile (the Makefile names it), so CI still tries `hard`."""
    return hard if PROFILE_NAME == "userio-hard" else main
