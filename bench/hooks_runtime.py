"""Hook runtime latency: `HookRuntime.run()` against in-process mini-racer, plus the IPC choices behind it.

    .venv/bin/python bench/hooks_runtime.py [--calls 3000]

Prints p50/p99 of warm `run()` calls with the add-claims hook of plugins/ on a realistic 2.4 KB event, the same hook
called in-process (no isolation, no deadline) as the baseline, throughput with 50 callers, the cost of replacing a
worker, and the round trip of three ways to talk to a child process. Results: docs/hooks-runtime.md.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import socket
import statistics
import struct
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from litestar_userio.hooks.compiler import compile_hook  # noqa: E402
from litestar_userio.hooks.v8_runtime import HookRuntime, HookSource, RuntimeLimits  # noqa: E402

WRAPPER_PREFIX = '(function(){"use strict";var __default__;'
WRAPPER_SUFFIX = "\n;return __default__;})"


def event_json() -> str:
    """The jwt fixture event of tests/hooks, grown like tests/hooks/test_runtime.py does to a real one's size."""
    event: dict[str, Any] = json.loads((ROOT / "tests/hooks/corpus/events/jwt.json").read_text())
    user = event["payload"]["user"]
    user["standard_attributes"].update(
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
    user["custom_attributes"].update(
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
    return json.dumps(event, separators=(",", ":"))


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    n = len(ordered)
    return {
        "p50": ordered[n // 2] * 1000,
        "p99": ordered[min(n - 1, int(n * 0.99))] * 1000,
        "max": ordered[-1] * 1000,
        "mean": statistics.fmean(ordered) * 1000,
    }


def show(name: str, stats: dict[str, float]) -> None:
    print(f"  {name:<62} p50 {stats['p50']:7.3f} ms   p99 {stats['p99']:7.3f} ms   max {stats['max']:7.2f} ms")


def measure_sync(call: Callable[[], object], calls: int, warmup: int = 300) -> dict[str, float]:
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return percentiles(samples)


async def measure_async(call: Callable[[], Awaitable[object]], calls: int, warmup: int = 300) -> dict[str, float]:
    for _ in range(warmup):
        await call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return percentiles(samples)


# -- in process ---------------------------------------------------------------------------------------------------


RUNNER = (
    "(function (box, factory) { return function (ev) {"
    " factory()(JSON.parse(typeof ev === 'string' ? ev : this)).then((v) => { box[0] = JSON.stringify(v); }); }; })"
)


def in_process_default(javascript: str, event: str, calls: int) -> dict[str, dict[str, float]]:
    """The plain embedding: MiniRacer() made outside any loop (mini-racer runs its own loop thread)."""
    from py_mini_racer import MiniRacer

    results = {}
    with MiniRacer() as ctx:
        factory: Any = ctx.eval(WRAPPER_PREFIX + javascript + WRAPPER_SUFFIX)
        box: Any = ctx.eval("['']")
        runner: Any = ctx.eval(RUNNER)(box, factory)

        def call() -> str:
            runner(event)
            return str(box[0])

        assert json.loads(call())["is_allowed"] is True
        results["MiniRacer(): call(event) + read the answer (baseline)"] = measure_sync(call, calls)
        awaited: Any = ctx.eval("(async (factory, ev) => JSON.stringify(await factory()(JSON.parse(ev))))")
        assert json.loads(awaited(factory, event).get())["is_allowed"] is True
        results["MiniRacer(): call(event) returning a promise, .get()"] = measure_sync(
            lambda: awaited(factory, event).get(), calls
        )
    return results


async def in_process_bound(javascript: str, event: str, calls: int) -> dict[str, dict[str, float]]:
    """What a worker does per run, minus the lockdown: a loop-bound context, one call, one read after the jobs."""
    from py_mini_racer import mini_racer

    from litestar_userio.hooks.v8_worker import v8_caller

    results = {}
    with mini_racer(asyncio.get_running_loop()) as ctx:
        box: Any = ctx.eval("['']")
        runner: Any = ctx.eval(RUNNER)(box, ctx.eval(WRAPPER_PREFIX + javascript + WRAPPER_SUFFIX))

        def public() -> str:
            runner(event)
            return str(box[0])

        assert json.loads(public())["is_allowed"] is True
        results["loop-bound context: public call + read"] = measure_sync(public, calls)
        direct = v8_caller(ctx)
        assert direct.__name__ == "direct"

        def fast() -> str:
            direct(runner, event)
            return str(box[0])

        assert json.loads(fast())["is_allowed"] is True
        results["loop-bound context: direct call + read (a worker's V8 floor)"] = measure_sync(fast, calls)
    return results


# -- the runtime --------------------------------------------------------------------------------------------------


async def runtime_sequential(hook: HookSource, event: str, calls: int) -> dict[str, float]:
    runtime = HookRuntime(RuntimeLimits(pool_size=2))
    await runtime.start()
    try:
        result = await runtime.run(hook, event)
        assert result.ok and result.response["is_allowed"] is True, result
        return await measure_async(lambda: runtime.run(hook, event), calls)
    finally:
        await runtime.close()


async def runtime_concurrent(hook: HookSource, event: str, rounds: int) -> tuple[float, dict[str, float], float]:
    """Throughput and latency of 50 concurrent callers, and the event loop's longest lag meanwhile (ms)."""
    runtime = HookRuntime(RuntimeLimits(pool_size=2))
    await runtime.start()
    lag = 0.0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal lag
        loop = asyncio.get_running_loop()
        while not done.is_set():
            before = loop.time()
            await asyncio.sleep(0.001)
            lag = max(lag, loop.time() - before - 0.001)

    try:
        await runtime.run(hook, event)
        samples: list[float] = []

        async def one() -> None:
            started = time.perf_counter()
            result = await runtime.run(hook, event)
            samples.append(time.perf_counter() - started)
            assert result.ok

        tick = asyncio.create_task(ticker())
        started = time.perf_counter()
        for _ in range(rounds):
            await asyncio.gather(*(one() for _ in range(50)))
        elapsed = time.perf_counter() - started
        done.set()
        await tick
        return rounds * 50 / elapsed, percentiles(samples), lag * 1000
    finally:
        await runtime.close()


async def worker_costs(hook: HookSource, event: str) -> tuple[dict[str, float], dict[str, float]]:
    """Start-up of a one-worker pool, and how long after a timeout kill the pool serves again."""
    starts = []
    for _ in range(5):
        runtime = HookRuntime(RuntimeLimits(pool_size=1))
        started = time.perf_counter()
        await runtime.start()
        starts.append(time.perf_counter() - started)
        await runtime.close()
    runtime = HookRuntime(RuntimeLimits(pool_size=1))
    await runtime.start()
    spin = HookSource("spin", "__default__ = () => { while (true) {} };")
    refills = []
    try:
        for _ in range(5):
            await runtime.run(hook, event)
            result = await runtime.run(spin, event, timeout=0.05)
            assert result.error_kind == "timeout"
            started = time.perf_counter()
            result = await runtime.run(hook, event)  # waits for the replacement, then loads the hook again
            refills.append(time.perf_counter() - started)
            assert result.ok
    finally:
        await runtime.close()
    return percentiles(starts), percentiles(refills)


# -- IPC alternatives ---------------------------------------------------------------------------------------------

ECHO_CHILD = r"""
import os, struct, sys
header, length = struct.Struct("<III"), struct.Struct("<I")
fd_in, fd_out = (0, 1) if sys.argv[1] == "pipes" else (int(sys.argv[2]), int(sys.argv[2]))
reader = os.fdopen(fd_in, "rb", buffering=65536, closefd=False)
reply = b"r" * 3000
os.write(fd_out, length.pack(2) + b"{}")
while True:
    head = reader.read(12)
    if len(head) < 12:
        os._exit(0)
    a, b, c = header.unpack(head)
    reader.read(a + b + c).decode()
    os.write(fd_out, length.pack(len(reply)) + reply)
"""


class _Frames(asyncio.Protocol):
    def __init__(self) -> None:
        self.buffer = bytearray()
        self.waiter: asyncio.Future[bytes] | None = None

    def take(self) -> asyncio.Future[bytes]:
        self.waiter = asyncio.get_running_loop().create_future()
        self._deliver()
        return self.waiter

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._deliver()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self.data_received(data)

    def _deliver(self) -> None:
        if len(self.buffer) < 4 or self.waiter is None:
            return
        (size,) = struct.unpack_from("<I", self.buffer)
        if len(self.buffer) >= 4 + size:
            frame = bytes(self.buffer[4 : 4 + size])
            del self.buffer[: 4 + size]
            waiter, self.waiter = self.waiter, None
            waiter.set_result(frame)


class _SubprocessFrames(_Frames, asyncio.SubprocessProtocol):
    pass


async def ipc_alternatives(event: str, calls: int) -> dict[str, dict[str, float]]:
    """Round trip of one 2.4 KB request and a 3 KB reply to a child that only echoes, three ways."""
    loop = asyncio.get_running_loop()
    request = struct.pack("<III", 64, 0, len(event)) + b"h" * 64 + event.encode()
    results = {}

    transport, frames = await loop.subprocess_exec(
        _SubprocessFrames, sys.executable, "-c", ECHO_CHILD, "pipes", stdin=-1, stdout=-1
    )
    await frames.take()
    stdin: Any = transport.get_pipe_transport(0)

    async def via_protocol() -> bytes:
        waiter = frames.take()
        stdin.write(request)
        return await waiter

    results["stdin/stdout pipes, SubprocessProtocol (chosen)"] = await measure_async(via_protocol, calls)

    process = await asyncio.create_subprocess_exec(sys.executable, "-c", ECHO_CHILD, "pipes", stdin=-1, stdout=-1)
    assert process.stdin is not None and process.stdout is not None
    pin, pout = process.stdin, process.stdout
    await pout.readexactly(6)

    async def via_streams() -> bytes:
        pin.write(request)
        (size,) = struct.unpack("<I", await pout.readexactly(4))
        return await pout.readexactly(size)

    results["stdin/stdout pipes, asyncio streams"] = await measure_async(via_streams, calls)

    ours, theirs = socket.socketpair()
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", ECHO_CHILD, "socket", str(theirs.fileno()), pass_fds=[theirs.fileno()]
    )
    theirs.close()
    socket_transport, socket_frames = await loop.create_connection(_Frames, sock=ours)
    await socket_frames.take()

    async def via_socket() -> bytes:
        waiter = socket_frames.take()
        socket_transport.write(request)
        return await waiter

    results["socketpair, Protocol"] = await measure_async(via_socket, calls)

    transport.close()
    process.kill()
    child.kill()
    socket_transport.close()
    await process.wait()
    await child.wait()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000, help="timed calls per measurement (default 3000)")
    args = parser.parse_args()
    event = event_json()
    javascript = compile_hook((ROOT / "plugins/add-user-attributes-to-jwt.ts").read_text()).javascript
    print(
        f"event: {len(event.encode())} bytes of JSON; hook: plugins/add-user-attributes-to-jwt.ts; {args.calls} calls"
    )
    print("\nin process (no isolation, no deadline):")
    # Made outside any running loop, as NOTES measured it (inside one, the context binds to that loop).
    baselines = in_process_default(javascript, event, args.calls)
    for name, stats in baselines.items():
        show(name, stats)
    asyncio.run(measure_all(javascript, event, args.calls, baselines))


async def measure_all(javascript: str, event: str, calls: int, baselines: dict[str, dict[str, float]]) -> None:
    hook = HookSource(hashlib.sha256(javascript.encode()).hexdigest(), javascript)
    bound = await in_process_bound(javascript, event, calls)
    for name, stats in bound.items():
        show(name, stats)
    baselines.update(bound)

    print("\nHookRuntime.run(), sequential, pool of 2:")
    sequential = await runtime_sequential(hook, event, calls)
    show("run()", sequential)
    for name, stats in baselines.items():
        print(f"  p50 ratio {sequential['p50'] / stats['p50']:5.2f}x  {name}")

    rounds = max(1, calls // 50)
    throughput, latency, lag = await runtime_concurrent(hook, event, rounds)
    print(f"\nHookRuntime.run(), 50 concurrent callers x {rounds} rounds, pool of 2: {throughput:,.0f} runs/s")
    show("run() including the wait for a free worker", latency)
    print(f"  event loop's longest lag meanwhile: {lag:.1f} ms")

    starts, refills = await worker_costs(hook, event)
    print("\nworkers:")
    show("start() of a one-worker pool (spawn, V8, lockdown)", starts)
    show("after a timeout kill: next run() (respawn + reload)", refills)

    print("\nIPC to a child that only echoes (2.4 KB in, 3 KB out):")
    for name, stats in (await ipc_alternatives(event, calls)).items():
        show(name, stats)


if __name__ == "__main__":
    main()
