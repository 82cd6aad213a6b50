"""Hook benchmark: our per-token hook cost against the reference's ways of running the same hook.

    .venv/bin/python bench/hooks.py [--calls 2000] [--deno-calls 30]

On the same hook (the reference's add-claims hook) and the same 2.4 KB event, in one run:
  1. ours: `HookRuntime.run()` warm, p50/p99;
  2. the reference's way: a fresh `deno run` per call (Deno from its PyPI package, a dev dependency);
  3. a warm Deno HTTP server on loopback, called per token (keep-alive client);
  4. whole token issuance through `TokenService.issue_access_token` (user load, claims, hook, RS256 signing)
     per second, with the hook and without it (SQLite file, the embedded default);
  5. tenant isolation (issue 9): project A's issuance p50/p99 quiet, then while project B floods endless hooks
     (`while (true) {}`) from 16 concurrent clients (12 through the test runner, 4 through B's own issuance);
  6. a hook that makes one `fetch` to a local server: its run's p50/p99 against the bare request (httpx, keep-alive).

`--only issuance`: part 4 alone (access tokens per second without and with the hook), for before/after runs.
`--only observability` (issue 30): the hook run as issuance makes it (`HookService.run_chain`) and a whole access
token, with metrics and traces off and on in the same run, in alternating blocks (spans through the OpenTelemetry
SDK, dropped by a discarding exporter); the p50 difference is the cost of metrics and traces per hook run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import OUT, free_port  # noqa: E402
from bench.hooks_runtime import event_json  # noqa: E402
from litestar_userio import HookConfig, UserIOConfig  # noqa: E402
from litestar_userio.hooks.compiler import compile_hook  # noqa: E402
from litestar_userio.hooks.hook_service import HookSpec  # noqa: E402
from litestar_userio.hooks.v8_runtime import HookRuntime, HookSource  # noqa: E402
from litestar_userio.services import Services  # noqa: E402

HOOK = """
import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "./hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...e.payload.jwt.payload,
          "https://example.com/custom_attributes": e.payload.user.custom_attributes,
          "https://example.com/standard_attributes": e.payload.user.standard_attributes,
        },
      },
    },
  };
}
"""

# How the reference runs a hook per call: a small runner imports the hook module, feeds it stdin, prints JSON.
RUN_ONCE = """
import hook from "./hook.ts";
const input = await new Response(Deno.stdin.readable).text();
console.log(JSON.stringify(await hook(JSON.parse(input))));
"""

SERVER = """
import hook from "./hook.ts";
const port = Number(Deno.args[0]);
Deno.serve({ port, hostname: "127.0.0.1", onListen() { console.log("ready"); } }, async (request) => {
  const output = await hook(await request.json());
  return new Response(JSON.stringify(output), { headers: { "content-type": "application/json" } });
});
"""


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
        "calls": len(ordered),
    }


def deno_binary() -> str:
    import deno  # the PyPI package ships the binary

    return str(deno.find_deno_bin())


async def ours(event: str, calls: int) -> dict[str, float]:
    runtime = HookRuntime()
    await runtime.start()
    javascript = compile_hook(HOOK).javascript
    hook = HookSource(id="bench", javascript=javascript)
    try:
        for _ in range(200):
            assert (await runtime.run(hook, event)).ok
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            result = await runtime.run(hook, event)
            samples.append(time.perf_counter() - started)
            assert result.ok, result
    finally:
        await runtime.close()
    return percentiles(samples)


def deno_per_call(folder: Path, event: str, calls: int) -> dict[str, float]:
    binary = deno_binary()
    command = [binary, "run", "--quiet", "--no-prompt", "--no-check", str(folder / "run_once.ts")]
    environment = {**os.environ, "DENO_DIR": str(folder / ".deno"), "NO_COLOR": "1"}
    subprocess.run(command, input=event.encode(), capture_output=True, check=True, env=environment)  # warm the cache
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        output = subprocess.run(command, input=event.encode(), capture_output=True, check=True, env=environment)
        samples.append(time.perf_counter() - started)
        assert json.loads(output.stdout)["is_allowed"] is True
    return percentiles(samples)


async def deno_server(folder: Path, event: str, calls: int) -> dict[str, float]:
    port = free_port()
    environment = {**os.environ, "DENO_DIR": str(folder / ".deno"), "NO_COLOR": "1"}
    server = subprocess.Popen(
        [
            deno_binary(),
            "run",
            "--quiet",
            "--no-prompt",
            "--no-check",
            f"--allow-net=127.0.0.1:{port}",
            str(folder / "server.ts"),
            str(port),
        ],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == b"ready"
        body = event.encode()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            for _ in range(200):
                (await client.post("/", content=body)).raise_for_status()
            samples = []
            for _ in range(calls):
                started = time.perf_counter()
                response = await client.post("/", content=body)
                samples.append(time.perf_counter() - started)
                assert response.json()["is_allowed"] is True
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)
    return percentiles(samples)


async def issuance(folder: Path, seconds: float) -> dict[str, float]:
    """Access tokens per second through the token service, without and with the hook."""
    config = UserIOConfig(database_url=f"sqlite:///{folder / 'issuance.sqlite3'}", migrate_on_startup=True)
    services = await Services.start(config, run_jobs=False)
    try:
        await services.projects.create("bench", ["bench.local"])
        await services.tokens.applications.create("bench", "app", issue_jwt_access_token=True)
        from litestar_userio.imports.import_schemas import ImportRequest

        request = ImportRequest(
            identifier="email",
            records=[msgspec_raw({"email": "ada@example.com", "name": "Ada", "custom_attributes": {"tier": 3}})],
        )
        task = await services.imports.create_task(await services.projects.get("bench"), request)  # type: ignore[arg-type]
        await services.imports.process_chunk(task.id, 0)
        user_id = json.loads(await services.imports.status("bench", task.id))["details"][0]["user_id"]
        rates = {}
        for label, hooks in (("without_hook", []), ("with_hook", [HookSpec("oidc.jwt.pre_create", HOOK)])):
            await services.hooks.replace("bench", hooks)
            for _ in range(100):
                await services.tokens.issue_access_token("bench", "app", user_id, issuer="https://bench.local")
            count = 0
            started = time.perf_counter()
            while time.perf_counter() - started < seconds:
                await services.tokens.issue_access_token("bench", "app", user_id, issuer="https://bench.local")
                count += 1
            rates[label] = round(count / (time.perf_counter() - started))
        return rates
    finally:
        await services.close()


async def make_user(services: Services, project: str, email: str) -> str:
    from litestar_userio.imports.import_schemas import ImportRequest

    request = ImportRequest(
        identifier="email", records=[msgspec_raw({"email": email, "custom_attributes": {"tier": 3}})]
    )
    task = await services.imports.create_task(await services.projects.get(project), request)  # type: ignore[arg-type]
    await services.imports.process_chunk(task.id, 0)
    return json.loads(await services.imports.status(project, task.id))["details"][0]["user_id"]


async def observability_cost(folder: Path, calls: int, blocks: int = 6) -> dict[str, object]:
    """p50/p99 of a hook run and of a token with metrics and traces off, metrics only, and both on.

    The modes alternate in blocks of `calls`, so a busy machine weighs on each alike; the CPU this process spends
    per hook run and token is read too, steadier than a p50 on a busy machine. `span_floor_ms` is what one
    span costs the OpenTelemetry SDK itself (start and end, no code of ours): the least a traced hook run can cost.
    """
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    from litestar_userio import MetricsConfig, TracingConfig
    from litestar_userio.hooks.token_events import EventContext
    from litestar_userio.observability import telemetry

    class Discard(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Discard()))
    modes = ("off", "metrics", "on")
    config = UserIOConfig(database_url=f"sqlite:///{folder / 'observability.sqlite3'}", migrate_on_startup=True)
    services = await Services.start(config, run_jobs=False)
    samples: dict[str, dict[str, list[float]]] = {m: {"hook_run": [], "token": []} for m in modes}
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    try:
        await services.projects.create("bench", ["bench.local"])
        await services.tokens.applications.create("bench", "app", issue_jwt_access_token=True)
        user_id = await make_user(services, "bench", "ada@example.com")
        await services.hooks.replace("bench", [HookSpec("oidc.jwt.pre_create", HOOK)])
        hooks = await services.hooks.list("bench")
        user = await services.tokens.load_user("bench", user_id)
        application = await services.tokens.application("bench", "app")
        claims = services.tokens.access_claims(user, application, "https://bench.local", "openid", config.clock.now())
        context = EventContext(client_id="app", app_id="bench")
        for block in range(blocks * len(modes) + 1):
            mode = modes[block % len(modes)]
            telemetry.reset()
            if mode != "off":
                telemetry.configure(MetricsConfig(), TracingConfig(tracer_provider=provider) if mode == "on" else None)
            cpu_started = time.process_time()
            for _ in range(calls):
                started = time.perf_counter()
                await services.hooks.run_chain("oidc.jwt.pre_create", hooks, user, claims, context)
                ran = time.perf_counter()
                await services.tokens.issue_access_token("bench", "app", user_id, issuer="https://bench.local")
                if block:  # the first block warms up
                    samples[mode]["hook_run"].append(ran - started)
                    samples[mode]["token"].append(time.perf_counter() - ran)
            if block:
                cpu[mode].append((time.process_time() - cpu_started) / calls)
    finally:
        telemetry.reset()
        await services.close()
    tracer = provider.get_tracer("bench")
    attributes = {"userio.project_id": "bench", "userio.hook.event": "oidc.jwt.pre_create"}
    floor = []
    for _ in range(calls * blocks):
        started = time.perf_counter()
        tracer.start_span("userio.hook.run", attributes=attributes).end()
        floor.append(time.perf_counter() - started)
    provider.shutdown()
    figures: dict[str, object] = {m: {k: percentiles(v) for k, v in parts.items()} for m, parts in samples.items()}
    for part in ("hook_run", "token"):
        off = statistics.median(samples["off"][part])
        for mode in ("metrics", "on"):
            cost = statistics.median(samples[mode][part]) - off
            figures[f"{part}_p50_cost_ms_{mode}"] = round(cost * 1000, 4)
    # This process's CPU per hook run and token (V8 runs in its own): steadier than a p50 on a busy machine.
    for mode in ("metrics", "on"):
        cost = statistics.median(cpu[mode]) - statistics.median(cpu["off"])
        figures[f"cpu_cost_ms_per_run_and_token_{mode}"] = round(cost * 1000, 4)
    figures["span_floor_ms"] = round(statistics.median(floor) * 1000, 4)
    return figures


ENDLESS = "export default function (e: any): any { while (true) {} }"


async def isolation(folder: Path, calls: int) -> dict[str, dict[str, float]]:
    """Project A's issuance latency, quiet and while project B floods endless hooks from 16 clients."""
    from litestar_userio.hooks.token_events import EventContext

    # A 1 s hook limit, so that during the measurement B's workers are killed and replaced several times over.
    config = UserIOConfig(
        database_url=f"sqlite:///{folder / 'isolation.sqlite3'}",
        migrate_on_startup=True,
        hooks=HookConfig(hook_timeout=timedelta(seconds=1)),
    )
    services = await Services.start(config, run_jobs=False)
    try:
        for project in ("a", "b"):
            await services.projects.create(project, [f"{project}.local"])
            await services.tokens.applications.create(project, "app", issue_jwt_access_token=True)
        user_a = await make_user(services, "a", "ada@example.com")
        user_b = await make_user(services, "b", "bob@example.com")
        await services.hooks.replace("a", [HookSpec("oidc.jwt.pre_create", HOOK)])
        await services.hooks.replace("b", [HookSpec("oidc.jwt.pre_create", ENDLESS)])
        endless = await services.hooks.compile_all([HookSpec("oidc.jwt.pre_create", ENDLESS)])

        async def issue_a() -> float:
            started = time.perf_counter()
            await services.tokens.issue_access_token("a", "app", user_a, issuer="https://a.local")
            return time.perf_counter() - started

        for _ in range(100):
            await issue_a()
        quiet = [await issue_a() for _ in range(calls)]
        stop = asyncio.Event()
        flood_runs = 0

        async def test_client() -> None:
            nonlocal flood_runs
            while not stop.is_set():
                await services.tokens.preview("b", "oidc.jwt.pre_create", "app", user_b, issuer="x", hooks=endless)
                flood_runs += 1

        async def token_client() -> None:
            nonlocal flood_runs
            context = EventContext(client_id="app", app_id="b")
            while not stop.is_set():
                with contextlib.suppress(Exception):
                    await services.tokens.issue_access_token("b", "app", user_b, issuer="x", context=context)
                flood_runs += 1

        flood = [asyncio.create_task(test_client()) for _ in range(12)]
        flood += [asyncio.create_task(token_client()) for _ in range(4)]
        await asyncio.sleep(1.0)  # let B's workers get stuck first
        flooded, failures = [], 0
        started = time.perf_counter()
        while len(flooded) + failures < calls or time.perf_counter() - started < 6.0:
            try:
                flooded.append(await issue_a())
            except Exception:
                failures += 1
        stop.set()
        await asyncio.gather(*flood)
        under_flood = percentiles(flooded) if flooded else {"calls": 0}
        return {
            "quiet": percentiles(quiet),
            "b_flooding_16_clients": {**under_flood, "failures": failures, "b_runs_meanwhile": flood_runs},
        }
    finally:
        await services.close()


ENTITLEMENTS_SERVER = """
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 65536  # one write per response: headers and body apart met Nagle and delayed ACKs (40 ms)

    def do_GET(self):
        body = json.dumps({"plan": "gold", "seats": 12}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
print("ready", flush=True)
server.serve_forever()
"""

FETCH_HOOK = """
export default async function (e: any, ctx: any) {
  const response = await fetch("ORIGIN/entitlements", { headers: { authorization: `Bearer ${ctx.secrets.KEY}` } });
  const body = await response.json();
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, plan: body.plan } } } };
}
"""


async def fetching(calls: int) -> dict[str, object]:
    """A hook making one fetch to a local server, against the bare request and the same hook without fetch."""
    from litestar_userio.hooks.fetch import FetchClient, FetchLimits, FetchSession

    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-c", ENTITLEMENTS_SERVER, str(port)], stdout=subprocess.PIPE)
    runtime = HookRuntime()
    client = FetchClient(timeout=5.0)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == b"ready"
        event = event_json()
        with_fetch = HookSource("fetch", compile_hook(FETCH_HOOK.replace("ORIGIN", origin)).javascript)
        without = HookSource("plain", compile_hook(HOOK).javascript)
        secrets = {"KEY": "bench-key"}

        async def run(hook: HookSource) -> float:
            session = FetchSession(client, [origin], FetchLimits())
            started = time.perf_counter()
            result = await runtime.run(hook, event, secrets=secrets, fetcher=session)
            elapsed = time.perf_counter() - started
            assert result.ok, result
            return elapsed

        async with httpx.AsyncClient() as bare_client:

            async def bare() -> float:
                started = time.perf_counter()
                (await bare_client.get(f"{origin}/entitlements")).raise_for_status()
                return time.perf_counter() - started

            figures: dict[str, list[float]] = {"bare_request": [], "hook_with_fetch": [], "hook_without_fetch": []}
            for _ in range(200):
                await bare()
                await run(with_fetch)
                await run(without)
            for _ in range(calls):  # interleaved, so load on the machine hits all three alike
                figures["bare_request"].append(await bare())
                figures["hook_with_fetch"].append(await run(with_fetch))
                figures["hook_without_fetch"].append(await run(without))
        stats = {name: percentiles(samples) for name, samples in figures.items()}
        overhead = {
            f"{q}_ms": round(
                stats["hook_with_fetch"][f"{q}_ms"]
                - stats["bare_request"][f"{q}_ms"]
                - stats["hook_without_fetch"][f"{q}_ms"],
                3,
            )
            for q in ("p50", "p99")
        }
        return {**stats, "fetch_overhead_over_bare_request": overhead}
    finally:
        await runtime.close()
        await client.close()
        server.terminate()
        server.wait(timeout=10)


def msgspec_raw(value: dict) -> object:
    import msgspec

    return msgspec.Raw(msgspec.json.encode(value))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--deno-calls", type=int, default=30)
    parser.add_argument("--issuance-seconds", type=float, default=5.0)
    parser.add_argument("--isolation-calls", type=int, default=300)
    parser.add_argument(
        "--only", choices=["isolation", "fetch", "observability", "issuance"], help="run only this part"
    )
    args = parser.parse_args()

    event = event_json()
    folder = Path(tempfile.mkdtemp(prefix="userio-hooks-bench-"))
    if args.only is not None:
        try:
            parts = {
                "isolation": lambda: isolation(folder, args.isolation_calls),
                "fetch": lambda: fetching(args.calls),
                "observability": lambda: observability_cost(folder, max(args.calls // 6, 50)),
                "issuance": lambda: issuance(folder, args.issuance_seconds),
            }
            part = await parts[args.only]()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"hooks_{args.only}.json").write_text(json.dumps(part, indent=2))
        print(json.dumps(part, indent=2))
        return
    try:
        (folder / "hook.ts").write_text(HOOK)
        shutil.copy(ROOT / "plugins" / "hooks.d.ts", folder / "hooks.d.ts")
        (folder / "run_once.ts").write_text(RUN_ONCE)
        (folder / "server.ts").write_text(SERVER)
        print(f"event: {len(event)} bytes", flush=True)
        ours_stats = await ours(event, args.calls)
        print("ours", ours_stats, flush=True)
        per_call = deno_per_call(folder, event, args.deno_calls)
        print("deno run per call", per_call, flush=True)
        served = await deno_server(folder, event, args.calls)
        print("warm deno server", served, flush=True)
        rates = await issuance(folder, args.issuance_seconds)
        print("issuance", rates, flush=True)
        isolated = await isolation(folder, args.isolation_calls)
        print("isolation", isolated, flush=True)
        fetched = await fetching(args.calls)
        print("fetch", fetched, flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    figures = {
        "event_bytes": len(event),
        "ours_warm": ours_stats,
        "deno_run_per_call": per_call,
        "deno_warm_http_server": served,
        "speedup_vs_deno_per_call_p50": round(per_call["p50_ms"] / ours_stats["p50_ms"], 1),
        "speedup_vs_warm_deno_server_p50": round(served["p50_ms"] / ours_stats["p50_ms"], 2),
        "token_issuance_per_second": rates,
        "issuance_with_hook_ratio": round(rates["with_hook"] / rates["without_hook"], 3),
        "tenant_isolation_issuance_a": isolated,
        "hook_fetch": fetched,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "hooks.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))
    print(
        f"\nhook p50 {ours_stats['p50_ms']} ms, p99 {ours_stats['p99_ms']} ms | deno run per call p50 {per_call['p50_ms']} ms "
        f"({figures['speedup_vs_deno_per_call_p50']}x) | warm deno server p50 {served['p50_ms']} ms "
        f"({figures['speedup_vs_warm_deno_server_p50']}x) | issuance {rates['with_hook']}/s with the hook, "
        f"{rates['without_hook']}/s without (ratio {figures['issuance_with_hook_ratio']})"
    )


if __name__ == "__main__":
    asyncio.run(main())
