"""A hook worker: one locked-down V8 context in a child process, driven by `hooks.runtime` over stdin/stdout.

Run as a script (`python _worker.py HEAP_MB CONSOLE_BYTES PARENT_PID`), not as a module: importing the
`litestar_userio` package would cost a second of start-up, and the worker needs nothing from it.

Protocol (little-endian). Request: a 12-byte header `<III` (id, javascript and event lengths) and the three
UTF-8 strings; the javascript is empty when the worker already holds that hook. Reply: `<I` length and a JSON
object (the runtime's `_Reply`); the first reply, `{"ok":true}`, says the context is ready.

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
from typing import Any

_HEADER = struct.Struct("<III")
_LENGTH = struct.Struct("<I")
_PREFIX = '(function(){"use strict";var __default__;'
_SUFFIX = "\n;return __default__;})\n//# sourceURL=hook.ts"
_MAX_CACHED_HOOKS = 256
_ANSWER_LIMIT = 1 << 20  # characters of JSON; a token's claims are a few KB, and the parent must stay small
_PARSE_ERROR = re.compile(r"^[^\n]*?:(\d+): ([^\n]*)\n([^\n]*)\n([ \t]*)\^", re.DOTALL)

# Runs once per context, before any hook. It removes what a hook must not have, installs the console, freezes
# every object a hook can reach (so tampering throws in strict mode and cannot reach the next run) and returns
# the functions the worker calls. Nothing it returns is reachable from hook code.
_SETUP = r"""
(function (consoleLimit, prefixLength, answerLimit) {
  "use strict";
  const G = globalThis;
  const { freeze, isFrozen, getPrototypeOf, getOwnPropertyDescriptor, defineProperty, hasOwn } = Object;
  const { ownKeys, apply, deleteProperty } = Reflect;
  const stringify = JSON.stringify, parse = JSON.parse, toText = String;
  const promiseResolve = Promise.resolve.bind(Promise), promiseThen = Promise.prototype.then;
  const regExpExec = RegExp.prototype.exec, arrayPush = Array.prototype.push;
  const charCodeAt = String.prototype.charCodeAt, stringSlice = String.prototype.slice;
  const ErrorClass = Error, TypeErrorClass = TypeError;
  const hookFrame = /\n\s*at (?:[^\n]*\()?hook\.ts:(\d+):(\d+)/;  // the first stack frame in the hook's code

  // -- what a hook must not have: timers and other ways to run code after its run is over, legacy
  //    RegExp statics (they hold the last match of any run), V8's own console.
  const remove = (object, name) => { if (!deleteProperty(object, name)) object[name] = undefined; };
  for (const name of ["WebAssembly", "FinalizationRegistry", "console", "setTimeout", "clearTimeout",
                      "__timer_manager"]) remove(G, name);
  remove(Atomics, "wait"); remove(Atomics, "waitAsync");
  for (const name of ["$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "input", "$_", "lastMatch", "$&",
                      "lastParen", "$+", "leftContext", "$`", "rightContext", "$'"]) remove(RegExp, name);

  // -- console: the run in progress collects what its hook prints, up to consoleLimit bytes of text.
  let current = null;
  function utf8Length(text) {
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      const c = apply(charCodeAt, text, [i]);
      n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdfff ? 2 : 3;
    }
    return n;
  }
  function cut(text, bytes) {
    let n = 0, i = 0;
    for (; i < text.length; i++) {
      const c = apply(charCodeAt, text, [i]);
      const size = c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdfff ? 2 : 3;
      if (n + size > bytes) break;
      n += size;
    }
    return apply(stringSlice, text, [0, i]);
  }
  function render(value) {
    if (typeof value === "string") return value;
    try {
      if (value instanceof ErrorClass) {
        const stack = value.stack;
        return typeof stack === "string" ? stack : toText(value);
      }
      const json = stringify(value);
      return typeof json === "string" ? json : toText(value);
    } catch {
      try { return toText(value); } catch { return "[value that cannot be shown]"; }
    }
  }
  function emit(level, args) {
    const run = current;
    if (run === null || run.truncated) return;
    let message = "";
    for (let i = 0; i < args.length; i++) message += (i ? " " : "") + render(args[i]);
    // + 1: each line counts its line break. A message longer in UTF-16 units than the room left is longer in bytes
    // too: no need to measure all of it.
    const size = message.length >= consoleLimit - run.bytes ? Infinity : utf8Length(message) + 1;
    if (run.bytes + size > consoleLimit) {
      const room = consoleLimit - run.bytes - 1;
      if (room > 0) apply(arrayPush, run.entries, [{ level, message: cut(message, room) }]);
      const marker = `[console output truncated at ${consoleLimit} bytes]`;
      apply(arrayPush, run.entries, [{ level: "warn", message: marker }]);
      run.truncated = true;
      return;
    }
    run.bytes += size;
    apply(arrayPush, run.entries, [{ level, message }]);
  }
  const console = {
    log(...args) { emit("log", args); },
    info(...args) { emit("info", args); },
    warn(...args) { emit("warn", args); },
    error(...args) { emit("error", args); },
    debug(...args) { emit("log", args); },
    trace(...args) { emit("log", args); },
    dir(value) { emit("log", [value]); },
    assert(condition, ...args) { if (!condition) emit("error", ["Assertion failed", ...args]); },
  };
  defineProperty(G, "console", { value: console, writable: false, enumerable: false, configurable: false });

  // -- the override mistake: assigning `toString`, `name` or `message` on an instance must keep working once
  //    the prototype that holds them is frozen. These become accessors whose setter defines an own property.
  function allowOverride(object, name) {
    const desc = getOwnPropertyDescriptor(object, name);
    if (!desc || !hasOwn(desc, "value") || !desc.writable || !desc.configurable) return;
    const value = desc.value;
    defineProperty(object, name, {
      get() { return value; },
      set(replacement) {
        if (this === object) throw new TypeErrorClass(`Cannot assign to read only property '${toText(name)}'`);
        defineProperty(this, name, { value: replacement, writable: true, enumerable: true, configurable: true });
      },
      enumerable: desc.enumerable,
      configurable: false,
    });
  }
  for (const name of ownKeys(Object.prototype)) allowOverride(Object.prototype, name);
  for (const name of ["toString", "push", "concat"]) allowOverride(Array.prototype, name);
  for (const name of ["toString", "bind", "apply", "call", "constructor"]) allowOverride(Function.prototype, name);
  for (const E of [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError,
                   SuppressedError]) {
    for (const name of ["name", "message", "toString", "constructor"]) allowOverride(E.prototype, name);
  }
  allowOverride(Promise.prototype, "constructor");

  // -- freeze everything reachable from the global object and from the intrinsics only syntax reaches.
  const anonymous = () => {
    const segments = new Intl.Segmenter().segment("a");
    return [
      G,
      getPrototypeOf(function* () {}), getPrototypeOf(async function () {}), getPrototypeOf(async function* () {}),
      getPrototypeOf([][Symbol.iterator]()), getPrototypeOf(new Map()[Symbol.iterator]()),
      getPrototypeOf(new Set()[Symbol.iterator]()), getPrototypeOf(""[Symbol.iterator]()),
      getPrototypeOf(/a/[Symbol.matchAll]("a")), getPrototypeOf([].values().map((x) => x)),
      getPrototypeOf(Iterator.from({ next() { return { done: true }; } })),
      getPrototypeOf(segments), getPrototypeOf(segments[Symbol.iterator]()),
      getOwnPropertyDescriptor((function () { return arguments; })(), "callee").get,
    ];
  };
  const seen = new Set();
  const stack = anonymous();
  while (stack.length) {
    const object = stack.pop();
    if ((typeof object !== "object" && typeof object !== "function") || object === null || seen.has(object)) continue;
    seen.add(object);
    stack.push(getPrototypeOf(object));
    for (const key of ownKeys(object)) {
      const desc = getOwnPropertyDescriptor(object, key);
      if (desc === undefined) continue;
      stack.push(desc.value, desc.get, desc.set);
    }
  }
  for (const object of seen) freeze(object);

  // A tripwire, checked after every run, for what freezing cannot cover: the intrinsics only syntax reaches
  // (recorded above) and script-scope bindings, which live outside any object (mini-racer's setTimeout shim declares
  // one, `__TimerManager`, unless the worker kept it out). A failed check retires the worker.
  const watched = [...anonymous(), Object.prototype, Array.prototype, Function.prototype, Promise.prototype, JSON];
  const timerBinding = () => (typeof __TimerManager === "undefined" ? undefined : __TimerManager);
  const timerClass = timerBinding();
  function intact() {
    for (let i = 0; i < watched.length; i++) if (!isFrozen(watched[i])) return false;
    return timerBinding() === timerClass;
  }
  function unfrozen() {
    const found = new Set(), queue = anonymous();
    let count = 0;
    while (queue.length) {
      const object = queue.pop();
      if ((typeof object !== "object" && typeof object !== "function") || object === null) continue;
      if (found.has(object)) continue;
      found.add(object);
      if (!isFrozen(object)) count++;
      queue.push(getPrototypeOf(object));
      for (const key of ownKeys(object)) {
        const desc = getOwnPropertyDescriptor(object, key);
        if (desc !== undefined) queue.push(desc.value, desc.get, desc.set);
      }
    }
    return `${count}/${found.size}`;
  }

  // -- runs. A run's reply is a JSON text; `box[0]` holds it once an async hook has settled.
  const box = [""];

  function describe(error) {
    let text;
    try {
      if (error instanceof ErrorClass) text = toText(error);
      else if (typeof error === "string") text = error;
      else {
        text = stringify(error);
        if (typeof text !== "string") text = toText(error);
      }
    } catch {
      text = "(an exception that cannot be shown)";
    }
    if (text.length > 4096) text = apply(stringSlice, text, [0, 4096]) + "…";
    try {
      const trace = error !== null && typeof error === "object" ? error.stack : undefined;
      const match = typeof trace === "string" ? apply(regExpExec, hookFrame, [trace]) : null;
      if (match !== null) {
        const line = +match[1], column = +match[2] - (match[1] === "1" ? prefixLength : 0);
        text += ` (hook.ts:${line}:${column})`;
      }
    } catch {}
    return text;
  }
  function finish(run, reply) {
    if (current !== run) return;
    current = null;
    box[0] = reply + `,"c":${stringify(run.entries)}${intact() ? "" : ',"retire":true'}}`;
  }
  function failed(run, kind, error) {
    finish(run, `{"ok":false,"k":"${kind}","m":${stringify(kind === "exception" ? describe(error) : error)}`);
  }
  function settled(run, value) {
    let json;
    try {
      json = stringify(value);
    } catch (error) {
      return failed(run, "invalid_json", `the hook's answer is not JSON: ${describe(error)}`);
    }
    if (typeof json !== "string") {
      return failed(run, "invalid_json", `the hook's answer is not JSON: it returned ${typeof value}`);
    }
    if (json.length > answerLimit) {
      const size = `${json.length} characters of JSON, at most ${answerLimit}`;
      return failed(run, "invalid_json", `the hook's answer is too large: ${size}`);
    }
    finish(run, `{"ok":true,"r":${json}`);
  }

  // One runner per hook. `factory()` evaluates the hook's module scope afresh: nothing a run keeps in a
  // top-level `let` or `const` survives into the next one. The reply is in box[0] once the promise jobs have run.
  function makeRunner(factory) {
    return function () {
      const eventJson = this;  // passed as the receiver: see _caller in _worker.py
      const run = { entries: [], bytes: 0, truncated: false };
      current = run;
      box[0] = "";
      try {
        const hook = factory();
        if (typeof hook !== "function") throw new TypeErrorClass("the hook's default export is not a function");
        const value = hook(parse(eventJson));
        if (value !== null && (typeof value === "object" || typeof value === "function") &&
            typeof value.then === "function") {
          apply(promiseThen, promiseResolve(value), [(v) => settled(run, v), (e) => failed(run, "exception", e)]);
        } else {
          settled(run, value);
        }
      } catch (error) {
        failed(run, "exception", error);
      }
    };
  }
  return [makeRunner, box, unfrozen];
})
"""


def main() -> None:
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
        make_runner, box, unfrozen = setup(console_limit, len(_PREFIX), _ANSWER_LIMIT)
        census = unfrozen()
        if not census.startswith("0/"):
            sys.stderr.write(f"hook worker: {census} objects reachable from hooks are not frozen\n")
            os._exit(1)
        ctx.set_hard_memory_limit(heap_mb * 1024 * 1024)
        _limit_data(heap_mb)
        call = _caller(ctx)
        reader = os.fdopen(0, "rb", buffering=65536)
        write = _writer(reply_fd)
        runners: dict[str, Any] = {}
        write(b'{"ok":true}')
        while True:
            header = reader.read(12)
            if len(header) < 12:
                os._exit(0)  # the parent closed our stdin
            id_len, js_len, event_len = _HEADER.unpack(header)
            body = reader.read(id_len + js_len + event_len)
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
                call(runner, body[id_len + js_len :].decode())
                # Always a second task, even when the hook answered synchronously: V8 runs the promise jobs between
                # the two, and a run is over only once they are (an endless chain of them stays this run's timeout).
                reply = box[0]
                if not reply:
                    reply = _retiring("timeout", "the hook's promise can never settle: nothing is left to run")
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


def _caller(ctx: Any) -> Callable[[Any, str], object]:
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
