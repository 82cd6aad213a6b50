"""Hook benchmark: our per-token hook cost against the reference's ways of running the same hook.

    .venv/bin/python bench/hooks.py [--calls 2000] [--deno-calls 30]

On the same hook (the reference's add-claims hook) and the same 2.4 KB event, in one run:
  1. ours: `HookRuntime.run()` warm, p50/p99;
  2. the reference's way: a fresh `deno run` per call (Deno from its PyPI package, a dev dependency);
  3. a warm Deno HTTP server on loopback, called per token (keep-alive client);
  4. whole token issuance through `TokenService.issue_access_token` (user load, claims, hook, RS256 signing)
     per second, with the hook and without it (SQLite file, the embedded default).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import OUT, free_port  # noqa: E402
from bench.hooks_runtime import event_json  # noqa: E402
from litestar_userio import UserIOConfig  # noqa: E402
from litestar_userio.hooks.compiler import compile_hook  # noqa: E402
from litestar_userio.hooks.runtime import HookRuntime, HookSource  # noqa: E402
from litestar_userio.hooks.service import HookSpec  # noqa: E402
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
        from litestar_userio.imports.schemas import ImportRequest

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


def msgspec_raw(value: dict) -> object:
    import msgspec

    return msgspec.Raw(msgspec.json.encode(value))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--deno-calls", type=int, default=30)
    parser.add_argument("--issuance-seconds", type=float, default=5.0)
    args = parser.parse_args()

    event = event_json()
    folder = Path(tempfile.mkdtemp(prefix="userio-hooks-bench-"))
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
