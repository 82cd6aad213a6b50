"""Password checks at sign-in without a denial of service: a bounded pool of threads that projects share fairly.

One bcrypt check at cost 12 takes about 330 ms of a core; an Argon2 check may also hold hundreds of MiB. Run on
asyncio's default executor, a flood of wrong passwords against one project filled every thread and every other
project's sign-ins queued behind it. Here each project may hold at most `threads_per_project` of the `threads`, so
the others always find a thread free or wait behind at most one round of checks per busy project; memory-hard
checks (Argon2, scrypt) also wait for their memory within `max_memory`, after their project's slot, so one project
holds at most its slots' worth of it; and the work of one project's checks running or waiting is bounded
(`max_pending_per_project` checks of bcrypt cost 10, or their equivalent in any format), beyond which an attempt is
refused at once (`PasswordVerificationBusy`). Every format (`passwords/formats.py`) runs here, and so does the
re-hash of a legacy password at its first good sign-in.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from litestar_userio.config import PasswordConfig, PasswordHashBounds
from litestar_userio.errors import PasswordVerificationBusy
from litestar_userio.observability import telemetry
from litestar_userio.passwords.formats import (
    ARGON2ID_MEMORY,
    BCRYPT_MAX_BYTES,
    HashError,
    HashPolicy,
    LegacyHash,
    hash_password,
    load_stored,
    parse_password,
    stored_format,
)

__all__ = ["BCRYPT_MAX_BYTES", "PasswordVerifier", "bcrypt_cost", "hash_format"]

logger = logging.getLogger("litestar_userio.users")

T = TypeVar("T")
_DUMMY_PASSWORD = b"userio-dummy"


def bcrypt_cost(password_hash: str) -> int | None:
    """The cost of a `$2a$`/`$2b$`/`$2y$` hash, or None when it has none readable."""
    digits = password_hash[4:6]
    return int(digits) if password_hash[:4] in {"$2a$", "$2b$", "$2y$"} and digits.isdigit() else None


class PasswordVerifier:
    """Checks passwords against stored hashes of any format on its own threads, a bounded share per project."""

    def __init__(self, config: PasswordConfig, max_cost: int, bounds: PasswordHashBounds | None = None) -> None:
        self.config = config
        self.max_cost = max_cost
        self.policy = HashPolicy(bounds or PasswordHashBounds(), max_cost, allow_weak=True)
        """What a stored hash may cost: weak formats were allowed by the project when they were imported."""
        self._executor = ThreadPoolExecutor(max_workers=config.threads, thread_name_prefix="userio-passwords")
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._pending: Counter[str] = Counter()
        self._work: dict[str, float] = {}
        self._memory_used = 0
        self._memory_waiters: deque[tuple[int, asyncio.Future[None]]] = deque()
        self._dummies: dict[str, LegacyHash] = {}
        self._dummy_lock = asyncio.Lock()
        self.runs: Counter[str] = Counter()
        """Checks run on the pool in this process, by the format of the hash checked (an unknown login id's dummy
        check counts as the dummy's format): what the pool did, for tests and operators."""

    async def check(self, project_id: str, password: str, stored: str | None, algorithm: str = "bcrypt") -> bool:
        """Whether `password` matches a stored hash; a missing one (unknown user) is checked against the dummy hash.

        The dummy is a fixed hash of the project's `algorithm` at the cost a re-hash gives (`_dummy`), so an unknown
        login id costs what a known one does once its hash was re-hashed. A hash above its format's bound (it could
        only have come in before the limit existed) or one that no longer parses is never run: the attempt fails
        after the dummy check, as an unknown user's does; so does a user waiting for lazy migration
        (`migrate_on_sign_in`: no hash here, docs/reference.md#hooks-lazy-migration).
        """
        candidate = password.encode()
        legacy = None
        if stored is not None:
            try:
                legacy = parse_password(load_stored(stored), self.policy)
            except HashError as exc:
                logger.warning(
                    "a %s password hash of project %s is not checked: it %s",
                    stored_format(stored),
                    project_id,
                    exc.message,
                )
        if legacy is None or legacy.verify is None:
            dummy = await self._dummy(algorithm)
            check = dummy.verify
            assert check is not None
            self.runs[dummy.type] += 1
            await self._run(project_id, lambda: check(candidate), dummy.work, dummy.memory)
            return False
        verify = legacy.verify
        self.runs[legacy.type] += 1
        try:
            return await self._run(project_id, lambda: verify(candidate), legacy.work, legacy.memory, label=legacy.type)
        except ValueError:  # a hash the library cannot read after all
            return False

    async def verify(self, project_id: str, legacy: LegacyHash, password: str) -> bool:
        """Whether `password` matches a parsed hash (a dry run's known pair), on the pool like a sign-in.

        Admitted even when the project's sign-ins are busy: a dry run checks its pairs one at a time.
        """
        candidate, verify = password.encode(), legacy.verify
        if verify is None:
            return False
        try:
            return await self._run(project_id, lambda: verify(candidate), legacy.work, legacy.memory, admit=True)
        except ValueError:
            return False

    async def hash(self, project_id: str, password: str, algorithm: str) -> str:
        """`password` hashed with `algorithm` (the stored form), on the pool: a re-hash is admitted even when busy."""
        memory = ARGON2ID_MEMORY if algorithm == "argon2id" else 0
        work = 1.0 if algorithm == "argon2id" else 2.0 ** (self.config.bcrypt_cost - 10)
        encoded = password.encode()
        return await self._run(
            project_id, lambda: hash_password(encoded, algorithm, self.config.bcrypt_cost), work, memory, admit=True
        )

    async def _run(
        self,
        project_id: str,
        call: Callable[[], T],
        work: float,
        memory: int,
        *,
        admit: bool = False,
        label: str = "none",
    ) -> T:
        pending_work = self._work.get(project_id, 0.0)
        if not admit and pending_work and pending_work + work > self.config.max_pending_per_project:
            telemetry.password_checked(label, "busy")
            raise PasswordVerificationBusy()
        self._pending[project_id] += 1
        self._work[project_id] = pending_work + work
        slots = self._slots.get(project_id)
        if slots is None:
            slots = self._slots[project_id] = asyncio.Semaphore(self.config.threads_per_project)
        memory = min(memory, self.config.max_memory)  # a check above the budget runs alone
        try:
            await slots.acquire()
        except BaseException:
            self._release(project_id, None, work, 0)
            raise
        try:
            await self._reserve(memory)
        except BaseException:
            self._release(project_id, slots, work, 0)
            raise
        loop = asyncio.get_running_loop()
        # The slot is given back when the thread is done, not when the caller stops waiting (a client that
        # disconnects mid-check must not free its project's share while the thread still works for it).
        future = self._executor.submit(call)
        future.add_done_callback(lambda _: _call_soon(loop, self._release, project_id, slots, work, memory))
        return await asyncio.wrap_future(future)

    async def _reserve(self, memory: int) -> None:
        """Wait, first come first served, until `memory` bytes fit in `max_memory` beside the checks running."""
        if memory == 0:
            return
        if not self._memory_waiters and self._memory_used + memory <= self.config.max_memory:
            self._memory_used += memory
            return
        waiter = asyncio.get_running_loop().create_future()
        self._memory_waiters.append((memory, waiter))
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._free(memory)  # granted as it was cancelled: give it back
            else:
                self._memory_waiters.remove((memory, waiter))
            raise

    def _free(self, memory: int) -> None:
        self._memory_used -= memory
        while self._memory_waiters:
            wanted, waiter = self._memory_waiters[0]
            if self._memory_used + wanted > self.config.max_memory:
                break
            self._memory_waiters.popleft()
            self._memory_used += wanted
            waiter.set_result(None)

    def _release(self, project_id: str, slots: asyncio.Semaphore | None, work: float, memory: int) -> None:
        if memory:
            self._free(memory)
        if slots is not None:
            slots.release()
        self._pending[project_id] -= 1
        self._work[project_id] -= work
        if self._pending[project_id] <= 0:
            del self._pending[project_id]
            self._slots.pop(project_id, None)
            self._work.pop(project_id, None)

    async def _dummy(self, algorithm: str) -> LegacyHash:
        """The fixed hash unknown users are checked against, made once per process.

        `algorithm` is the project's `password_algorithm`, at the cost a re-hash gives (bcrypt: `dummy_hash_cost`, by
        default `bcrypt_cost`).
        """
        async with self._dummy_lock:
            dummy = self._dummies.get(algorithm)
            if dummy is None:
                cost = self.config.dummy_hash_cost or self.config.bcrypt_cost
                stored = await asyncio.wrap_future(
                    self._executor.submit(hash_password, _DUMMY_PASSWORD, algorithm, cost)
                )
                dummy = self._dummies[algorithm] = parse_password(load_stored(stored), self.policy)
            return dummy

    def close(self) -> None:
        """Stop the threads once the checks under way are done."""
        self._executor.shutdown(wait=False, cancel_futures=True)

    def pending(self) -> int:
        """Checks running or waiting in this process (a metric)."""
        return sum(self._pending.values())


def hash_format(password_hash: str | None) -> str:
    """The stored hash's format as a metric label: its `password.type` (`bcrypt`, `argon2`, ...) or `none`."""
    return "none" if password_hash is None else stored_format(password_hash)


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[..., object], *args: object) -> None:
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:  # the loop is closed: nothing is waiting any more
        pass
