"""bcrypt at sign-in without a denial of service: a bounded pool of threads that projects share fairly.

One bcrypt check at cost 12 takes about 330 ms of a core. Run on asyncio's default executor, a flood of wrong
passwords against one project filled every thread and every other project's sign-ins queued behind it. Here
each project may hold at most `threads_per_project` of the `threads`, so the others always find a thread
free or wait behind at most one round of checks per busy project; and the work of one project's checks running
or waiting is bounded (`max_pending_per_project` checks of cost 10, or their equivalent: a burst of cheap
checks passes, a few costly ones fill it), beyond which an attempt is refused at once (`PasswordVerificationBusy`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import bcrypt

from litestar_userio.config import PasswordConfig
from litestar_userio.errors import PasswordVerificationBusy
from litestar_userio.observability import telemetry

__all__ = ["BCRYPT_MAX_BYTES", "PasswordVerifier", "bcrypt_cost", "hash_format"]

logger = logging.getLogger("litestar_userio.users")

BCRYPT_MAX_BYTES = 72
"""bcrypt compares only the first 72 bytes, as the systems the hashes come from did."""
_DUMMY_PASSWORD = b"userio-dummy"
_REFERENCE_COST = 10
"""Pending work is counted in checks of this cost: a cost-12 check counts 4, a cost-4 check 1/64."""


def bcrypt_cost(password_hash: str) -> int | None:
    """The cost of a `$2a$`/`$2b$`/`$2y$` hash, or None when it has none readable."""
    digits = password_hash[4:6]
    return int(digits) if password_hash[:4] in {"$2a$", "$2b$", "$2y$"} and digits.isdigit() else None


class PasswordVerifier:
    """Checks passwords against bcrypt hashes on its own threads, a bounded share per project."""

    def __init__(self, config: PasswordConfig, max_cost: int) -> None:
        self.config = config
        self.max_cost = max_cost
        self._executor = ThreadPoolExecutor(max_workers=config.threads, thread_name_prefix="userio-bcrypt")
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._pending: Counter[str] = Counter()
        self._work: dict[str, float] = {}
        self._dummy_hash: bytes | None = None
        self._dummy_lock = asyncio.Lock()

    async def check(self, project_id: str, password: str, password_hash: str | None) -> bool:
        """Whether `password` matches; a missing hash (unknown user) is checked against the fixed dummy hash.

        A hash above `max_cost` (it could only have come in before the limit existed) is never run: the attempt
        fails after the dummy check, as an unknown user's does.
        """
        candidate = password.encode()[:BCRYPT_MAX_BYTES]
        cost = bcrypt_cost(password_hash) if password_hash is not None else None
        if cost is not None and cost > self.max_cost:
            logger.warning(
                "a password hash of project %s has cost %s, above the maximum %s", project_id, cost, self.max_cost
            )
            password_hash = None
        if password_hash is None:
            await self._run(project_id, candidate, await self._dummy())
            return False
        try:
            return await self._run(project_id, candidate, password_hash.encode())
        except ValueError:  # not a bcrypt hash bcrypt can read
            return False

    async def hash(self, password: str) -> str:
        """A new bcrypt hash of `password` at `PasswordConfig.hash_cost`, on the pool's threads (first 72 bytes)."""
        salt = bcrypt.gensalt(rounds=self.config.hash_cost)
        hashed = await asyncio.wrap_future(
            self._executor.submit(bcrypt.hashpw, password.encode()[:BCRYPT_MAX_BYTES], salt)
        )
        return hashed.decode()

    async def _run(self, project_id: str, candidate: bytes, hashed: bytes) -> bool:
        cost = bcrypt_cost(hashed[:7].decode("ascii", "replace"))
        work = 2.0 ** ((cost if cost is not None else _REFERENCE_COST) - _REFERENCE_COST)
        pending_work = self._work.get(project_id, 0.0)
        if pending_work and pending_work + work > self.config.max_pending_per_project:
            telemetry.password_checked("bcrypt", "busy")
            raise PasswordVerificationBusy()
        self._pending[project_id] += 1
        self._work[project_id] = pending_work + work
        slots = self._slots.get(project_id)
        if slots is None:
            slots = self._slots[project_id] = asyncio.Semaphore(self.config.threads_per_project)
        try:
            await slots.acquire()
        except BaseException:
            self._release(project_id, None, work)
            raise
        loop = asyncio.get_running_loop()
        # The slot is given back when the thread is done, not when the caller stops waiting (a client that
        # disconnects mid-check must not free its project's share while the thread still works for it).
        future = self._executor.submit(bcrypt.checkpw, candidate, hashed)
        future.add_done_callback(lambda _: _call_soon(loop, self._release, project_id, slots, work))
        return await asyncio.wrap_future(future)

    def _release(self, project_id: str, slots: asyncio.Semaphore | None, work: float) -> None:
        if slots is not None:
            slots.release()
        self._pending[project_id] -= 1
        self._work[project_id] -= work
        if self._pending[project_id] <= 0:
            del self._pending[project_id]
            self._slots.pop(project_id, None)
            self._work.pop(project_id, None)

    async def _dummy(self) -> bytes:
        """The fixed hash unknown users are checked against, made once per process at the configured cost."""
        async with self._dummy_lock:
            if self._dummy_hash is None:
                salt = bcrypt.gensalt(rounds=self.config.dummy_hash_cost)
                self._dummy_hash = await asyncio.wrap_future(
                    self._executor.submit(bcrypt.hashpw, _DUMMY_PASSWORD, salt)
                )
            return self._dummy_hash

    def close(self) -> None:
        """Stop the threads once the checks under way are done."""
        self._executor.shutdown(wait=False, cancel_futures=True)

    def pending(self) -> int:
        """Checks running or waiting in this process (a metric)."""
        return sum(self._pending.values())


def hash_format(password_hash: str | None) -> str:
    """The stored hash's format as a metric label: `bcrypt`, `none` (no user or no password) or `other`."""
    if password_hash is None:
        return "none"
    return "bcrypt" if bcrypt_cost(password_hash) is not None else "other"


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[..., object], *args: object) -> None:
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:  # the loop is closed: nothing is waiting any more
        pass
