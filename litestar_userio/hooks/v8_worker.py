"""A hook worker: one locked-down V8 context in a child process, driven by `hooks.v8_runtime` over stdin/stdout.

Run as a script (`python v8_worker.py HEAP_MB CONSOLE_BYTES PARENT_PID`), not as a module: importing the
`litestar_userio` package would cost a second of start-up, and the worker needs nothing from it.

Protocol (little-endian). Request: a 17-byte header `<cIIII` (`R`, then the id, javascript, event and context
lengths) and the four UTF-8 strings; the javascript is empty when the worker already holds that hook. Reply: `<I`
length and a JSON object (the runtime's `_Reply`); the first reply, `{"ok":true}`, says the context is ready.
A run that calls `fetch` and waits for it sends `{"fetch": [requests]}` instead of its reply; the parent performs
them and answers with an `F` frame (`<cIIII`, the third length is that of a JSON array of answers), and the run
goes on.

The parent enforces every deadline by killing this process; nothing here waits on a clock. A run that leaves the
context in doubt (memory limit, a promise that can never settle, a failed integrity check) is answered with
`"retire":true` and the process exits: the parent starts a fresh one.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import re
import resource
import signal
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_HEADER = struct.Struct("<cIIII")  # kind (b"R" run, b"F" fetch answers), four lengths
_LENGTH = struct.Struct("<I")
_PREFIX = '(function(){"use strict";var __default__;'
_SUFFIX = "\n;return __default__;})\n//# sourceURL=hook.ts"
_MAX_CACHED_HOOKS = 256
_ANSWER_LIMIT = 1 << 20  # characters of JSON; a token's claims are a few KB, and the parent must stay small
_PARSE_ERROR = re.compile(r"^[^\n]*?:(\d+): ([^\n]*)\n([^\n]*)\n([ \t]*)\^", re.DOTALL)

# The context's setup (JavaScript), shipped beside this file: see its opening comment.
_SETUP = Path(__file__).with_name("worker_setup.js").read_text(encoding="utf-8")


def main() -> None:
    """Serve runs on stdin until the parent goes: arguments HEAP_MB CONSOLE_BYTES PARENT_PID."""
    heap_mb, console_limit, parent_pid = (int(arg) for arg in sys.argv[1:4])
    _die_with_parent(parent_pid)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Replies go to a private copy of stdout; anything else printed (V8 diagnostics) lands on stderr.
    reply_fd = os.dup(1)
    os.dup2(2, 1)

    from py_mini_racer import init_mini_racer

    # V8's own old-space limit is the backstop of the hard limit below, which stops JavaScript at the first GC over
    # heap_mb; reaching V8's aborts the process, and the parent reports "memory".
    init_mini_racer(flags=["--single-threaded", f"--max-old-space-size={2 * heap_mb + 16}"])
    asyncio.run(_serve(heap_mb, console_limit, reply_fd))


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to SIGKILL this process when the parent goes, even while V8 is stuck in a loop."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent_pid:
        os._exit(1)


async def _serve(heap_mb: int, console_limit: int, reply_fd: int) -> None:
    # The context is bound to this running loop: calls then go straight to V8's thread (measured about twice as cheap
    # as through mini-racer's own loop thread). No mini-racer timeout is used: deadlines are the parent's.
    from py_mini_racer import _mini_racer, mini_racer
    from py_mini_racer._exc import MiniRacerBaseException

    # mini-racer installs a setTimeout shim in every context; its class is a script-scope binding that no freezing
    # reaches. Keep it out (should a later mini-racer move it, the setup still removes the globals and the check after
    # every run watches the binding).
    _mini_racer.INSTALL_SET_TIMEOUT = ""  # type: ignore[attr-defined]
    with mini_racer(asyncio.get_running_loop()) as ctx:
        setup: Any = ctx.eval(_SETUP)
        make_runner, box, unfrozen, take_fetches, deliver_fetches = setup(console_limit, len(_PREFIX), _ANSWER_LIMIT)
        census = unfrozen()
        if not census.startswith("0/"):
            sys.stderr.write(f"hook worker: {census} objects reachable from hooks are not frozen\n")
            os._exit(1)
        ctx.set_hard_memory_limit(heap_mb * 1024 * 1024)
        _limit_data(heap_mb)
        call = v8_caller(ctx)
        reader = os.fdopen(0, "rb", buffering=65536)
        write = _writer(reply_fd)
        runners: dict[str, Any] = {}
        write(b'{"ok":true}')
        while True:
            header = reader.read(_HEADER.size)
            if len(header) < _HEADER.size:
                os._exit(0)  # the parent closed our stdin
            _, id_len, js_len, event_len, context_len = _HEADER.unpack(header)
            body = reader.read(id_len + js_len + event_len + context_len)
            hook_id = body[:id_len].decode()
            runner = runners.pop(hook_id, None)
            if runner is not None:
                runners[hook_id] = runner  # most recently used last: the first one is the one to forget
            reply: str | dict[str, Any]
            try:
                if js_len:
                    try:
                        runner = make_runner(ctx.eval(_PREFIX + body[id_len : id_len + js_len].decode() + _SUFFIX))
                    except MiniRacerBaseException as exc:
                        if not ctx.was_hard_memory_limit_reached():
                            write(_json({"ok": False, "k": "exception", "m": _load_error(exc), "loaded": False}))
                            continue
                        raise
                    runners[hook_id] = runner
                    if len(runners) > _MAX_CACHED_HOOKS:
                        del runners[next(iter(runners))]
                elif runner is None:
                    write(b'{"ok":false,"missing":true}')
                    continue
                event = body[id_len + js_len : id_len + js_len + event_len].decode()
                call(runner, f"[{event},{body[id_len + js_len + event_len :].decode()}]")
                # Always a second task, even when the hook answered synchronously: V8 runs the promise jobs between
                # the two, and a run is over only once they are (an endless chain of them stays this run's timeout).
                reply = box[0]
                while not reply:
                    requests = call(take_fetches, "")
                    if not requests:  # no fetch to wait for, no timers: nothing can settle the hook's promise
                        reply = _retiring("timeout", "the hook's promise can never settle: nothing is left to run")
                        break
                    write(b'{"ok":false,"fetch":' + str(requests).encode() + b"}")
                    answers = _read_frame(reader)
                    if answers is None:
                        os._exit(0)
                    call(deliver_fetches, answers)
                    reply = box[0]
            except MiniRacerBaseException as exc:
                reply = _retiring("crashed", f"V8 stopped the hook: {exc}")
            if ctx.was_hard_memory_limit_reached():  # also when what ran after the answer was stopped
                reply = _retiring("memory", f"the hook used more than {heap_mb} MB of memory")
            if isinstance(reply, dict):
                write(_json(reply))
                os._exit(0)
            write(reply.encode())
            if reply.endswith(',"retire":true}'):  # the integrity check after the run failed
                os._exit(0)


def v8_caller(ctx: Any) -> Callable[[Any, str], object]:
    """How to call a runner with the event as its receiver: one task on V8's thread.

    mini-racer's public call builds a new argument array first (two more round trips to V8's thread); going to its
    context directly with one empty array reused saved a fifth of `run()`'s median and half its p99 (measured,
    docs/hooks-runtime.md). Those are mini-racer internals: if a version lacks them or the probe fails, the public
    call is used.
    """

    def public(runner: Any, event: str) -> object:
        return runner(this=event)

    try:
        context = ctx._ctx
        run_task, call_function = context._run_uncancelable_mr_task, context._dll.mr_call_function
        handle = context._python_to_value_handle
        no_arguments = ctx.eval("[]")
        no_arguments_handle = handle(no_arguments)

        def direct(runner: Any, event: str) -> object:
            receiver = handle(event)
            return run_task(call_function, handle(runner).raw, receiver.raw, no_arguments_handle.raw)

        probe = ctx.eval('(function () { "use strict"; return this + "!"; })')
        if direct(probe, "é") == "é!" and direct(probe, "b") == "b!":
            return direct
    except Exception:  # any surprise in the internals means: use the public call
        pass
    return public


def _read_frame(reader: Any) -> str | None:
    """The parent's answers to this run's fetches (an `F` frame); None when stdin closed."""
    header = reader.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    _, id_len, js_len, length, context_len = _HEADER.unpack(header)
    body: bytes = reader.read(id_len + js_len + length + context_len)
    return body[id_len + js_len : id_len + js_len + length].decode()


def _retiring(kind: str, message: str) -> dict[str, Any]:
    """A failure after which this context is not used again: the worker answers and exits."""
    return {"ok": False, "k": kind, "m": message, "retire": True}


def _writer(fd: int) -> Any:
    def write(data: bytes) -> None:
        view = memoryview(_LENGTH.pack(len(data)) + data)
        while view:
            view = view[os.write(fd, view) :]

    return write


def _json(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode()


def _load_error(exc: Exception) -> str:
    """V8's parse error as `SyntaxError: ... (hook.ts:LINE:COLUMN)`, line 1 corrected for the wrapper."""
    text = str(exc)
    match = _PARSE_ERROR.match(text)
    if match is None:
        return text.strip().splitlines()[-1] if text.strip() else "the hook could not be loaded"
    line, column = int(match[1]), len(match[4]) + 1
    if line == 1:
        column -= len(_PREFIX)
    return f"{match[2]} (hook.ts:{line}:{column})"


def _limit_data(heap_mb: int) -> None:
    """Cap private writable memory: ArrayBuffers live outside the V8 heap, out of reach of its limit (Linux)."""
    if not os.path.exists("/proc/self/status"):
        return
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmData:"):
                used = int(line.split()[1]) * 1024
                allowance = max(256, 4 * heap_mb) * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_DATA, (used + allowance, used + allowance))
                return


if __name__ == "__main__":
    main()
