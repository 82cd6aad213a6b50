"""A project's blocking hooks: saving them (compiled, all or nothing) and running them in order (SPEC 6.1).

Several hooks on one event run in order, each seeing the previous one's payload (DECISIONS 5). Every
failure stops issuance (fail closed, no retries); the whole chain shares one time budget per token.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from litestar_userio.clock import Clock
from litestar_userio.config import HookConfig
from litestar_userio.db.engine import Database
from litestar_userio.errors import (
    HookCompileFailed,
    HookError,
    HookInvalidResponse,
    HookTimeout,
    Invalid,
)
from litestar_userio.hooks.compiler import MAX_SOURCE_BYTES, HookCompileError, compile_hook
from litestar_userio.hooks.events import EventContext, apply_response, build_event
from litestar_userio.hooks.runtime import HookRuntime, HookSource, RuntimeLimits
from litestar_userio.hooks.syntax import v8_syntax_problem
from litestar_userio.users.model import UserState

__all__ = ["ChainResult", "HookRun", "HookService", "HookSpec", "SavedHook"]


class HookSpec(msgspec.Struct, forbid_unknown_fields=True):
    """A hook as an admin writes it: the event it blocks and its TypeScript."""

    event: Literal["oidc.jwt.pre_create", "oidc.id_token.pre_create"]
    source: str


@dataclass(frozen=True)
class SavedHook:
    """A hook as stored: its TypeScript and the JavaScript compiled from it."""

    event: str
    source: str
    javascript: str
    source_id: str

    def runnable(self) -> HookSource:
        """What the runtime loads."""
        return HookSource(id=self.source_id, javascript=self.javascript)


class HookRun(msgspec.Struct, omit_defaults=True):
    """One hook's run: how long it took, what it printed, and its error if it stopped issuance."""

    index: int
    duration_ms: float
    console: list[dict[str, Any]]
    error: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET


@dataclass
class ChainResult:
    """The payload after every hook ran, and each hook's run."""

    payload: dict[str, Any]
    runs: list[HookRun] = field(default_factory=list)
    error: HookError | None = None


def _compile(index: int, spec: HookSpec) -> SavedHook:
    if len(spec.source.encode()) > MAX_SOURCE_BYTES:
        raise HookCompileFailed(index, 1, 1, f"the source is over {MAX_SOURCE_BYTES // 1024} KiB")
    try:
        compiled = compile_hook(spec.source)
    except HookCompileError as exc:
        raise HookCompileFailed(index, exc.line, exc.column, exc.message) from exc
    source_id = hashlib.sha256(compiled.javascript.encode()).hexdigest()
    return SavedHook(spec.event, spec.source, compiled.javascript, source_id)


class HookService:
    """Stores, compiles and runs hooks; the V8 workers start on the first run, not before."""

    def __init__(self, db: Database, config: HookConfig, clock: Clock) -> None:
        self.db = db
        self.config = config
        self.clock = clock
        self.runtime = HookRuntime(
            RuntimeLimits(
                hook_timeout=config.hook_timeout.total_seconds(),
                heap_limit_mb=config.heap_limit_mb,
                console_limit_bytes=config.console_limit_bytes,
                pool_size=config.pool_size,
            )
        )
        self._started = False
        self._cache: dict[str, tuple[float, list[SavedHook]]] = {}

    async def close(self) -> None:
        """Stop the V8 workers."""
        if self._started:
            await self.runtime.close()
            self._started = False

    # Saving (the admin API).

    async def compile_all(self, specs: Sequence[HookSpec]) -> list[SavedHook]:
        """Compile every hook; the first that fails raises `HookCompileFailed` with its index and position.

        Each compiled hook must also load in V8: tree-sitter accepts some code V8 refuses.
        """
        if (
            len([s for s in specs if s.event == "oidc.jwt.pre_create"]) > self.config.max_hooks_per_event
            or len([s for s in specs if s.event == "oidc.id_token.pre_create"]) > self.config.max_hooks_per_event
        ):
            raise Invalid(f"at most {self.config.max_hooks_per_event} hooks per event")
        compiled = [_compile(index, spec) for index, spec in enumerate(specs)]
        for index, hook in enumerate(compiled):
            if problem := await v8_syntax_problem(hook.javascript):
                raise HookCompileFailed(index, problem.line, problem.column, problem.message)
        return compiled

    async def replace(self, project_id: str, specs: Sequence[HookSpec]) -> list[SavedHook]:
        """Save the project's ordered hook list; nothing changes unless every hook compiles."""
        saved = await self.compile_all(specs)
        now = self.clock.now()
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM userio_hook WHERE project_id = $1", project_id)
            await tx.insert_many(
                "userio_hook",
                ("project_id", "position", "event", "source", "javascript", "source_id", "created_at"),
                [
                    (project_id, position, hook.event, hook.source, hook.javascript, hook.source_id, now)
                    for position, hook in enumerate(saved)
                ],
            )
        self._cache.pop(project_id, None)
        return saved

    async def list(self, project_id: str) -> list[SavedHook]:
        """The project's hooks in order; cached for `cache_ttl` (a save in this process clears it)."""
        cached = self._cache.get(project_id)
        if cached is not None and time.monotonic() - cached[0] < self.config.cache_ttl.total_seconds():
            return cached[1]
        async with self.db.reader() as tx:
            rows = await tx.fetch(
                "SELECT event, source, javascript, source_id FROM userio_hook WHERE project_id = $1 ORDER BY position",
                project_id,
            )
        hooks = [SavedHook(r["event"], r["source"], r["javascript"], r["source_id"]) for r in rows]
        self._cache[project_id] = (time.monotonic(), hooks)
        return hooks

    # Running (the token service and the test endpoint).

    async def run_chain(
        self,
        event_type: str,
        hooks: Sequence[SavedHook],
        user: UserState,
        payload: dict[str, Any],
        context: EventContext,
        *,
        raise_errors: bool = True,
    ) -> ChainResult:
        """Run the hooks of `event_type` in order on `payload`; the result is what the token will carry."""
        result = ChainResult(payload=payload)
        chain = [h for h in hooks if h.event == event_type]
        if not chain:
            return result
        if not self._started:
            await self.runtime.start()
            self._started = True
        protected = dict(payload)
        deadline = time.monotonic() + self.config.total_timeout.total_seconds()
        for index, hook in enumerate(chain):
            remaining = deadline - time.monotonic()
            run = HookRun(index=index, duration_ms=0.0, console=[])
            result.runs.append(run)
            try:
                if remaining <= 0:
                    raise HookTimeout("the hooks of this token ran out of their total time")
                event = build_event(event_type, user, result.payload, context, self.clock.now(), seq=index + 1)
                outcome = await self.runtime.run(
                    hook.runnable(),
                    msgspec.json.encode(event).decode(),
                    timeout=min(remaining, self.config.hook_timeout.total_seconds()),
                )
                run.duration_ms = round(outcome.duration_ms, 3)
                run.console = list(outcome.console)
                if not outcome.ok:
                    if outcome.error_kind == "timeout":
                        raise HookTimeout(f"hook {index} did not answer in time")
                    raise HookInvalidResponse(f"hook {index} failed: {outcome.error_message}")
                result.payload = apply_response(event_type, outcome.response, result.payload, protected)
            except HookError as error:
                run.error = msgspec.to_builtins(error.to_object())
                result.error = error
                if raise_errors:
                    raise
                return result
        return result
