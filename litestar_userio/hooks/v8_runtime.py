"""Run compiled hooks in embedded V8, each within a hard time and memory limit (docs/reference.md#hooks-runtime).

The warm V8 contexts live in child processes (`v8_worker.py`), a pool of `pool_size`, each serving one run at a time
over its stdin/stdout. The parent, on the event loop, owns every deadline: a worker that has not answered when the
run's time is up is SIGKILLed and replaced. That is the only stop that always works: mini-racer's own timeout cannot
interrupt JavaScript that runs as promise jobs (`await null; while (true) {}`), and such a context cannot even be
closed. A child also confines memory: its heap limit ends the run, anything worse ends the process, never the server.

Inside a worker every object a hook can reach is frozen, timers and the other ways to run code later are removed,
and each run evaluates the hook's module scope afresh, so no run can see or change what another run sees. Why child
processes, the IPC chosen and the measured costs: docs/hooks-runtime.md.

Tenants are isolated: a project holds at most `tenant_share` workers at once, test runs together at most
`test_share`, and the pool grows up to `max_pool_size` for whoever may still run. Waiting for a worker is bounded
by `queue_timeout`, apart from the hook's own time, and ends in the error kind `no_worker`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import struct
import sys
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from litestar_userio.config import HookConfig
from userio_core.retry import Backoff, retrying

__all__ = ["ErrorKind", "Fetcher", "HookRunResult", "HookRuntime", "HookSource", "PoolState", "RuntimeLimits"]

logger = logging.getLogger(__name__)

ErrorKind = Literal["exception", "timeout", "memory", "invalid_json", "crashed", "no_worker"]

Fetcher = Callable[[list[dict[str, Any]]], Awaitable[list[dict[str, Any]]]]
"""Performs a run's `fetch` requests for it (`hooks.fetch`); one per run, so it can count the run's calls."""

WORKER_PROGRAM = str(Path(__file__).with_name("v8_worker.py"))
"""The Python program each worker process runs (`python v8_worker.py HEAP_MB CONSOLE_BYTES PARENT_PID`)."""
_HEADER = struct.Struct("<cIIII")  # kind (b"R" run, b"F" fetch answers), four lengths
_LENGTH = struct.Struct("<I")
_START_TIMEOUT = 30.0
_RESPAWN = Backoff(0.1, cap=5.0)
"""Waits between tries to start a missing worker: quick after a fluke, at most every 5 s while V8 cannot start."""
_STOP_GRACE = 1.0
_PIPES_GRACE = 0.1
_STDERR_TAIL = 8192
# A worker caps answers at 1 Mi characters of JSON (3 MiB of UTF-8) and console text at console_limit_bytes (escaped
# in JSON, at most 6 bytes each); a longer frame cannot come from a sound worker.
_MAX_ANSWER_BYTES = 4 << 20
_KNOWN_HOOKS = 256  # per worker; the worker keeps as many, and says so when it has forgotten one
_KEPT_ENVIRONMENT = frozenset({"PATH", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "SYSTEMROOT"})


@dataclass(frozen=True)
class HookSource:
    """What the runtime loads; a worker compiles a hook once per `id`, so the id must change with the code."""

    id: str
    """A digest of `javascript`, e.g. its SHA-256."""
    javascript: str
    """`CompiledHook.javascript`."""


_HOOKS = HookConfig()
"""Where the limits' defaults are written (`HookConfig`), read once here for a runtime built without a config."""


@dataclass(frozen=True)
class RuntimeLimits:
    """Bounds of every run, in the runtime's units (seconds); the defaults are `HookConfig`'s.

    See docs/reference.md#hooks-runtime.
    """

    hook_timeout: float = _HOOKS.hook_timeout.total_seconds()
    """Seconds per hook call, from the moment it has a worker (waiting for one is `queue_timeout`)."""
    heap_limit_mb: int = _HOOKS.heap_limit_mb
    """V8 heap per worker; a run that goes over it fails with "memory" and the worker is replaced."""
    console_limit_bytes: int = _HOOKS.console_limit_bytes
    """Console text kept per run (UTF-8), then a truncation marker."""
    pool_size: int = _HOOKS.pool_size
    """Warm workers (child processes), each running one hook at a time; the pool never shrinks below it."""
    max_pool_size: int = _HOOKS.max_pool_size
    """The pool grows up to this many workers while runs that may start wait; idle extra ones are stopped."""
    tenant_share: int = _HOOKS.tenant_share
    """Workers one tenant (project) may hold at once, production and test runs together."""
    test_share: int = _HOOKS.test_share
    """Workers test runs of all tenants may hold at once, so they never take what token issuance needs."""
    queue_timeout: float = _HOOKS.queue_timeout.total_seconds()
    """Seconds a run may wait for a worker, apart from the hook's own time; then it fails with `no_worker`."""
    min_idle: int = 1
    """Workers kept idle (within `max_pool_size`) while others are busy, so a project that arrives while other
    projects hold workers finds one at once instead of waiting for a start (about 150 ms)."""
    idle_timeout: float = _HOOKS.idle_timeout.total_seconds()
    """An idle worker above `pool_size` is stopped after this many seconds."""

    @classmethod
    def of(cls, config: HookConfig) -> RuntimeLimits:
        """The limits a `HookConfig` sets (a `max_pool_size` below `pool_size` is read as `pool_size`)."""
        return cls(
            hook_timeout=config.hook_timeout.total_seconds(),
            heap_limit_mb=config.heap_limit_mb,
            console_limit_bytes=config.console_limit_bytes,
            pool_size=config.pool_size,
            max_pool_size=max(config.max_pool_size, config.pool_size),
            tenant_share=config.tenant_share,
            test_share=config.test_share,
            queue_timeout=config.queue_timeout.total_seconds(),
            idle_timeout=config.idle_timeout.total_seconds(),
        )


class HookRunResult(msgspec.Struct):
    """The outcome of one hook call; `ok` is false for every failure, which the token service treats as a refusal."""

    ok: bool
    response: Any | None
    """The hook's answer, JSON-decoded, when ok."""
    error_kind: ErrorKind | None
    error_message: str | None
    """For exceptions, with the position in the author's TypeScript: `TypeError: ... (hook.ts:3:11)`."""
    console: list[dict[str, str]]
    """`{"level": "log" | "info" | "warn" | "error", "message": ...}` in order, bounded by `console_limit_bytes`."""
    duration_ms: float
    """Wall time of the call, from `run()` to its answer (waiting for a worker included)."""
    queued_ms: float = 0.0
    """Of which waiting for a worker."""


@dataclass(frozen=True)
class PoolState:
    """A snapshot of the pool, for tests, metrics and benchmarks."""

    workers: frozenset[int]
    """Process ids of the live workers."""
    idle: int
    """Live workers waiting for a run."""
    starting: int
    """Workers being started."""
    busy: Mapping[str, int]
    """Workers in use per tenant."""
    waiting: int
    """Runs waiting for a worker."""


class _Reply(msgspec.Struct, omit_defaults=True):
    """A worker's answer (see `v8_worker.py`)."""

    ok: bool
    r: Any = None
    k: ErrorKind | None = None
    m: str | None = None
    c: list[dict[str, str]] = []
    retire: bool = False
    missing: bool = False
    loaded: bool = True
    fetch: list[dict[str, Any]] | None = None


class _Pipes(asyncio.SubprocessProtocol):
    """Frames from a worker's stdout; keeps the end of its stderr for crash reports."""

    def __init__(self, max_frame: int) -> None:
        self.max_frame = max_frame
        self.transport: asyncio.SubprocessTransport | None = None
        self.buffer = bytearray()
        self.frames: deque[bytes] = deque()
        self.waiter: asyncio.Future[bytes | None] | None = None
        self.stderr = bytearray()
        self.exited = asyncio.get_running_loop().create_future()

    def next_frame(self) -> asyncio.Future[bytes | None]:
        """The next reply; None if the process exits first (or the caller's timer fires)."""
        waiter: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
        if self.frames:
            waiter.set_result(self.frames.popleft())
        elif self.exited.done():
            waiter.set_result(None)
        else:
            self.waiter = waiter
        return waiter

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 2:
            self.stderr += data
            del self.stderr[:-_STDERR_TAIL]
            return
        buffer = self.buffer
        buffer += data
        while len(buffer) >= 4:
            (size,) = _LENGTH.unpack_from(buffer)
            if size > self.max_frame and self.transport is not None:  # treated as a crash
                buffer.clear()
                with contextlib.suppress(ProcessLookupError):
                    self.transport.kill()
                return
            if len(buffer) < 4 + size:
                return
            frame = bytes(buffer[4 : 4 + size])
            del buffer[: 4 + size]
            waiter, self.waiter = self.waiter, None
            if waiter is None:
                self.frames.append(frame)
            elif not waiter.done():
                waiter.set_result(frame)

    def process_exited(self) -> None:
        # Its last words (V8's "out of memory") may still be in the pipes: wait for them to close, but not forever.
        asyncio.get_running_loop().call_later(_PIPES_GRACE, self._finish)

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()  # the process has exited and both pipes are closed

    def _finish(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if not self.exited.done():
            self.exited.set_result(None)


class _Worker:
    """One child process and the hooks it has loaded."""

    def __init__(self, transport: asyncio.SubprocessTransport, pipes: _Pipes) -> None:
        self.transport = transport
        self.pipes = pipes
        self.stdin: Any = transport.get_pipe_transport(0)
        self.pid: int = transport.get_pid()
        self.known: OrderedDict[str, None] = OrderedDict()
        self.retired = False
        self.idle_timer: asyncio.TimerHandle | None = None
        self.ready = False

    def remember(self, hook_id: str) -> None:
        """The worker holds this hook now; the oldest are forgotten, as the worker forgets them."""
        self.known[hook_id] = None
        self.known.move_to_end(hook_id)
        if len(self.known) > _KNOWN_HOOKS:
            self.known.popitem(last=False)

    def request(self, hook: HookSource, event: bytes, context: bytes, *, load: bool) -> asyncio.Future[bytes | None]:
        """Send one run; the future is its reply."""
        waiter = self.pipes.next_frame()
        if not waiter.done():
            hook_id = hook.id.encode()
            javascript = hook.javascript.encode() if load else b""
            header = _HEADER.pack(b"R", len(hook_id), len(javascript), len(event), len(context))
            self.stdin.write(header + hook_id + javascript + event + context)
        return waiter

    def answer_fetches(self, answers: bytes) -> asyncio.Future[bytes | None]:
        """Send the answers to a run's fetch requests; the future is the run's next frame."""
        waiter = self.pipes.next_frame()
        if not waiter.done():
            self.stdin.write(_HEADER.pack(b"F", 0, 0, len(answers), 0) + answers)
        return waiter

    def kill(self) -> None:
        self.retired = True
        if not self.pipes.exited.done():
            with contextlib.suppress(ProcessLookupError):
                self.transport.kill()

    def stderr_tail(self) -> str:
        return self.pipes.stderr.decode(errors="replace")[-2000:].strip()

    def crash_kind(self) -> ErrorKind:
        """V8 aborts the process when it cannot grow its heap; anything else is a crash."""
        text = self.pipes.stderr.decode(errors="replace").lower()
        return "memory" if "out of memory" in text else "crashed"


@dataclass(eq=False)
class _Waiter:
    """A run waiting for a worker."""

    tenant: str
    test: bool
    future: asyncio.Future[_Worker | None]


class HookRuntime:
    """A pool of warm V8 workers that runs hooks with hard limits; one instance per process, started once."""

    def __init__(self, limits: RuntimeLimits = RuntimeLimits(), *, program: str = WORKER_PROGRAM) -> None:
        """`program` is what each worker process runs: `WORKER_PROGRAM`, or a wrapper around it (a sandbox)."""
        self.limits = limits
        self.program = program
        self._idle: deque[_Worker] = deque()
        self._waiting: deque[_Waiter] = deque()
        self._workers: set[_Worker] = set()
        self._spawning: set[asyncio.Task[None]] = set()
        self._reaping: set[asyncio.Task[None]] = set()
        self._busy: Counter[str] = Counter()
        self._test_busy = 0
        self._start_lock = asyncio.Lock()
        self._started = False
        self._closed = False

    async def start(self) -> None:
        """Spawn and warm the pool; `run()` does it on first use if nobody did."""
        async with self._start_lock:
            if self._closed:
                raise RuntimeError("the hook runtime is closed")
            if self._started:
                return
            spawned = await asyncio.gather(
                *(self._spawn() for _ in range(self.limits.pool_size)), return_exceptions=True
            )
            workers = [w for w in spawned if isinstance(w, _Worker)]
            failure = next((w for w in spawned if isinstance(w, BaseException)), None)
            if failure is not None:  # all or nothing; a later start() tries again
                for worker in workers:
                    worker.kill()
                    await asyncio.shield(worker.pipes.exited)
                    worker.transport.close()
                    self._workers.discard(worker)
                raise RuntimeError("the hook workers did not start") from failure
            for worker in workers:
                self._idle.append(worker)
            self._started = True
            self._dispatch()

    def state(self) -> PoolState:
        """What the pool holds now."""
        live = [w for w in self._workers if not w.retired]
        return PoolState(
            workers=frozenset(w.pid for w in live),
            idle=sum(1 for w in self._idle if not w.retired),
            starting=len(self._spawning),
            busy={tenant: n for tenant, n in self._busy.items() if n},
            waiting=sum(1 for w in self._waiting if not w.future.done()),
        )

    async def run(
        self,
        hook: HookSource,
        event_json: str,
        *,
        timeout: float | None = None,
        tenant: str = "",
        test: bool = False,
        queue_timeout: float | None = None,
        secrets: Mapping[str, str] | None = None,
        fetcher: Fetcher | None = None,
    ) -> HookRunResult:
        """Call the hook's default export with the event and return its JSON answer, or why there is none.

        `timeout` (seconds) shortens the hook's own limit, e.g. to what is left of a token's total budget; it never
        lengthens `hook_timeout`. It starts once a worker is found: waiting for one is bounded apart, by
        `queue_timeout` (at most `limits.queue_timeout`), and ends in `no_worker`. `tenant` (the project) and `test`
        (a test run) decide which share of the pool the run may use. `secrets` reach the hook as `ctx.secrets`;
        `fetcher` performs its `fetch` calls (without one, every call is refused).
        """
        if not self._started:
            await self.start()
        if self._closed:
            raise RuntimeError("the hook runtime is closed")
        started = time.perf_counter()
        budget = self.limits.hook_timeout if timeout is None else min(timeout, self.limits.hook_timeout)
        if budget <= 0:
            return _failure("timeout", "no time was left for the hook", started)
        wait = self.limits.queue_timeout if queue_timeout is None else min(queue_timeout, self.limits.queue_timeout)
        loop = asyncio.get_running_loop()
        worker = await self._acquire(tenant, test, loop.time() + max(wait, 0.0))
        if worker is None:
            if self._closed:
                return _failure("crashed", "the hook runtime was closed", started)
            return _failure("no_worker", f"no hook worker was free within {wait:g} s", started, queued=True)
        queued = (time.perf_counter() - started) * 1000
        deadline = loop.time() + budget
        event = event_json.encode()
        context = msgspec.json.encode({"secrets": dict(secrets or {})})
        keep = False
        try:
            reply = await self._exchange(worker, hook, event, context, hook.id not in worker.known, deadline, fetcher)
            if reply is not None and reply.missing:  # the worker had dropped the hook from its cache
                reply = await self._exchange(worker, hook, event, context, True, deadline, fetcher)
            keep = reply is not None and not reply.retire
        finally:
            self._done(worker, tenant, test, keep=keep)  # cancelled mid-run: the worker's state is unknown
        if reply is None:
            if self._closed:
                return _failure("crashed", "the hook runtime was closed", started)
            if not worker.pipes.exited.done():
                return _failure("timeout", f"the hook did not finish within {budget:g} s", started, queued)
            kind = worker.crash_kind()
            logger.warning("hook worker %d died during a run: %s", worker.pid, worker.stderr_tail())
            return _failure(kind, f"the hook worker died during the run ({kind})", started, queued)
        if keep and reply.loaded:
            worker.remember(hook.id)
        duration = (time.perf_counter() - started) * 1000
        if reply.ok:
            return HookRunResult(True, reply.r, None, None, reply.c, duration, queued)
        return HookRunResult(False, None, reply.k or "crashed", reply.m, reply.c, duration, queued)

    async def close(self) -> None:
        """Stop every worker: EOF and SIGTERM, SIGKILL after a grace period; returns once each has exited."""
        self._closed = True
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.future.done():
                waiter.future.set_result(None)
        for task in list(self._spawning):
            task.cancel()
        await asyncio.gather(*self._spawning, return_exceptions=True)
        workers = list(self._workers)
        for worker in workers:
            worker.retired = True
            if worker.idle_timer is not None:
                worker.idle_timer.cancel()
            with contextlib.suppress(Exception):
                worker.stdin.close()
                worker.transport.send_signal(signal.SIGTERM)
        if workers:
            await asyncio.wait([w.pipes.exited for w in workers], timeout=_STOP_GRACE)
            for worker in workers:
                worker.kill()
            await asyncio.gather(*(asyncio.shield(w.pipes.exited) for w in workers))
        await asyncio.gather(*self._reaping, return_exceptions=True)
        for worker in workers:
            worker.transport.close()
        self._workers.clear()
        self._idle.clear()

    # -- the pool ------------------------------------------------------------------------------------------------

    async def _spawn(self) -> _Worker:
        loop = asyncio.get_running_loop()
        limits = self.limits
        # Only what Python needs to start: the server's secrets stay out of the process that runs foreign code.
        # TZ and LC_ALL are what Date and Intl show a hook, the same on every server.
        env = {k: v for k, v in os.environ.items() if k.startswith("PYTHON") or k in _KEPT_ENVIRONMENT}
        env.update(TZ="UTC", LC_ALL="C.UTF-8")
        max_frame = _MAX_ANSWER_BYTES + 8 * limits.console_limit_bytes
        transport, pipes = await loop.subprocess_exec(
            lambda: _Pipes(max_frame),
            sys.executable,
            self.program,
            str(limits.heap_limit_mb),
            str(limits.console_limit_bytes),
            str(os.getpid()),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,  # a terminal's Ctrl-C is for the parent, which stops the workers itself
        )
        worker = _Worker(transport, pipes)
        self._workers.add(worker)
        try:
            frame = await asyncio.wait_for(pipes.next_frame(), _START_TIMEOUT)
            if frame is None:
                raise RuntimeError(f"a hook worker exited on start: {worker.stderr_tail()}")
            worker.ready = True
        except BaseException:
            worker.kill()
            self._workers.discard(worker)
            await asyncio.shield(pipes.exited)
            transport.close()
            raise
        pipes.exited.add_done_callback(lambda _: self._retire(worker))  # died while idle: replace it
        return worker

    def _may_run(self, tenant: str, test: bool, busy: Counter[str], test_busy: int) -> bool:
        limits = self.limits
        return busy[tenant] < limits.tenant_share and (not test or test_busy < limits.test_share)

    def _claim(self, tenant: str, test: bool) -> None:
        self._busy[tenant] += 1
        if test:
            self._test_busy += 1

    def _done(self, worker: _Worker, tenant: str, test: bool, *, keep: bool) -> None:
        """A run is over: its share comes back, and its worker goes back to the pool (or is replaced)."""
        self._busy[tenant] -= 1
        if not self._busy[tenant]:
            del self._busy[tenant]
        if test:
            self._test_busy -= 1
        if keep and not worker.retired and not self._closed:
            self._idle.append(worker)
        else:
            self._retire(worker)
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand idle workers to waiting runs, those of the least busy tenants first, then grow the pool for the rest."""
        if self._closed:
            return
        self._waiting = deque(w for w in self._waiting if not w.future.done())
        busy, test_busy, wanted = Counter(self._busy), self._test_busy, 0
        for waiter in sorted(self._waiting, key=lambda w: busy[w.tenant]):  # stable: first come first within a rank
            if not self._may_run(waiter.tenant, waiter.test, busy, test_busy):
                continue
            worker = self._take_idle() if self._may_take_idle(waiter.tenant) else None
            if worker is not None:
                self._waiting.remove(waiter)
                self._claim(waiter.tenant, waiter.test)
                waiter.future.set_result(worker)
            else:
                wanted += 1
            busy[waiter.tenant] += 1
            test_busy += waiter.test
        live = self._live()
        starting = len(self._spawning)
        idle = sum(1 for w in self._idle if not w.retired)
        target = max(self.limits.pool_size - live, wanted + self.limits.min_idle - idle) - starting
        for _ in range(min(target, self.limits.max_pool_size - live - starting)):
            self._background(self._spawning, self._add_worker())
        if live > self.limits.pool_size:
            for worker in self._idle:
                self._watch_idle(worker)

    def _live(self) -> int:
        """Started workers still in service (those starting are counted by `_spawning`)."""
        return sum(1 for w in self._workers if w.ready and not w.retired)

    def _may_take_idle(self, tenant: str) -> bool:
        """Whether a run of `tenant` may take an idle worker now.

        A tenant that already holds workers leaves the last `min_idle` idle ones alone while the pool can still grow:
        it waits for a new worker, and the spare is there at once for a tenant that arrives holding none (measured:
        without this, a project flooding endless hooks took every freed worker and another project's runs waited for
        starts, 1.2-2 s each on a loaded machine).
        """
        if not self._busy[tenant]:
            return True
        idle = sum(1 for w in self._idle if not w.retired)
        live = self._live()
        return idle > self.limits.min_idle or live + len(self._spawning) >= self.limits.max_pool_size

    def _background(self, tasks: set[asyncio.Task[None]], coroutine: Coroutine[Any, Any, None]) -> None:
        """Start a task of the pool's; the pool looks again at what it needs once the task is over."""
        task = asyncio.get_running_loop().create_task(coroutine)
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        task.add_done_callback(lambda _: self._dispatch())

    def _take_idle(self) -> _Worker | None:
        while self._idle:
            worker = self._idle.popleft()
            if not worker.retired:
                if worker.idle_timer is not None:
                    worker.idle_timer.cancel()
                    worker.idle_timer = None
                return worker
        return None

    def _watch_idle(self, worker: _Worker) -> None:
        """Stop a worker above `pool_size` that stays idle for `idle_timeout`."""
        if worker.idle_timer is None and not worker.retired:
            worker.idle_timer = asyncio.get_running_loop().call_later(self.limits.idle_timeout, self._shrink, worker)

    def _shrink(self, worker: _Worker) -> None:
        worker.idle_timer = None
        live = self._live()
        idle = sum(1 for w in self._idle if not w.retired)
        if worker in self._idle and not worker.retired and live > self.limits.pool_size and idle > self.limits.min_idle:
            self._idle.remove(worker)
            worker.kill()
            self._background(self._reaping, self._reap(worker))

    async def _acquire(self, tenant: str, test: bool, deadline: float) -> _Worker | None:
        """A living idle worker this tenant may use; None when none frees up before the deadline."""
        loop = asyncio.get_running_loop()
        if (
            self._may_run(tenant, test, self._busy, self._test_busy)
            and self._may_take_idle(tenant)
            and not any(w.tenant == tenant and not w.future.done() for w in self._waiting)
        ):
            worker = self._take_idle()
            if worker is not None:
                self._claim(tenant, test)
                return worker
        waiter = _Waiter(tenant, test, loop.create_future())
        self._waiting.append(waiter)
        timer = loop.call_at(deadline, _expire, waiter.future)
        self._dispatch()
        try:
            return await waiter.future
        except asyncio.CancelledError:
            handed = waiter.future.result() if waiter.future.done() and not waiter.future.cancelled() else None
            if handed is not None:
                self._done(handed, tenant, test, keep=True)  # handed over just as the caller gave up
            raise
        finally:
            timer.cancel()
            if waiter in self._waiting:
                self._waiting.remove(waiter)

    async def _exchange(
        self,
        worker: _Worker,
        hook: HookSource,
        event: bytes,
        context: bytes,
        load: bool,
        deadline: float,
        fetcher: Fetcher | None,
    ) -> _Reply | None:
        """Send one run, perform the fetches it asks for, and wait for its reply until the deadline; None if none."""
        loop = asyncio.get_running_loop()
        waiter = worker.request(hook, event, context, load=load)
        while True:
            timer = loop.call_at(deadline, _expire, waiter)
            try:
                frame = await waiter
            finally:
                timer.cancel()
            if frame is None:
                return None
            reply = msgspec.json.decode(frame, type=_Reply)
            if reply.fetch is None:
                return reply
            answers = await _fetch_until(deadline, reply.fetch, fetcher)
            if answers is None:
                return None
            waiter = worker.answer_fetches(msgspec.json.encode(answers))

    def _retire(self, worker: _Worker) -> None:
        """Kill a worker whose context is spent or in doubt; the pool starts another if it needs one."""
        if worker.retired:
            return
        worker.kill()
        if worker.idle_timer is not None:
            worker.idle_timer.cancel()
            worker.idle_timer = None
        if self._closed:
            return
        self._background(self._reaping, self._reap(worker))

    async def _reap(self, worker: _Worker) -> None:
        await asyncio.shield(worker.pipes.exited)  # cancelling this task must not cancel the exit others wait for
        worker.transport.close()
        self._workers.discard(worker)

    async def _add_worker(self) -> None:
        async for attempt in retrying(attempts=None, on=Exception, backoff=_RESPAWN, on_retry=_log_failed_start):
            with attempt:
                if self._closed:
                    return
                self._idle.append(await self._spawn())  # handed out by the dispatch that follows this task


def _log_failed_start(error: BaseException, attempt: int, wait: float) -> None:
    logger.error("a hook worker did not start; retrying in %.1f s", wait, exc_info=error)


async def _fetch_until(
    deadline: float, requests: list[dict[str, Any]], fetcher: Fetcher | None
) -> list[dict[str, Any]] | None:
    """The answers to a run's fetch requests, or None when the run's deadline comes first."""
    if fetcher is None:
        return [{"i": r.get("i"), "ok": False, "error": "fetch is not available to this hook"} for r in requests]
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout_at(deadline):
            return await fetcher(requests)
    except TimeoutError:
        if loop.time() >= deadline:
            return None
        raise


def _expire(waiter: asyncio.Future[Any]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _failure(kind: ErrorKind, message: str, started: float, queued: float | bool = 0.0) -> HookRunResult:
    duration = (time.perf_counter() - started) * 1000
    return HookRunResult(False, None, kind, message, [], duration, duration if queued is True else float(queued))
