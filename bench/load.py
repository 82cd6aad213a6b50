"""Load: 20 clients each importing 5 000 users, 5 exports and 50 token requests a second with a hook, at once.

    .venv/bin/python bench/load.py [--clients 20] [--users 5000] [--exports 5] [--token-rate 50]

A real example app (HTTPS, PostgreSQL, 2 arq workers on Redis). Checks that every task completes and every
record is counted once, and prints p50/p99 of each endpoint.
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
import threading
import time
import uuid
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.generate import split_requests, users  # noqa: E402
from bench.harness import OUT, REDIS, free_port, recreate_database, start, wait_until_up  # noqa: E402
from bench.import_stats import cpu_seconds, machine_cpu_seconds, postgres_cpu_seconds  # noqa: E402
from litestar_userio import UserIOConfig  # noqa: E402
from litestar_userio.hooks.hook_service import HookSpec  # noqa: E402
from litestar_userio.services import Services  # noqa: E402
from userio_core.admin_keys import generate_key_pair, sign_admin_token  # noqa: E402

PASSWORD_HASH = "$2b$04$gfLwerl3GiBpgFfuAmfck.Bxn1y20no2FfB9SHzdpb6loeI/1UMZS"  # "correct horse", cost 4
HOOK = (ROOT / "plugins" / "add-user-attributes-to-jwt.ts").read_text()

latencies: dict[str, list[float]] = defaultdict(list)


async def timed(name: str, call):
    started = time.perf_counter()
    response = await call
    latencies[name].append(time.perf_counter() - started)
    return response


async def setup(database_url: str, projects: int) -> list[tuple[str, str, str]]:
    """Projects (id, host, admin token), roles and groups; the last one gets a user, a client and the hook."""
    services = await Services.start(UserIOConfig(database_url=database_url, migrate_on_startup=True), run_jobs=False)
    key = generate_key_pair()
    created = []
    try:
        for number in range(projects):
            project_id, host = f"load{number}", f"load{number}.localhost"
            await services.projects.create(project_id, [host])
            await services.projects.add_admin_key(project_id, key.kid, key.public_pem)
            await services.projects.add_keys(project_id, "userio_role", ["admin", "editor", "viewer"])
            await services.projects.add_keys(project_id, "userio_group", ["staff", "customers"])
            created.append((project_id, host, sign_admin_token(key.private_pem, project_id, ttl=timedelta(hours=2))))
        await services.tokens.applications.create(created[-1][0], "app", issue_jwt_access_token=True)
        await services.hooks.replace(created[-1][0], [HookSpec("oidc.jwt.pre_create", HOOK)])
    finally:
        await services.close()
    return created


async def importer(client: httpx.AsyncClient, host: str, token: str, bodies: list[bytes]) -> dict[str, int]:
    headers = {"Authorization": f"Bearer {token}", "Host": host, "Content-Type": "application/json"}
    locations = []
    for body in bodies:
        response = await timed("POST import", client.post("/_api/admin/users/import", content=body, headers=headers))
        response.raise_for_status()
        locations.append(response.headers["location"])
    totals: dict[str, int] = defaultdict(int)
    for location in locations:
        while True:
            response = await timed("GET import status", client.get(location, headers=headers))
            body = response.json()
            if body["status"] == "completed":
                for outcome, value in body["summary"].items():
                    totals[outcome] += value
                break
            await asyncio.sleep(0.25)
    return dict(totals)


async def exporter(client: httpx.AsyncClient, host: str, token: str, storage: httpx.AsyncClient) -> int:
    headers = {"Authorization": f"Bearer {token}", "Host": host, "Content-Type": "application/json"}
    response = await timed(
        "POST export", client.post("/_api/admin/users/export", json={"format": "ndjson"}, headers=headers)
    )
    response.raise_for_status()
    location = response.headers["location"]
    while True:
        result = (await timed("GET export status", client.get(location, headers=headers))).json()["result"]
        if result["status"] == "completed":
            break
        await asyncio.sleep(0.25)
    assert "failed_at" not in result, result
    download = await timed("GET download", storage.get(result["download_url"]))
    download.raise_for_status()
    assert download.content.count(b"\n") == result["record_count"]
    return int(result["record_count"])


def token_traffic(base: str, cert: Path, host: str, rate: float, stop: threading.Event) -> tuple[int, int]:
    """Token requests on a fixed schedule (open loop), from their own thread, event loop and connections.

    The import clients' loop is busy encrypting 500 KB bodies; sharing it delayed the token requests and their
    timing, and the figures measured the benchmark client rather than the server.
    """

    async def run() -> tuple[int, int]:
        form = {
            "grant_type": "password",
            "username": "hook.user@example.com",
            "password": "correct horse",
            "client_id": "app",
            "scope": "openid",
        }
        sent: list[asyncio.Task[httpx.Response]] = []
        async with httpx.AsyncClient(base_url=base, verify=str(cert), timeout=300) as client:
            started = time.perf_counter()
            while not stop.is_set():
                request = client.post("/oauth2/token", data=form, headers={"Host": host})
                sent.append(asyncio.create_task(timed("POST token (with hook)", request)))
                await asyncio.sleep(max(0.0, started + len(sent) / rate - time.perf_counter()))
            responses = await asyncio.gather(*sent)
        ok = sum(1 for r in responses if r.status_code == 200 and "access_token" in r.json())
        return ok, len(responses) - ok

    return asyncio.run(run())


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--users", type=int, default=5000)
    parser.add_argument("--exports", type=int, default=5)
    parser.add_argument("--token-rate", type=float, default=50)
    args = parser.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    home = OUT / "load-home"
    shutil.rmtree(home, ignore_errors=True)
    database_url = await recreate_database("userio_bench_load")
    print(f"generating {args.clients} x {args.users} users ...", flush=True)
    request_bodies = [split_requests(list(users(args.users, seed=seed))) for seed in range(args.clients)]
    projects = await setup(database_url, args.clients + 1)
    port = free_port()
    env = {
        **os.environ,
        "USERIO_HOME": str(home),
        "USERIO_DATABASE_URL": database_url,
        "USERIO_REDIS_URL": REDIS,
        "USERIO_QUEUE_NAME": f"userio:load:{uuid.uuid4().hex[:8]}",
        "PORT": str(port),
        "LOG_LEVEL": "warning",
        # Projects are told apart by Host (loadN.localhost); files are downloaded from the app's own address.
        "USERIO_DOWNLOAD_BASE_URL": f"https://localhost:{port}",
    }
    server = start([sys.executable, "-m", "example_app"], env, OUT / "load-server.log")
    workers = []
    try:
        base = f"https://localhost:{port}"
        cert = home / "tls" / "localhost.crt"
        for _ in range(600):
            if cert.exists():
                break
            await asyncio.sleep(0.1)
        await wait_until_up(base, cert)
        cli = [sys.executable, "-m", "litestar", "--app", "example_app.app:app", "userio", "worker"]
        workers = [start(cli, env, OUT / f"load-worker-{i}.log") for i in range(2)]
        await asyncio.sleep(3)
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=100)
        async with (
            httpx.AsyncClient(base_url=base, verify=str(cert), timeout=300, limits=limits) as client,
            httpx.AsyncClient(verify=str(cert), timeout=300) as storage,
        ):
            _, hook_host, hook_token = projects[-1]
            seeded = await client.post(
                "/_api/admin/users/import",
                json={
                    "identifier": "email",
                    "records": [
                        {
                            "email": "hook.user@example.com",
                            "name": "Hook",
                            "custom_attributes": {"tier": 1},
                            "password": {"type": "bcrypt", "password_hash": PASSWORD_HASH},
                        }
                    ],
                },
                headers={"Authorization": f"Bearer {hook_token}", "Host": hook_host},
            )
            seeded.raise_for_status()
            while (
                await client.get(
                    seeded.headers["location"], headers={"Authorization": f"Bearer {hook_token}", "Host": hook_host}
                )
            ).json()["status"] != "completed":
                await asyncio.sleep(0.1)

            stop = threading.Event()
            processes = {"server": server, "worker_0": workers[0], "worker_1": workers[1]}
            cpu_before = {name: cpu_seconds(p.pid) for name, p in processes.items()} | {
                "postgres": postgres_cpu_seconds()
            }
            machine_before = machine_cpu_seconds()
            started = time.perf_counter()
            tokens = asyncio.create_task(asyncio.to_thread(token_traffic, base, cert, hook_host, args.token_rate, stop))
            imports = [
                asyncio.create_task(importer(client, host, token, bodies))
                for (_, host, token), bodies in zip(projects[:-1], request_bodies, strict=True)
            ]
            await asyncio.sleep(5)  # exports run while the imports are in full swing
            exports = [
                asyncio.create_task(exporter(client, host, token, storage))
                for _, host, token in projects[: args.exports]
            ]
            import_totals = await asyncio.gather(*imports)
            exported = await asyncio.gather(*exports)
            stop.set()
            tokens_ok, tokens_failed = await tokens
            elapsed = time.perf_counter() - started
            cpu = {name: round(cpu_seconds(p.pid) - cpu_before[name], 1) for name, p in processes.items()}
            cpu |= {"postgres": round(postgres_cpu_seconds() - cpu_before["postgres"], 1)}
            cpu |= {"whole_machine": round(machine_cpu_seconds() - machine_before, 1)}
    finally:
        for process in [server, *workers]:
            process.send_signal(signal.SIGINT)
        for process in [server, *workers]:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()

    records = args.clients * args.users
    counted = sum(sum(t.get(k, 0) for k in ("inserted", "updated", "skipped", "failed")) for t in import_totals)
    assert counted == records, f"{counted} outcomes for {records} records"
    assert all(t["total"] == args.users for t in import_totals), import_totals
    figures = {
        "seconds": round(elapsed, 1),
        "cpu_seconds": cpu,
        "import_records": records,
        "import_outcomes": {
            k: sum(t.get(k, 0) for t in import_totals) for k in ("inserted", "updated", "skipped", "failed")
        },
        "exports": {"count": len(exported), "users_exported": exported},
        "tokens": {
            "ok": tokens_ok,
            "failed": tokens_failed,
            "per_second": round((tokens_ok + tokens_failed) / elapsed, 1),
        },
        "latency_ms": {
            name: {
                "calls": len(samples),
                "p50": round(statistics.median(samples) * 1000, 1),
                "p99": round(sorted(samples)[min(len(samples) - 1, int(len(samples) * 0.99))] * 1000, 1),
            }
            for name, samples in sorted(latencies.items())
        },
    }
    (OUT / "load.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))
    for name, stats in figures["latency_ms"].items():
        print(f"{name:28} p50 {stats['p50']:8.1f} ms   p99 {stats['p99']:8.1f} ms   ({stats['calls']} calls)")


if __name__ == "__main__":
    asyncio.run(main())
