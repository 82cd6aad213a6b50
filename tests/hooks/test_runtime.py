"""The hook runtime: real V8 workers in child processes, real hooks compiled from TypeScript, no mocks.

Most tests share one pool of two workers. Tests about what one run may leave to the next use a pool of one, so the
second run is sure to land on the same worker (and the same V8 context) as the first.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from litestar_userio.hooks.compiler import compile_hook
from litestar_userio.hooks.v8_runtime import WORKER_PROGRAM, HookRunResult, HookRuntime, HookSource, RuntimeLimits

PLUGINS = Path(__file__).parents[2] / "plugins"
EVENTS = Path(__file__).parent / "corpus" / "events"
ROOT = Path(__file__).parents[2]


def jwt_event(**user: Any) -> dict[str, Any]:
    """The fixture event, grown to the size of a real one (about 2.4 KB as compact JSON)."""
    event: dict[str, Any] = json.loads((EVENTS / "jwt.json").read_text())
    event["payload"]["user"]["standard_attributes"].update(
        phone_number="+44 20 7946 0958",
        nickname="Countess of Lovelace",
        website="https://en.wikipedia.org/wiki/Ada_Lovelace",
        phone_number_verified=False,
        zoneinfo="Europe/London",
        picture="https://cdn.example.com/u/6f1f0c4e/avatar.png",
        birthdate="1815-12-10",
        preferred_username="ada",
        gender="female",
    )
    user_address = event["payload"]["user"]["standard_attributes"]["address"]
    user_address.update(street_address="12 St James's Square", postal_code="SW1Y 4JH", region="Greater London")
    event["payload"]["user"]["custom_attributes"].update(
        department="Analytical Engines",
        cost_center="CC-1843",
        employee_id="E-000042",
        tier=3,
        beta=True,
        manager="Charles Babbage",
        office="London, Marylebone",
        languages=["en", "fr", "it"],
        interests=["mathematics", "poetical science", "music"],
    )
    event["payload"]["identities"].append(
        {
            "id": "7a1e2d3c-4b5a-4c6d-9e8f-1a2b3c4d5e6f",
            "created_at": "2026-02-03T04:05:06Z",
            "updated_at": "2026-02-03T04:05:06Z",
            "type": "oauth",
            "claims": {
                "email": "ada@example.com",
                "https://authgear.com/claims/oauth/provider_type": "google",
                "https://authgear.com/claims/oauth/subject_id": "109876543210987654321",
                "name": "Ada Lovelace",
            },
        }
    )
    event["payload"]["identities"].append(
        {
            "id": "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f",
            "created_at": "2026-02-10T11:12:13Z",
            "updated_at": "2026-02-10T11:12:13Z",
            "type": "passkey",
            "claims": {"https://authgear.com/claims/passkey/credential_id": "q2Xk8vTzR0mB5nYcJ1uWfA"},
        }
    )
    event["payload"]["user"]["roles"] += ["billing", "support"]
    event["payload"]["user"]["groups"] += ["engineering", "london"]
    event["payload"]["user"].update(user)
    return event


EVENT = jwt_event()
EVENT_JSON = json.dumps(EVENT, separators=(",", ":"))


def hook(source: str) -> HookSource:
    javascript = compile_hook(textwrap.dedent(source)).javascript
    return HookSource(id=hashlib.sha256(javascript.encode()).hexdigest(), javascript=javascript)


def plugin(name: str) -> HookSource:
    return hook((PLUGINS / name).read_text())


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def until(condition: Any, timeout: float = 30.0) -> None:
    """Poll `condition()` until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        await asyncio.sleep(0.01)


def worker_pids(runtime: HookRuntime) -> set[int]:
    return set(runtime.state().workers)


async def wait_for_pool(runtime: HookRuntime, size: int, timeout: float = 60.0, *, without: int = 0) -> None:
    """Until `size` live workers are idle again (after a replacement), none of them `without` (a killed pid)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if without in worker_pids(runtime):
            await asyncio.sleep(0.01)
            continue
        if runtime.state().idle >= size:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the pool did not refill")


@pytest.fixture(scope="module")
async def runtime() -> AsyncIterator[HookRuntime]:
    rt = HookRuntime(RuntimeLimits(pool_size=2))
    await rt.start()
    yield rt
    await rt.close()


@pytest.fixture(scope="module")
async def single() -> AsyncIterator[HookRuntime]:
    """One worker: every run lands on the same V8 context as the run before it."""
    rt = HookRuntime(RuntimeLimits(pool_size=1, console_limit_bytes=1024))
    await rt.start()
    yield rt
    await rt.close()


async def run(rt: HookRuntime, source: str | HookSource, event: Any = None, **kwargs: Any) -> HookRunResult:
    source = hook(source) if isinstance(source, str) else source
    event_json = EVENT_JSON if event is None else json.dumps(event)
    return await rt.run(source, event_json, **kwargs)


# -- answers ----------------------------------------------------------------------------------------------------------


async def test_add_claims_hook_answers_with_the_users_attributes(runtime: HookRuntime) -> None:
    result = await run(runtime, plugin("add-user-attributes-to-jwt.ts"))
    assert result.ok, result.error_message
    payload = result.response["mutations"]["jwt"]["payload"]
    assert payload == {
        **EVENT["payload"]["jwt"]["payload"],
        "standard_attributes": EVENT["payload"]["user"]["standard_attributes"],
        "custom_attributes": EVENT["payload"]["user"]["custom_attributes"],
    }
    assert result.response["is_allowed"] is True
    assert result.error_kind is None and result.error_message is None and result.console == []
    assert result.duration_ms > 0


async def test_every_ready_plugin_runs(runtime: HookRuntime) -> None:
    for path in sorted(PLUGINS.glob("*.ts")):
        if path.name.endswith(".d.ts") or path.name.startswith("migrate-"):
            continue  # a migration hook asks an old system: tests/tokens/test_password_migration.py runs it
        event = json.loads((EVENTS / "id_token.json").read_text()) if "id-token" in path.name else EVENT
        result = await run(runtime, plugin(path.name), event)
        assert result.ok, (path.name, result.error_message)
        assert "is_allowed" in result.response


CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.ts"))


async def test_every_corpus_hook_answers_as_in_a_pristine_context(runtime: HookRuntime) -> None:
    """The lockdown (frozen intrinsics, tamed overrides, no timers) changes nothing for the compiler's corpus."""
    for path in CORPUS:
        expected_path = path.with_name(f"{path.stem}.expected.json")
        if not expected_path.exists():
            continue  # a corpus file the compiler refuses
        own_event = path.with_name(f"{path.stem}.event.json")
        event = (
            own_event if own_event.exists() else EVENTS / ("id_token.json" if "id-token" in path.stem else "jwt.json")
        )
        result = await runtime.run(hook(path.read_text()), event.read_text())
        assert result.ok, (path.name, result.error_message)
        assert result.response == json.loads(expected_path.read_text()), path.name


async def test_sync_hook_answers(runtime: HookRuntime) -> None:
    result = await run(runtime, "export default (e: any) => ({ is_allowed: e.seq === 42, n: [1, 'two', null] })")
    assert result.ok and result.response == {"is_allowed": True, "n": [1, "two", None]}


async def test_async_hook_answers_after_awaiting(runtime: HookRuntime) -> None:
    result = await run(
        runtime,
        """
        const twice = async (n: number): Promise<number> => { await null; return n * 2; };
        export default async function (e: { seq: number }) {
          const values = await Promise.all([twice(e.seq), Promise.resolve(1), (async () => 2)()]);
          return { is_allowed: true, values };
        }
        """,
    )
    assert result.ok and result.response == {"is_allowed": True, "values": [84, 1, 2]}


async def test_hook_returning_a_thenable_is_awaited(runtime: HookRuntime) -> None:
    result = await run(runtime, "export default () => ({ then(resolve: any) { resolve({ is_allowed: false }); } })")
    assert result.ok and result.response == {"is_allowed": False}


async def test_event_reaches_the_hook_as_data_never_as_code(runtime: HookRuntime) -> None:
    nasty = '"); while (true) {} ("\u2028</script>\\'
    result = await run(
        runtime,
        "export default (e: any) => e.payload.user.standard_attributes.name",
        jwt_event(standard_attributes={"name": nasty}),
    )
    assert result.ok and result.response == nasty


async def test_hook_source_is_cached_per_id_and_reloaded_by_a_new_worker(single: HookRuntime) -> None:
    first = HookSource("same-id", compile_hook("export default () => 1").javascript)
    second = HookSource("same-id", compile_hook("export default () => 2").javascript)
    assert (await single.run(first, "{}")).response == 1
    # Same id: the worker runs what it loaded the first time, without compiling the new text.
    assert (await single.run(second, "{}")).response == 1
    (pid,) = worker_pids(single)
    os.kill(pid, signal.SIGKILL)
    await wait_for_pool(single, 1, without=pid)
    # A new worker loads the hook lazily, from what it is given now.
    assert (await single.run(second, "{}")).response == 2


async def test_worker_calls_v8_directly_or_falls_back_to_the_public_call() -> None:
    from py_mini_racer import mini_racer

    from litestar_userio.hooks.v8_worker import v8_caller

    with mini_racer(asyncio.get_running_loop()) as ctx:
        receiver: Any = ctx.eval('(function () { "use strict"; return typeof this + ":" + this; })')
        direct = v8_caller(ctx)
        assert direct.__name__ == "direct" and direct(receiver, "{}") == "string:{}"

        class WithoutInternals:
            eval = ctx.eval

        public = v8_caller(WithoutInternals())
        assert public.__name__ == "public" and public(receiver, "{}") == "string:{}"


# -- errors -----------------------------------------------------------------------------------------------------------


async def test_thrown_error_names_the_typescript_line_and_column(runtime: HookRuntime) -> None:
    source = """\
    interface Claims { plan: string }
    export default async function (e: any): Promise<Claims> {
      const f: any = e.payload.user.custom_attributes.plan;
      return f(1) as Claims;
    }
    """
    result = await run(runtime, source)
    column = textwrap.dedent(source).splitlines()[3].index("f(1)") + 1
    assert not result.ok and result.error_kind == "exception"
    assert result.error_message == f"TypeError: f is not a function (hook.ts:4:{column})"


async def test_error_on_the_first_line_is_corrected_for_the_wrapper(runtime: HookRuntime) -> None:
    source = "export default (e: unknown): never => { throw new RangeError(`bad ${typeof e}`); };"
    result = await run(runtime, source)
    assert result.error_message == f"RangeError: bad object (hook.ts:1:{source.index('new RangeError') + 1})"


async def test_error_after_an_await_keeps_its_position(runtime: HookRuntime) -> None:
    source = "export default async () => {\n  await null;\n  await Promise.resolve();\n  null!.x;\n};"
    result = await run(runtime, source)
    assert result.error_kind == "exception"
    assert result.error_message == "TypeError: Cannot read properties of null (reading 'x') (hook.ts:4:9)"


async def test_position_comes_from_the_stack_not_from_the_message(runtime: HookRuntime) -> None:
    source = "export default () => {\n  throw new Error('see hook.ts:9:9');\n};"
    result = await run(runtime, source)
    assert result.error_message == "Error: see hook.ts:9:9 (hook.ts:2:9)"


async def test_error_in_a_helper_points_at_the_helper(runtime: HookRuntime) -> None:
    source = "function pick(o: any): string {\n  return o.missing.name;\n}\nexport default (e: any) => pick(e);"
    result = await run(runtime, source)
    assert result.error_message == "TypeError: Cannot read properties of undefined (reading 'name') (hook.ts:2:20)"


async def test_endless_recursion_is_an_exception_and_the_worker_serves_on(single: HookRuntime) -> None:
    (pid,) = worker_pids(single)
    result = await run(single, "const f = (n: number): number => f(n + 1) + 1;\nexport default () => f(0);")
    assert result.error_kind == "exception"
    assert (result.error_message or "").startswith("RangeError: Maximum call stack size exceeded (hook.ts:1:")
    assert (await run(single, "export default () => 5")).response == 5
    assert worker_pids(single) == {pid}


async def test_thrown_values_that_are_not_errors(runtime: HookRuntime) -> None:
    assert (await run(runtime, "export default () => { throw 'nope'; }")).error_message == "nope"
    result = await run(runtime, "export default async () => { throw { code: 7 }; }")
    assert result.error_kind == "exception" and result.error_message == '{"code":7}'


async def test_syntax_error_at_load_names_its_position(runtime: HookRuntime) -> None:
    # tree-sitter accepts this; V8 does not (docs/hooks-compiler.md, "Contract with the runtime").
    line = "  const x = { a: 1,, b: 2 };"
    javascript = compile_hook(f"export default () => {{\n{line}\n  return x;\n}};").javascript
    result = await runtime.run(HookSource("dup-comma", javascript), EVENT_JSON)
    assert result.error_kind == "exception"
    assert result.error_message == f"SyntaxError: Unexpected token ',' (hook.ts:2:{line.index(',,') + 2})"
    # Not cached as loaded: the next run tries again and fails the same way.
    assert (await runtime.run(HookSource("dup-comma", javascript), EVENT_JSON)).error_message == result.error_message


async def test_default_export_that_is_not_a_function(runtime: HookRuntime) -> None:
    result = await run(runtime, "export default { is_allowed: true };")
    assert result.error_kind == "exception" and "default export is not a function" in (result.error_message or "")


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("export default async () => undefined", "returned undefined"),
        ("export default () => {}", "returned undefined"),
        ("export default () => () => 1", "returned function"),
        ("export default () => Symbol('x')", "returned symbol"),
        ("export default async () => ({ big: 10n })", "BigInt"),
        ("export default () => { const a: any = { b: {} }; a.b.a = a; return a; }", "circular"),
    ],
)
async def test_answer_that_is_not_json(runtime: HookRuntime, source: str, reason: str) -> None:
    result = await run(runtime, source)
    assert not result.ok and result.error_kind == "invalid_json" and result.response is None
    assert reason in (result.error_message or "")


# -- console ----------------------------------------------------------------------------------------------------------


async def test_console_is_captured_in_order_with_levels(runtime: HookRuntime) -> None:
    result = await run(
        runtime,
        """
        export default async (e: any) => {
          console.log("seq", e.seq, { plan: e.payload.user.custom_attributes.plan }, [1, 2], null, undefined);
          await null;
          console.info("info"); console.warn("warn", true); console.error(new TypeError("bad"));
          console.debug(() => 1);
          const c: any = {}; c.c = c; console.log(c, 10n);
          return { is_allowed: true };
        };
        """,
    )
    assert result.ok
    assert [entry["level"] for entry in result.console] == ["log", "info", "warn", "error", "log", "log"]
    messages = [entry["message"] for entry in result.console]
    assert messages[0] == 'seq 42 {"plan":"pro"} [1,2] null undefined'
    assert messages[1:3] == ["info", "warn true"]
    assert messages[3].startswith("TypeError: bad\n") and "hook.ts:" in messages[3]
    assert messages[4] == "() => 1"
    assert messages[5] == "[object Object] 10"


async def test_console_of_a_failed_run_is_kept(runtime: HookRuntime) -> None:
    result = await run(runtime, "export default () => { console.log('before'); throw new Error('x'); }")
    assert result.error_kind == "exception" and result.console == [{"level": "log", "message": "before"}]


async def test_console_is_bounded_with_a_marker(runtime: HookRuntime) -> None:
    result = await run(
        runtime, "export default () => { for (let i = 0; i < 1e6; i++) console.log('é'.repeat(100), i); return 1; }"
    )
    assert result.ok and result.response == 1
    text = sum(len(e["message"].encode()) + 1 for e in result.console[:-1])
    assert text <= 16_384
    assert result.console[-1] == {"level": "warn", "message": "[console output truncated at 16384 bytes]"}
    assert len(json.dumps(result.console, ensure_ascii=False).encode()) < 20_000


async def test_one_huge_console_message_is_cut(single: HookRuntime) -> None:
    result = await run(
        single, "export default () => { console.error('x'.repeat(5e6)); console.log('after'); return 2; }"
    )
    assert result.ok and result.response == 2
    assert result.console[0] == {"level": "error", "message": "x" * 1023}
    assert result.console[1]["message"] == "[console output truncated at 1024 bytes]"
    assert len(result.console) == 2


async def test_console_never_leaks_into_the_next_run(single: HookRuntime) -> None:
    noisy = await run(
        single,
        """
        export default async () => {
          console.log("first run");
          (async () => { for (let i = 0; i < 3; i++) await null; console.log("late, still the first run"); })();
          return 1;
        };
        """,
    )
    assert noisy.console == [{"level": "log", "message": "first run"}]
    quiet = await run(single, "export default () => 2")
    assert quiet.ok and quiet.console == []


# -- time -------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "export default () => { while (true) {} }",
        "export default async () => { await null; while (true) {} }",
        "export default async () => { for (;;) { await Promise.resolve(); } }",
        "export default () => { const spin = (): void => { Promise.resolve().then(spin); }; spin(); return 1; }",
    ],
    ids=["sync-loop", "loop-after-await", "await-loop", "endless-promise-jobs"],
)
async def test_hook_that_never_finishes_is_stopped_at_its_deadline(runtime: HookRuntime, source: str) -> None:
    before = worker_pids(runtime)
    result = await run(runtime, source, timeout=0.3)
    assert not result.ok and result.error_kind == "timeout"
    assert result.error_message == "the hook did not finish within 0.3 s"
    # The worker that ran it was killed: no core keeps burning, and a fresh one takes its place.
    killed = before - worker_pids(runtime)
    assert len(killed) == 1
    await wait_for_pool(runtime, 2)
    (pid,) = killed
    assert not alive(pid)
    assert (await run(runtime, "export default () => 'still serving'")).response == "still serving"


async def test_promise_that_can_never_settle_times_out_at_once(runtime: HookRuntime) -> None:
    result = await run(runtime, "export default () => new Promise(() => {})", timeout=2)
    assert result.error_kind == "timeout" and "never settle" in (result.error_message or "")
    await wait_for_pool(runtime, 2)


async def test_hook_timeout_is_the_upper_bound_of_the_callers_timeout() -> None:
    rt = HookRuntime(RuntimeLimits(hook_timeout=0.2, pool_size=1))
    try:
        result = await run(rt, "export default () => { while (true) {} }", timeout=30)
        assert result.error_kind == "timeout"
        assert result.error_message == "the hook did not finish within 0.2 s"
    finally:
        await rt.close()


async def test_waiting_for_a_worker_is_bounded_apart_and_reported_as_no_worker() -> None:
    rt = HookRuntime(RuntimeLimits(pool_size=1, max_pool_size=1, queue_timeout=0.2))
    try:
        busy = asyncio.create_task(run(rt, "export default () => { while (true) {} }", timeout=3))
        await until(lambda: bool(rt.state().busy))
        result = await run(rt, "export default () => 1", timeout=3)
        assert result.error_kind == "no_worker"
        assert result.error_message == "no hook worker was free within 0.2 s"
        assert result.queued_ms == result.duration_ms
        assert (await busy).error_kind == "timeout"
    finally:
        await rt.close()


# -- memory -----------------------------------------------------------------------------------------------------------


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize(
    ("source", "kinds"),
    [
        ("export default () => { const a: number[][] = []; while (true) a.push(new Array(1e6).fill(1)); }", {"memory"}),
        (
            "export default async () => { await null; const a: string[] = []; while (true) a.push(JSON.stringify(new Array(1e5).fill(a.length))); }",
            {"memory"},
        ),
        (
            "export default () => { const s = 'ab'.repeat(2 ** 28 - 16); return s.indexOf('c') + s.slice(1).indexOf('c'); }",
            {"memory", "crashed"},
        ),
        (
            "export default () => { const a: Uint8Array[] = []; while (true) a.push(new Uint8Array(1e8).fill(1)); }",
            {"exception", "memory"},
        ),
    ],
    ids=["arrays", "strings-after-await", "huge-string", "array-buffers"],
)
async def test_memory_bomb_fails_without_touching_the_parent(
    runtime: HookRuntime, source: str, kinds: set[str]
) -> None:
    before = rss_mb()
    result = await run(runtime, source, timeout=10)
    assert not result.ok and result.error_kind in kinds, result
    if result.error_kind == "exception":
        assert "Array buffer allocation failed" in (result.error_message or "")
    assert rss_mb() - before < 50
    await wait_for_pool(runtime, 2)
    assert (await run(runtime, "export default () => 'fine'")).response == "fine"


async def test_answer_too_large_is_refused(runtime: HookRuntime) -> None:
    result = await run(runtime, "export default () => ({ blob: 'x'.repeat(2 ** 21) })")
    assert result.error_kind == "invalid_json" and "too large" in (result.error_message or "")


# -- isolation --------------------------------------------------------------------------------------------------------

ECMASCRIPT_GLOBALS = {
    *("fetch", "Headers", "Request", "Response"),  # fetch is performed by the server (hooks/fetch.py)
    *("AggregateError", "Array", "ArrayBuffer", "Atomics", "BigInt", "BigInt64Array", "BigUint64Array", "Boolean"),
    *("DataView", "Date", "Error", "EvalError", "Float16Array", "Float32Array", "Float64Array", "Function"),
    *("Infinity", "Int16Array", "Int32Array", "Int8Array", "Intl", "Iterator", "JSON", "Map", "Math", "NaN"),
    *("Number", "Object", "Promise", "Proxy", "RangeError", "ReferenceError", "Reflect", "RegExp", "Set"),
    *("SharedArrayBuffer", "String", "Symbol", "SyntaxError", "TypeError", "URIError", "Uint16Array", "Uint32Array"),
    *("Uint8Array", "Uint8ClampedArray", "WeakMap", "WeakRef", "WeakSet", "decodeURI", "decodeURIComponent"),
    *("encodeURI", "encodeURIComponent", "escape", "eval", "globalThis", "isFinite", "isNaN", "parseFloat"),
    *("parseInt", "undefined", "unescape", "Temporal", "SuppressedError", "DisposableStack", "AsyncDisposableStack"),
    "console",
}


async def test_hook_sees_only_ecmascript_and_a_console(runtime: HookRuntime) -> None:
    result = await run(runtime, "export default () => Object.getOwnPropertyNames(globalThis)")
    assert result.ok and set(result.response) <= ECMASCRIPT_GLOBALS, set(result.response) - ECMASCRIPT_GLOBALS


async def test_no_network_files_environment_process_or_timers(runtime: HookRuntime) -> None:
    names = [
        *("require", "process", "Deno", "Bun", "XMLHttpRequest", "WebSocket", "importScripts", "navigator"),
        *("setTimeout", "setInterval", "clearTimeout", "queueMicrotask", "WebAssembly", "FinalizationRegistry"),
        *("__TimerManager", "__timer_manager", "print", "load", "read", "os", "quit", "gc", "python", "py"),
    ]
    checks = " ".join(f"out[{json.dumps(n)}] = typeof {n};" for n in names)
    result = await run(
        runtime,
        f"""
        export default async () => {{
          const out: Record<string, string> = {{}};
          {checks}
          out.wait = typeof Atomics.wait; out.waitAsync = typeof Atomics.waitAsync;
          try {{ await (0, eval)("import('node:fs')"); out.import = "loaded"; }} catch (e) {{ out.import = String(e); }}
          return out;
        }}
        """,
    )
    assert result.ok
    answers = result.response
    assert all(answers[name] == "undefined" for name in names), answers
    assert answers["wait"] == answers["waitAsync"] == "undefined"
    assert answers["import"] == "Error: Not supported"


async def test_clock_and_locale_are_not_the_servers(runtime: HookRuntime) -> None:
    result = await run(runtime, "export default () => Intl.DateTimeFormat().resolvedOptions().timeZone")
    assert result.response == "UTC"


@pytest.mark.parametrize(
    "tamper",
    [
        "Object.prototype.isAdmin = true;",
        "(Array.prototype as any).map = () => ['pwned'];",
        "JSON.stringify = () => '{\"is_allowed\":true}';",
        "(globalThis as any).leak = e.payload.user.id;",
        "Object.defineProperty(Object.prototype, 'toJSON', { value: () => 'pwned' });",
        "Object.setPrototypeOf(Array.prototype, { evil: 1 });",
        "(Error as any).prepareStackTrace = () => 'pwned';",
        "(Promise.prototype as any).then = () => 'pwned';",
        "(Object.getPrototypeOf(async function () {}) as any).constructor.evil = 1;",
        "(console as any).log = () => {};",
        "delete (globalThis as any).JSON;",
        "(String.prototype as any).trim = () => 'pwned';",
    ],
)
async def test_tampering_throws_and_the_next_run_sees_pristine_intrinsics(single: HookRuntime, tamper: str) -> None:
    result = await run(single, f"export default (e: any) => {{ {tamper} return 'tampered'; }}")
    assert result.error_kind == "exception" and "TypeError" in (result.error_message or ""), result
    check = await run(
        single,
        """
        export default () => {
          console.log("still captured");
          return {
            isAdmin: ({} as any).isAdmin === undefined,
            map: [1, 2].map((x) => x * 2).join(),
            stringify: JSON.stringify({ a: 1 }),
            leak: typeof (globalThis as any).leak,
            proto: Object.getPrototypeOf(Array.prototype) === Object.prototype,
            trim: " a ".trim(),
            then: typeof Promise.prototype.then,
          };
        };
        """,
    )
    assert check.ok and check.response == {
        "isAdmin": True,
        "map": "2,4",
        "stringify": '{"a":1}',
        "leak": "undefined",
        "proto": True,
        "trim": "a",
        "then": "function",
    }
    assert check.console == [{"level": "log", "message": "still captured"}]


async def test_overriding_on_instances_still_works(single: HookRuntime) -> None:
    result = await run(
        single,
        """
        class Denied extends Error {
          constructor(message: string) { super(message); this.name = "Denied"; }
        }
        export default () => {
          const o: any = {}; o.toString = () => "mine";
          const f: any = function () {}; f.toString = () => "fn";
          const list: any = []; list.push = () => "own push";
          try { throw new Denied("no"); } catch (err) { return [String(o), String(f), list.push(), String(err)]; }
        };
        """,
    )
    assert result.ok and result.response == ["mine", "fn", "own push", "Denied: no"]


async def test_module_state_does_not_survive_a_run(single: HookRuntime) -> None:
    counter = hook(
        "let calls = 0;\nconst seen: string[] = [];\nexport default (e: any) => { seen.push(e.id); return [++calls, seen.length]; };"
    )
    assert [(await single.run(counter, EVENT_JSON)).response for _ in range(3)] == [[1, 1], [1, 1], [1, 1]]


async def test_a_run_cannot_read_what_another_hook_left(single: HookRuntime) -> None:
    secret = await run(
        single,
        """
        export default (e: any) => {
          /(\\w+)@(\\w+)/.exec(e.payload.user.standard_attributes.email);
          try { (globalThis as any).stash = e.payload.user.id; } catch {}
          return "stored";
        };
        """,
    )
    assert secret.ok
    probe = await run(
        single,
        """
        export default () => [
          typeof (RegExp as any).$1, typeof (RegExp as any).lastMatch, typeof (RegExp as any).input,
          typeof (globalThis as any).stash,
        ];
        """,
    )
    assert probe.ok and probe.response == ["undefined"] * 4


# -- the pool ---------------------------------------------------------------------------------------------------------


async def test_fifty_concurrent_runs_all_answer(runtime: HookRuntime) -> None:
    # The event loop's lag meanwhile is a figure, measured by bench/hooks_runtime.py.
    add_claims = plugin("add-user-attributes-to-jwt.ts")
    results = await asyncio.gather(*(runtime.run(add_claims, EVENT_JSON) for _ in range(50)))
    assert all(r.ok for r in results)
    assert {json.dumps(r.response, sort_keys=True) for r in results} == {
        json.dumps(results[0].response, sort_keys=True)
    }


async def test_worker_killed_mid_run_reports_a_crash_and_is_replaced(single: HookRuntime) -> None:
    (pid,) = worker_pids(single)
    task = asyncio.create_task(run(single, "export default () => { while (true) {} }", timeout=5))
    await until(lambda: single.state().busy)  # the run holds the worker
    os.kill(pid, signal.SIGKILL)
    result = await task
    assert result.error_kind == "crashed"
    await wait_for_pool(single, 1)
    assert worker_pids(single) and pid not in worker_pids(single)
    assert (await run(single, "export default () => 3")).response == 3


async def test_worker_that_dies_while_idle_is_replaced(runtime: HookRuntime) -> None:
    await wait_for_pool(runtime, 2)
    victim = next(iter(worker_pids(runtime)))
    os.kill(victim, signal.SIGKILL)
    await wait_for_pool(runtime, 2, without=victim)
    results = await asyncio.gather(*(run(runtime, "export default () => 4") for _ in range(4)))
    assert [r.response for r in results] == [4] * 4


def _new_threads(before: set[threading.Thread]) -> list[str]:
    """Threads started since `before` and still running, but the event loop's own executor's (asyncio_N), which
    keeps its threads for the next `to_thread` of anything in the process."""
    return [t.name for t in threading.enumerate() if t not in before and not t.name.startswith("asyncio_")]


def _children() -> list[str]:
    """This process's live children and their command lines: what a thread left behind waits for."""
    found = []
    for task in Path("/proc/self/task").iterdir():
        try:
            for pid in (task / "children").read_text().split():
                found.append(f"{pid}: {Path(f'/proc/{pid}/cmdline').read_bytes().replace(bytes(1), b' ').decode()}")
        except OSError:
            continue
    return found


async def test_close_stops_every_worker_and_leaves_no_thread(runtime: HookRuntime, single: HookRuntime) -> None:
    await wait_for_pool(runtime, 2)  # no replacement of the other pools starts a thread meanwhile
    await wait_for_pool(single, 1)
    # Nor a start under way: a spare the previous test's burst asked for could be started after the pool refilled,
    # and its process, theirs, lives on with its watcher's thread (`asyncio-waitpid-95`, once in a quiet run).
    await until(lambda: not runtime.state().starting and not single.state().starting)
    before = set(threading.enumerate())
    rt = HookRuntime(RuntimeLimits(pool_size=3))
    await rt.start()
    busy = asyncio.create_task(run(rt, "export default () => { while (true) {} }", timeout=30))
    await until(lambda: rt.state().busy)  # the run holds a worker
    pids = worker_pids(rt)
    assert len(pids) == 3 and all(alive(pid) for pid in pids)
    await rt.close()
    assert (await busy).error_kind == "crashed"
    for pid in pids:
        assert not alive(pid)
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # already reaped: not even a zombie is left
    deadline = time.monotonic() + 10  # a child watcher's thread ends a moment after its process
    while _new_threads(before) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert _new_threads(before) == [], (
        f"children: {_children()}; the other pools': {worker_pids(runtime)}, {worker_pids(single)}"
    )
    with pytest.raises(RuntimeError):
        await rt.run(hook("export default () => 1"), "{}")


async def test_failed_start_is_reported_and_can_be_retried(tmp_path: Path) -> None:
    broken = tmp_path / "worker.py"
    broken.write_text("import sys\nsys.stderr.write('no V8 here')\nsys.exit(3)\n")
    rt = HookRuntime(RuntimeLimits(pool_size=2), program=str(broken))
    with pytest.raises(RuntimeError, match="did not start") as failure:
        await rt.start()
    assert "no V8 here" in str(failure.value.__cause__)
    assert not rt.state().workers
    rt.program = WORKER_PROGRAM
    try:
        assert (await run(rt, "export default () => 'second try'")).response == "second try"
    finally:
        await rt.close()


async def test_close_while_a_replacement_is_starting() -> None:
    rt = HookRuntime(RuntimeLimits(pool_size=1))
    result = await run(rt, "export default () => { while (true) {} }", timeout=0.2)
    assert result.error_kind == "timeout"
    pids = set(rt.state().workers)
    await asyncio.sleep(0)  # the replacement now waits for the killed worker to be reaped
    await rt.close()
    assert not rt.state().workers and not any(alive(pid) for pid in pids)


EXIT_WITHOUT_CLOSE = """
import asyncio, os, sys
from litestar_userio.hooks.v8_runtime import HookRuntime, HookSource, RuntimeLimits

async def main():
    rt = HookRuntime(RuntimeLimits(pool_size=2))
    spin = HookSource("spin", '__default__ = () => { while (true) {} };')
    print((await rt.run(HookSource("one", "__default__ = () => 1;"), "{}")).response, flush=True)
    print(" ".join(str(pid) for pid in rt.state().workers), flush=True)
    if sys.argv[1] == "abrupt":
        asyncio.ensure_future(rt.run(spin, "{}", timeout=60))
        while not rt.state().busy:
            await asyncio.sleep(0.01)
        os._exit(0)  # no close, no cleanup of any kind, a worker stuck in V8

asyncio.run(main())
"""


@pytest.mark.parametrize("how", ["return", "abrupt"])
def test_parent_exit_without_close_does_not_hang_and_leaves_no_worker(tmp_path: Path, how: str) -> None:
    script = tmp_path / "exit_without_close.py"
    script.write_text(EXIT_WITHOUT_CLOSE)
    # A hang is the failure: the run's timeout raises; how fast a healthy exit is, bench/ measures.
    done = subprocess.run(
        [sys.executable, str(script), how], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == "1"
    pids = [int(p) for p in lines[1].split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(alive(pid) for pid in pids)


# -- tenants ----------------------------------------------------------------------------------------------------------

SPIN = "export default () => { while (true) {} }"


async def test_one_tenants_endless_hooks_never_keep_another_tenant_from_a_worker() -> None:
    rt = HookRuntime(RuntimeLimits(pool_size=1, max_pool_size=4, tenant_share=2, queue_timeout=5))
    try:
        flood = [asyncio.create_task(run(rt, SPIN, timeout=3, tenant="b")) for _ in range(8)]
        await until(lambda: rt.state().busy.get("b", 0) >= 2)
        answers = [await run(rt, "export default () => 'a'", tenant="a") for _ in range(5)]
        assert [r.response for r in answers] == ["a"] * 5
        assert rt.state().busy.get("b") == 2, "b holds no more than its share"
        for task in flood:
            task.cancel()
        await asyncio.gather(*flood, return_exceptions=True)
    finally:
        await rt.close()


async def test_test_runs_never_take_more_than_their_share_of_the_pool() -> None:
    rt = HookRuntime(RuntimeLimits(pool_size=2, max_pool_size=2, test_share=1, queue_timeout=0.3))
    try:
        spinning = asyncio.create_task(run(rt, SPIN, timeout=3, tenant="b", test=True))
        await until(lambda: bool(rt.state().busy))
        other_test = await run(rt, "export default () => 1", tenant="c", test=True)
        production = await run(rt, "export default () => 2", tenant="c")
        assert other_test.error_kind == "no_worker"
        assert production.ok and production.response == 2
        assert (await spinning).error_kind == "timeout"
    finally:
        await rt.close()


async def test_pool_grows_to_its_maximum_and_shrinks_back_when_idle() -> None:
    limits = RuntimeLimits(pool_size=1, max_pool_size=3, tenant_share=1, hook_timeout=60, idle_timeout=0.2)
    rt = HookRuntime(limits)
    release = asyncio.Event()

    async def held(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Answers the hooks' fetches once the test says so: until then each run holds its worker, idle in V8."""
        await release.wait()
        answer = {"ok": True, "status": 200, "statusText": "OK", "headers": [], "redirected": False, "body": "1"}
        return [{**answer, "i": r["i"], "url": r["url"]} for r in requests]

    holding = "export default async () => (await fetch('https://api.example.com/')).text()"
    try:
        await rt.start()
        runs = [asyncio.create_task(run(rt, holding, tenant=t, fetcher=held)) for t in ("a", "b", "c")]
        deadline = time.monotonic() + 60
        while sum(rt.state().busy.values()) < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        state = rt.state()
        assert sum(state.busy.values()) == 3 and len(state.workers) == 3, state
        late = await run(rt, "export default () => 1", tenant="d", queue_timeout=0.05)
        assert late.error_kind == "no_worker", "never more than max_pool_size workers"
        release.set()
        assert [r.response for r in await asyncio.gather(*runs)] == ["1", "1", "1"]
        while (len(rt.state().workers), rt.state().starting) != (1, 0) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert len(rt.state().workers) == 1
        assert (await run(rt, "export default () => 2")).response == 2
    finally:
        await rt.close()
