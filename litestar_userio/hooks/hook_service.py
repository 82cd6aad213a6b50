"""A project's blocking hooks: saving them (compiled, all or nothing, each save a version) and running them in order.

Several hooks on one event run in order, each seeing the previous one's payload (docs/reference.md#hooks-events). A
failure stops issuance (fail closed, no retries) unless that hook opted in to `on_error: "continue"`; the whole chain
shares one time budget per token. Hooks get the project's secrets as `ctx.secrets` and `fetch` to its allowlisted
origins; production runs go to the run log. Everything a hook's run gives back (its answer, console, error) has the
secrets masked (`SecretMask`) before anything else reads it.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import msgspec

from litestar_userio.config import HookConfig
from litestar_userio.db.engine import Database
from litestar_userio.errors import (
    ErrorObject,
    HookCompileFailed,
    HookDisallowed,
    HookError,
    HookInvalidResponse,
    HookResponseMalformed,
    HookSecretNotFound,
    HookSecretsDisabled,
    HookTimeout,
    HookVersionNotFound,
    HookWorkerUnavailable,
    Invalid,
    InvalidJWTMutations,
    WebHookDisallowed,
)
from litestar_userio.hooks.compiler import MAX_SOURCE_BYTES, HookCompileError, compile_hook
from litestar_userio.hooks.fetch import FetchClient, FetchLimits, FetchSession, parse_allowlist
from litestar_userio.hooks.hook_repository import HookRepository, HookRow, RunRow, VersionRow
from litestar_userio.hooks.lazy_migration_event import (
    MIGRATION_EVENT,
    build_migration_event,
    login_id_type,
    migration_response,
)
from litestar_userio.hooks.runlog import RunLog
from litestar_userio.hooks.secrets import SECRET_NAME, SecretBox, SecretMask, mask_console
from litestar_userio.hooks.syntax import v8_syntax_problem
from litestar_userio.hooks.token_events import EventContext, apply_response, build_event, user_object
from litestar_userio.hooks.user_events import (
    BLOCKING_USER_EVENTS,
    CHANGE_EVENTS,
    apply_user_mutations,
    build_user_event,
    record_changes,
)
from litestar_userio.hooks.v8_runtime import HookRuntime, HookSource, RuntimeLimits
from litestar_userio.observability import telemetry
from litestar_userio.statuses import error_object
from litestar_userio.users.model import UserState
from userio_core.clock import Clock

__all__ = ["ChainResult", "HookPreview", "HookRun", "HookService", "HookSpec", "SavedHook"]

logger = logging.getLogger(__name__)

_SAMPLE_USER_ID = "00000000-0000-4000-8000-000000000000"
"""The user of a save's trial run (`HookService.trial_warnings`): no stored user has it (ids are UUID v7)."""


class HookSpec(msgspec.Struct, forbid_unknown_fields=True):
    """A hook as an admin writes it: the event it blocks, its TypeScript, and what a failure does."""

    event: Literal[
        "oidc.jwt.pre_create",
        "oidc.id_token.pre_create",
        "user.password_migration",
        "user.pre_create",
        "user.profile.pre_update",
        "user.created",
        "user.profile.updated",
        "user.disabled",
        "user.reenabled",
        "user.deleted",
    ]
    """A blocking token or user event, or a non-blocking change event (run after commit, its answer ignored)."""
    source: str
    on_error: Literal["deny", "continue"] = "deny"
    """`deny`: a failure stops issuance (docs/reference.md#hooks-failures). `continue`: the token is issued without this
    hook's changes and the error is recorded (for enrichment hooks)."""


@dataclass(frozen=True)
class SavedHook:
    """A hook as stored: its TypeScript and the JavaScript compiled from it."""

    event: str
    source: str
    javascript: str
    source_id: str
    on_error: str = "deny"

    def runnable(self) -> HookSource:
        """What the runtime loads."""
        return HookSource(id=self.source_id, javascript=self.javascript)

    def spec(self) -> HookSpec:
        """The hook as the API shows it."""
        return HookSpec(self.event, self.source, self.on_error)  # type: ignore[arg-type]


class HookRun(msgspec.Struct, omit_defaults=True):
    """One hook's run: how long it took, what it printed, and its error if it failed."""

    index: int
    duration_ms: float
    console: list[dict[str, Any]]
    error: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    continued: bool = False
    """The hook failed and, with `on_error: "continue"`, issuance went on without its changes."""


@dataclass
class ChainResult:
    """The payload after every hook ran, and each hook's run."""

    payload: dict[str, Any]
    runs: list[HookRun] = field(default_factory=list)
    error: HookError | None = None


@dataclass(frozen=True)
class ProjectHooks:
    """What runs need of a project, cached for `cache_ttl`: hooks, allowlist, opened secrets."""

    hooks: list[SavedHook]
    allowlist: list[str]
    secrets: dict[str, str]


def _compile(index: int, spec: HookSpec) -> SavedHook:
    if len(spec.source.encode()) > MAX_SOURCE_BYTES:
        raise HookCompileFailed(index, 1, 1, f"the source is over {MAX_SOURCE_BYTES // 1024} KiB")
    try:
        compiled = compile_hook(spec.source)
    except HookCompileError as exc:
        raise HookCompileFailed(index, exc.line, exc.column, exc.message) from exc
    source_id = hashlib.sha256(compiled.javascript.encode()).hexdigest()
    return SavedHook(spec.event, spec.source, compiled.javascript, source_id, spec.on_error)


def _error_kind(error: HookError, runtime_kind: str | None) -> str:
    if runtime_kind is not None:
        return runtime_kind
    if isinstance(error, InvalidJWTMutations):
        return "invalid_mutations"
    if isinstance(error, HookTimeout):
        return "total_timeout"
    return "invalid_response"


@functools.cache
def _probe_hook() -> HookSource:
    """The readiness probe's hook, compiled on first use."""
    compiled = compile_hook("export default () => ({})")
    return HookSource(hashlib.sha256(compiled.javascript.encode()).hexdigest(), compiled.javascript)


class HookPreview(msgspec.Struct, omit_defaults=True):
    """What the hooks would do to a token: the final payload, the claims they add, each run, any error."""

    payload: dict[str, Any]
    added_claims: dict[str, Any]
    hooks: list[HookRun]
    error: ErrorObject | msgspec.UnsetType = msgspec.UNSET
    warnings: list[str] = msgspec.field(default_factory=list)
    """What makes the preview differ from real issuance (a client that gets opaque tokens runs no JWT hook)."""


class HookService:
    """Stores, compiles and runs hooks; the V8 workers start on the first run, not before."""

    def __init__(self, db: Database, config: HookConfig, clock: Clock) -> None:
        self.db = db
        self.config = config
        self.clock = clock
        self.runtime = HookRuntime(RuntimeLimits.of(config))
        self.repository = HookRepository()
        self.run_log = RunLog(db, config, clock)
        self.secret_box = SecretBox(config.secrets_key) if config.secrets_key else None
        self.fetch_limits = FetchLimits(max_calls=config.fetch_max_calls, max_body_bytes=config.fetch_max_body_bytes)
        self._fetch_client: FetchClient | None = None
        self._started = False
        self._cache: dict[str, tuple[float, ProjectHooks]] = {}

    async def close(self) -> None:
        """Stop the V8 workers, write the run log's buffer, close the fetch client."""
        if self._started:
            await self.runtime.close()
            self._started = False
        await self.run_log.close()
        if self._fetch_client is not None:
            await self._fetch_client.close()
            self._fetch_client = None

    async def ready(self) -> bool:
        """Whether the V8 pool runs a trivial hook within a second (readiness probe; it starts the pool if idle)."""
        if not self._started:
            await self.runtime.start()
            self._started = True
        outcome = await self.runtime.run(_probe_hook(), "{}", timeout=1.0, queue_timeout=1.0)
        return outcome.ok

    def fetch_client(self) -> FetchClient:
        """The process's pooled client for hooks' fetches, made on first use (loading CA certificates takes a while)."""
        if self._fetch_client is None:
            self._fetch_client = FetchClient(
                timeout=self.config.hook_timeout.total_seconds(), ca_file=self.config.fetch_ca_file
            )
        return self._fetch_client

    # Saving (the admin API).

    async def compile_all(self, specs: Sequence[HookSpec]) -> list[SavedHook]:
        """Compile every hook; the first that fails raises `HookCompileFailed` with its index and position.

        Each compiled hook must also load in V8: tree-sitter accepts some code V8 refuses.
        """
        if any(
            len([s for s in specs if s.event == event]) > self.config.max_hooks_per_event
            for event in {s.event for s in specs}
        ):
            raise Invalid(f"at most {self.config.max_hooks_per_event} hooks per event")
        compiled = [_compile(index, spec) for index, spec in enumerate(specs)]
        for index, hook in enumerate(compiled):
            if problem := await v8_syntax_problem(hook.javascript):
                raise HookCompileFailed(index, problem.line, problem.column, problem.message)
        return compiled

    async def replace(
        self,
        project_id: str,
        specs: Sequence[HookSpec],
        fetch_allowlist: Sequence[str] | None = None,
        actor: tuple[str | None, str | None] = (None, None),
    ) -> int:
        """Save the project's ordered hook list (and allowlist, when given) as a new version; returns its number.

        Nothing changes unless every hook compiles and every allowlist entry is an origin.
        """
        saved = await self.compile_all(specs)
        now = self.clock.now()
        async with self.db.transaction() as tx:
            if fetch_allowlist is None:
                allowlist = await self.repository.allowlist(tx, project_id)
            else:
                try:
                    allowlist = parse_allowlist(fetch_allowlist)
                except ValueError as exc:
                    raise Invalid(f"fetch_allowlist: {exc}") from exc
            rows = [HookRow(h.event, h.source, h.javascript, h.source_id, h.on_error) for h in saved]
            await self.repository.replace_hooks(tx, project_id, rows, now)
            body = {"hooks": [msgspec.to_builtins(h.spec()) for h in saved], "fetch_allowlist": allowlist}
            version = await self.repository.add_version(tx, project_id, body, allowlist, actor, now)
        self._cache.pop(project_id, None)
        return version

    async def settings(self, project_id: str) -> tuple[list[SavedHook], list[str]]:
        """The hooks and the fetch allowlist, as stored now."""
        async with self.db.reader() as tx:
            rows = await self.repository.hooks(tx, project_id)
            allowlist = await self.repository.allowlist(tx, project_id)
        return [SavedHook(r.event, r.source, r.javascript, r.source_id, r.on_error) for r in rows], allowlist

    async def list(self, project_id: str) -> list[SavedHook]:
        """The project's hooks in order; cached for `cache_ttl` (a save in this process clears it)."""
        return (await self._project(project_id)).hooks

    async def versions(self, project_id: str) -> builtins.list[VersionRow]:
        """Every saved version, newest first (without bodies)."""
        async with self.db.reader() as tx:
            return await self.repository.versions(tx, project_id)

    async def version(self, project_id: str, version: int) -> VersionRow:
        """One saved version with its body; `HookVersionNotFound` otherwise."""
        async with self.db.reader() as tx:
            row = await self.repository.version(tx, project_id, version)
        if row is None:
            raise HookVersionNotFound(f"no version {version} of this project's hooks")
        return row

    async def rollback(self, project_id: str, version: int, actor: tuple[str | None, str | None]) -> int:
        """Save the body of `version` again, as a new version; returns the new number."""
        body = (await self.version(project_id, version)).body
        specs = msgspec.convert(body.get("hooks", []), list[HookSpec])
        return await self.replace(project_id, specs, body.get("fetch_allowlist", []), actor)

    # Secrets (never returned, never logged).

    def _box(self) -> SecretBox:
        if self.secret_box is None:
            raise HookSecretsDisabled()
        return self.secret_box

    async def put_secret(self, project_id: str, name: str, value: str) -> datetime:
        """Set (or replace) a secret; returns its update time."""
        box = self._box()
        if not SECRET_NAME.fullmatch(name):
            raise Invalid("a secret name is a JavaScript identifier: letters, digits and _, at most 128 characters")
        if len(value.encode()) > self.config.max_secret_bytes:
            raise Invalid(f"a secret value is at most {self.config.max_secret_bytes} bytes")
        now = self.clock.now()
        async with self.db.transaction() as tx:
            names = {r["name"] for r in await self.repository.secrets(tx, project_id)}
            if name not in names and len(names) >= self.config.max_secrets:
                raise Invalid(f"at most {self.config.max_secrets} secrets per project")
            await self.repository.put_secret(tx, project_id, name, box.seal(project_id, name, value), now)
        self._cache.pop(project_id, None)
        return now

    async def delete_secret(self, project_id: str, name: str) -> None:
        """Delete a secret; `HookSecretNotFound` when there is none of that name."""
        self._box()
        async with self.db.transaction() as tx:
            deleted = await self.repository.delete_secret(tx, project_id, name)
        if not deleted:
            raise HookSecretNotFound()
        self._cache.pop(project_id, None)

    async def secret_names(self, project_id: str) -> builtins.list[tuple[str, datetime]]:
        """Names and update times, by name."""
        async with self.db.reader() as tx:
            rows = await self.repository.secrets(tx, project_id)
        return [(r["name"], r["updated_at"]) for r in rows]

    # The run log.

    async def runs(
        self, project_id: str, limit: int, cursor: int | None
    ) -> tuple[builtins.list[tuple[int, RunRow]], bool]:
        """A page of the run log, newest first, entries older than the `cursor` id; and whether more follow."""
        return await self.run_log.page(project_id, limit, cursor)

    # Running (the token service and the test endpoint).

    async def _project(self, project_id: str) -> ProjectHooks:
        cached = self._cache.get(project_id)
        if cached is not None and time.monotonic() - cached[0] < self.config.cache_ttl.total_seconds():
            return cached[1]
        async with self.db.reader() as tx:
            rows = await self.repository.hooks(tx, project_id)
            allowlist = await self.repository.allowlist(tx, project_id)
            sealed = await self.repository.secrets(tx, project_id) if self.secret_box is not None else []
        secrets: dict[str, str] = {}
        for row in sealed:
            assert self.secret_box is not None
            value = self.secret_box.open(project_id, row["name"], row["ciphertext"])
            if value is None:
                logger.warning(
                    "hook secret %r of project %s does not open with the configured key", row["name"], project_id
                )
            else:
                secrets[row["name"]] = value
        hooks = [SavedHook(r.event, r.source, r.javascript, r.source_id, r.on_error) for r in rows]
        project = ProjectHooks(hooks, allowlist, secrets)
        self._cache[project_id] = (time.monotonic(), project)
        return project

    async def run_chain(
        self,
        event_type: str,
        hooks: Sequence[SavedHook],
        user: UserState,
        payload: dict[str, Any],
        context: EventContext,
        *,
        raise_errors: bool = True,
        test: bool = False,
    ) -> ChainResult:
        """Run the hooks of `event_type` in order on `payload`; the result is what the token will carry.

        The project is `context.app_id`. `test` runs (the test endpoint) use the pool's test share and are not
        logged.
        """
        protected = dict(payload)

        def event_of(index: int, current: dict[str, Any]) -> dict[str, Any]:
            return build_event(event_type, user, current, context, self.clock.now(), seq=index + 1)

        def answer(response: Any, current: dict[str, Any]) -> dict[str, Any]:
            return apply_response(event_type, response, current, protected)

        return await self._run(
            event_type, hooks, context.app_id, payload, event_of, answer, raise_errors=raise_errors, test=test
        )

    async def run_migration(
        self, project_id: str, login_id: str, login_id_type: str, password: str, user: UserState | None
    ) -> dict[str, Any] | None:
        """Run the project's `user.password_migration` hooks; the import record they answered.

        See docs/reference.md#hooks-lazy-migration.

        Raises the `HookError` of a refusal, a failure or a malformed answer (sign-in then refuses: fails closed).
        The password is masked like a secret in everything kept of the run (console, errors, run log).
        """
        hooks = await self.list(project_id)
        result = await self._migration_chain(project_id, hooks, login_id, login_id_type, password, user)
        record = result.payload.get("user")
        return record if isinstance(record, dict) else None

    async def preview_migration(
        self,
        project_id: str,
        login_id: str,
        password: str,
        user: UserState | None,
        hooks: Sequence[SavedHook] | None = None,
    ) -> HookPreview:
        """Run the given (or the saved) `user.password_migration` hooks on an event of sign-in's shape (test endpoint).

        Nothing is created, stored or logged; `payload` is `{"user": <record>}` when a hook answered one.
        """
        chain = list(hooks) if hooks is not None else await self.list(project_id)
        result = await self._migration_chain(
            project_id, chain, login_id, login_id_type(login_id), password, user, test=True
        )
        warnings = [] if self.has_migration(chain) else [f"no {MIGRATION_EVENT} hook to run: nothing ran"]
        return HookPreview(
            payload=result.payload,
            added_claims={},
            hooks=result.runs,
            error=error_object(result.error) if result.error is not None else msgspec.UNSET,
            warnings=warnings,
        )

    async def _migration_chain(
        self,
        project_id: str,
        hooks: Sequence[SavedHook],
        login_id: str,
        kind: str,
        password: str,
        user: UserState | None,
        *,
        test: bool = False,
    ) -> ChainResult:
        now = self.clock.now()

        def event_of(index: int, current: dict[str, Any]) -> dict[str, Any]:
            event = build_migration_event(login_id, kind, password, user, project_id, now)
            return {**event, "seq": index + 1}

        def answer(response: Any, current: dict[str, Any]) -> dict[str, Any]:
            record = migration_response(response)
            return current if record is None else {"user": record}

        return await self._run(
            MIGRATION_EVENT, hooks, project_id, {}, event_of, answer, raise_errors=not test, test=test, masked=password
        )

    async def has_hooks(self, project_id: str, event_type: str) -> bool:
        """Whether the project has a hook on `event_type` (a change asks its blocking hooks only then)."""
        return any(h.event == event_type for h in await self.list(project_id))

    async def run_user_hooks(
        self, project_id: str, event_type: str, user: dict[str, Any], triggered_by: str
    ) -> dict[str, Any]:
        """Run the blocking user hooks of `event_type` on the user as it would be; what they changed (a record).

        The changes are members of an import record (empty: nothing). A refusal raises `WebHookDisallowed`
        (`info.reasons`: its `reason` and `title`); a hook that fails (an
        exception, a timeout, a malformed answer) raises its `HookError`: the change fails closed.
        """
        hooks = await self.list(project_id)
        now = self.clock.now()

        def event_of(index: int, current: dict[str, Any]) -> dict[str, Any]:
            return build_user_event(event_type, current["user"], now, triggered_by, seq=index + 1)

        def answer(response: Any, current: dict[str, Any]) -> dict[str, Any]:
            return {"user": apply_user_mutations(response, current["user"])}

        try:
            result = await self._run(event_type, hooks, project_id, {"user": user}, event_of, answer)
        except HookDisallowed as refusal:
            info = refusal.info or {}
            raise WebHookDisallowed([{"reason": info.get("reason", ""), "title": info.get("title", "")}]) from None
        return record_changes(user, result.payload["user"])

    async def run_change_hooks(self, project_id: str, event: dict[str, Any]) -> None:
        """Run the non-blocking hooks of the event's type (after commit); their answers are ignored.

        Their failures go to the run log. Never raises for what a hook does.
        """
        event_type = str(event["type"])

        def event_of(index: int, current: dict[str, Any]) -> dict[str, Any]:
            return event

        def answer(response: Any, current: dict[str, Any]) -> dict[str, Any]:
            return current

        hooks = [h for h in await self.list(project_id) if h.event == event_type]
        continuing = [SavedHook(h.event, h.source, h.javascript, h.source_id, "continue") for h in hooks]
        await self._run(event_type, continuing, project_id, {}, event_of, answer, raise_errors=False)

    def has_migration(self, hooks: Sequence[SavedHook]) -> bool:
        """Whether `hooks` include a `user.password_migration` hook (sign-in asks it only then)."""
        return any(h.event == MIGRATION_EVENT for h in hooks)

    async def trial_warnings(self, project_id: str, hooks: Sequence[SavedHook]) -> builtins.list[str]:
        """Each hook run once, alone, on a sample event of its kind; a warning for each that answers in a wrong shape.

        A save keeps a hook that compiles, but a hook answering `is_allowed: "yes"` would fail every token (the
        reference's `HookInvalidResponse`), so the save says so: `hooks[0] (oidc.jwt.pre_create): is_allowed must
        be a boolean, got "yes"`. The sample runs without network (`fetch` refused), on the test share, unlogged; a
        hook that throws or times out on it gets no warning (the sample is not a real user), nor one that refuses.
        """
        warnings: builtins.list[str] = []
        now = self.clock.now()
        sample = UserState(id=_SAMPLE_USER_ID, created_at=now, updated_at=now, standard={"name": "Sample User"})
        context = EventContext(client_id="sample-client", app_id=project_id, triggered_by="admin_api")
        for index, hook in enumerate(hooks):
            result = await self._trial(project_id, hook, sample, context, now)
            if isinstance(result.error, HookResponseMalformed | InvalidJWTMutations):
                warnings.append(
                    f"hooks[{index}] ({hook.event}): {result.error.message} on a sample event; saved, but every"
                    f" {hook.event} run answering so fails ({result.error.reason})"
                )
        return warnings

    async def _trial(
        self, project_id: str, hook: SavedHook, user: UserState, context: EventContext, now: datetime
    ) -> ChainResult:
        if hook.event == MIGRATION_EVENT:

            def migration_event(index: int, current: dict[str, Any]) -> dict[str, Any]:
                return build_migration_event("sample@example.com", "email", "sample-password", None, project_id, now)

            def migration_answer(response: Any, current: dict[str, Any]) -> dict[str, Any]:
                record = migration_response(response)
                return current if record is None else {"user": record}

            return await self._run(
                hook.event, [hook], project_id, {}, migration_event, migration_answer, raise_errors=False, test=True,
                fetch=False,
            )  # fmt: skip
        if hook.event in CHANGE_EVENTS:  # a non-blocking hook's answer is ignored: no shape to be wrong
            return ChainResult(payload={})
        if hook.event in BLOCKING_USER_EVENTS:

            def user_event(index: int, current: dict[str, Any]) -> dict[str, Any]:
                return build_user_event(hook.event, current["user"], now, "admin_api", seq=index + 1)

            def user_answer(response: Any, current: dict[str, Any]) -> dict[str, Any]:
                return {"user": apply_user_mutations(response, current["user"])}

            return await self._run(
                hook.event, [hook], project_id, {"user": user_object(user, now)}, user_event, user_answer,
                raise_errors=False, test=True, fetch=False,
            )  # fmt: skip
        issued = int(now.timestamp())
        claims = {"iss": "https://sample.invalid", "sub": user.id, "aud": ["sample-client"], "iat": issued,
                  "exp": issued + int(timedelta(minutes=30).total_seconds()), "jti": _SAMPLE_USER_ID}  # fmt: skip

        def event_of(index: int, current: dict[str, Any]) -> dict[str, Any]:
            return build_event(hook.event, user, current, context, now)

        def answer(response: Any, current: dict[str, Any]) -> dict[str, Any]:
            return apply_response(hook.event, response, current, claims)

        return await self._run(
            hook.event, [hook], project_id, dict(claims), event_of, answer, raise_errors=False, test=True, fetch=False
        )

    async def _run(
        self,
        event_type: str,
        hooks: Sequence[SavedHook],
        project_id: str,
        payload: dict[str, Any],
        event_of: Callable[[int, dict[str, Any]], dict[str, Any]],
        answer: Callable[[Any, dict[str, Any]], dict[str, Any]],
        *,
        raise_errors: bool = True,
        test: bool = False,
        masked: str | None = None,
        fetch: bool = True,
    ) -> ChainResult:
        """The hooks of `event_type` in order: `event_of` builds each one's event, `answer` reads its response.

        `masked`, a value beyond the project's secrets (a sign-in's password), is masked wherever a secret is;
        `fetch=False` (a save's trial run) refuses every `fetch`.
        """
        result = ChainResult(payload=payload)
        chain = [h for h in hooks if h.event == event_type]
        if not chain:
            return result
        if not self._started:
            await self.runtime.start()
            self._started = True
        project = await self._project(project_id)
        hidden = dict(project.secrets) if masked is None else {**project.secrets, "sign-in password": masked}
        masker = SecretMask(hidden.values())
        total = self.config.total_timeout.total_seconds()
        deadline = time.monotonic() + total
        for index, hook in enumerate(chain):
            remaining = deadline - time.monotonic()
            run = HookRun(index=index, duration_ms=0.0, console=[])
            result.runs.append(run)
            started_at = self.clock.now()
            before = result.payload
            runtime_kind: str | None = None
            queued_ms = 0.0
            try:
                if remaining <= 0:
                    raise HookTimeout("the hooks of this token ran out of their total time")
                event = event_of(index, result.payload)
                allowlist = project.allowlist if fetch else []
                fetcher = FetchSession(self.fetch_client(), allowlist, self.fetch_limits, hidden.values())
                with telemetry.span(
                    "userio.hook.run", {"userio.project_id": project_id, "userio.hook.event": event_type}
                ):
                    outcome = await self.runtime.run(
                        hook.runnable(),
                        msgspec.json.encode(event).decode(),
                        timeout=remaining,
                        tenant=project_id,
                        test=test,
                        queue_timeout=remaining,
                        secrets=project.secrets,
                        fetcher=fetcher,
                    )
                queued_ms = outcome.queued_ms
                run.duration_ms = round(outcome.duration_ms, 3)
                run.console = mask_console(list(outcome.console), hidden) + [
                    {"level": "error", "message": masker.text(error)} for error in fetcher.errors
                ]
                if not outcome.ok:
                    runtime_kind = outcome.error_kind
                    message = masker.text(outcome.error_message or "")
                    if outcome.error_kind == "timeout":
                        raise HookTimeout(f"hook {index} did not answer in time")
                    if outcome.error_kind == "no_worker":
                        raise HookWorkerUnavailable(f"hook {index} did not run: {message}")
                    raise HookInvalidResponse(f"hook {index} failed: {message}")
                # Masked before anything reads it: a refusal's title and reason, claims (their names too).
                response = masker.value(outcome.response)
                result.payload = answer(response, result.payload)
                telemetry.hook_run(event_type, "allowed", run.duration_ms / 1000, queued_ms / 1000)
                if not test:
                    self._log(project_id, event_type, index, started_at, run, "allowed", None, before, result.payload)
            except HookError as error:
                refused = isinstance(error, HookDisallowed)
                telemetry.hook_run(
                    event_type, "refused" if refused else "error", run.duration_ms / 1000, queued_ms / 1000
                )
                run.error = msgspec.to_builtins(error_object(error))
                if not refused:  # the run log's console says what went wrong (`is_allowed must be a boolean, ...`)
                    run.console = [*run.console, {"level": "error", "message": masker.text(error.message)}]
                if not test:
                    kind = None if refused else _error_kind(error, runtime_kind)
                    self._log(project_id, event_type, index, started_at, run, "refused" if refused else "error", kind)
                if hook.on_error == "continue" and not refused:
                    run.continued = True
                    continue
                result.error = error
                if raise_errors:
                    raise
                return result
        return result

    def _log(
        self,
        project_id: str,
        event_type: str,
        index: int,
        started_at: datetime,
        run: HookRun,
        outcome: str,
        error_kind: str | None,
        before: Mapping[str, Any] | None = None,
        after: Mapping[str, Any] | None = None,
    ) -> None:
        rate = self.run_log.keep(project_id, outcome)
        if rate is None:
            return
        added = [k for k in after if k not in before] if before is not None and after is not None else []
        entry = RunRow(event_type, index, started_at, run.duration_ms, outcome, error_kind, run.console, added, rate)
        self.run_log.record(project_id, entry)
