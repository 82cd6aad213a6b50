"""Token benchmark: refresh and password grants per second over HTTPS to the example app, on PostgreSQL and SQLite.

    .venv/bin/python bench/tokens.py [--seconds 8] [--clients 8] [--rounds 4] [--engines postgres,sqlite]

For each engine the example app runs in its own process (HTTPS, the in-process runner, no hook workers beyond
its own pool), with two projects: `tok` (no hook) and `tokhook` (`plugins/add-user-attributes-to-jwt.ts` on
`oidc.jwt.pre_create`), each with a client issuing JWT access tokens and two users, one with a bcrypt cost 4 hash
and one with cost 10. `--clients` clients send requests back to back for `--seconds` each:

- refresh: each client follows its own rotating refresh token (a refresh grant answers the next one), signed in
  with the scope "openid offline_access": each refresh signs two RS256 tokens (the access token and an ID token);
- refresh_access_only: the same with the scope "offline_access" alone: each refresh signs one RS256 token (the
  access token), as the baseline does;
- password: password grants for the cost 4 user, then for the cost 10 one. A hash below `PasswordConfig.bcrypt_cost`
  (10) is re-hashed to it at its user's first good sign-in, as the plugin does for every legacy hash: after the
  warm-up both users check a cost 10 hash, and the figures differ by the machine's noise alone.

The baseline, in the same run and on the same machine: `bench/token_baseline.py`, a bare Litestar handler in its
own uvicorn process with the same certificate that reads one user row by primary key from the same database and
signs an RS256 JWT with the project's own signing key. Both servers run side by side, and each figure is taken in
`--rounds` turns alternating with the baseline (ours, baseline, ours, ...): its ratio is the median of the turns'
ratios, so a drift in the machine's speed (other guests take from half to none of it within a minute here) moves
both sides of a pair alike. A first turn of each, not counted, warms the new processes up. Each figure also carries
the server's CPU milliseconds per answer (its process and its hook workers, from /proc), beside the baseline's.
Written to `bench/out/tokens.json`: `{"refresh": {...}, "refresh_access_only": {...}, "password": {...}}` for
SQLite at the top, and every figure per engine under `engines`.
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
import time
from pathlib import Path
from typing import Any

import bcrypt
import httpx
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import OUT, free_port, recreate_database, start, wait_until_up  # noqa: E402
from litestar_userio import UserIOConfig  # noqa: E402
from litestar_userio.hooks.hook_service import HookSpec  # noqa: E402
from litestar_userio.services import Services  # noqa: E402

PASSWORD = "correct horse"
COST_4 = "$2b$04$gfLwerl3GiBpgFfuAmfck.Bxn1y20no2FfB9SHzdpb6loeI/1UMZS"  # bcrypt("correct horse"), cost 4
HOOK = (ROOT / "plugins" / "add-user-attributes-to-jwt.ts").read_text()
PROJECTS = {"tok": "tok.localhost", "tokhook": "tokhook.localhost"}


async def setup(database_url: str) -> dict[str, str]:
    """Both projects, their clients, users and the hook; the id of `tok`'s cost 4 user (the baseline's row)."""
    services = await Services.start(UserIOConfig(database_url=database_url, migrate_on_startup=True), run_jobs=False)
    cost_10 = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(10)).decode()
    ids: dict[str, str] = {}
    try:
        for project_id, host in PROJECTS.items():
            await services.projects.create(project_id, [host])
            await services.tokens.applications.create(project_id, "app", issue_jwt_access_token=True)
            project = await services.projects.get(project_id)
            assert project is not None
            for name, hashed in (("cost4", COST_4), ("cost10", cost_10)):
                record = {
                    "email": f"{name}@example.com",
                    "name": name,
                    "custom_attributes": {"tier": 1},
                    "password": {"type": "bcrypt", "password_hash": hashed},
                }
                document, _ = await services.user_admin.create(project, json.dumps(record).encode())
                ids[f"{project_id}/{name}"] = str(document["sub"])
        await services.hooks.replace("tokhook", [HookSpec("oidc.jwt.pre_create", HOOK)])
    finally:
        await services.close()
    return ids


def password_form(user: str, scope: str = "openid") -> dict[str, str]:
    return {
        "grant_type": "password",
        "username": f"{user}@example.com",
        "password": PASSWORD,
        "client_id": "app",
        "scope": scope,
    }


def process_cpu(pid: int) -> float:
    """CPU seconds of a process (every thread) and of its live children (the hook workers), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")

    def own(stat: str) -> tuple[int, float]:
        fields = stat.rsplit(")", 1)[1].split()
        return int(fields[1]), (int(fields[11]) + int(fields[12])) / tick

    total = own(Path(f"/proc/{pid}/stat").read_text())[1]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent, seconds = own((entry / "stat").read_text())
            except OSError:
                continue
            total += seconds if parent == pid else 0.0
    return total


async def hammer(
    base: str, cert: Path, host: str, clients: int, seconds: float, send: Any, pid: int
) -> dict[str, float]:
    """`clients` loops calling `send(client, state)` back to back for `seconds`: answers per second, failures, and
    the server's CPU milliseconds per answer (process `pid`)."""
    done, failed = 0, 0
    limits = httpx.Limits(max_connections=clients + 2, max_keepalive_connections=clients + 2)
    async with httpx.AsyncClient(
        base_url=base, verify=str(cert), headers={"Host": host}, timeout=60, limits=limits
    ) as client:
        states = [await send(client, None) for _ in range(clients)]  # warm-up, and each loop's own state
        deadline = time.perf_counter() + seconds

        async def loop(index: int) -> None:
            nonlocal done, failed
            while time.perf_counter() < deadline:
                try:
                    states[index] = await send(client, states[index])
                    done += 1
                except RuntimeError:
                    failed += 1
                    states[index] = await send(client, None)

        cpu = process_cpu(pid)
        started = time.perf_counter()
        await asyncio.gather(*(loop(i) for i in range(clients)))
        elapsed = time.perf_counter() - started
        cpu = process_cpu(pid) - cpu
    return {"per_second": done / elapsed, "failed": failed, "server_cpu_ms": 1000 * cpu / done if done else 0.0}


async def paired(ours: Any, baseline: Any, rounds: int) -> tuple[dict[str, float], list[dict[str, float]]]:
    """A figure against the baseline, sampled in turn (ours, baseline, ours, ...) `rounds` times.

    The ratio is taken pair by pair and its median kept: this machine's speed drifts by half within a minute
    (other guests), which a figure measured minutes after its baseline would carry into the ratio.
    """
    pairs = [(await ours(), await baseline()) for _ in range(rounds)]
    figure = {
        "per_second": round(statistics.median(a["per_second"] for a, _ in pairs), 1),
        "ratio_to_baseline": round(statistics.median(a["per_second"] / b["per_second"] for a, b in pairs), 2),
        "baseline_per_second": round(statistics.median(b["per_second"] for _, b in pairs), 1),
        "server_cpu_ms": round(statistics.median(a["server_cpu_ms"] for a, _ in pairs), 2),
        "baseline_server_cpu_ms": round(statistics.median(b["server_cpu_ms"] for _, b in pairs), 2),
        "failed": sum(a["failed"] for a, _ in pairs),
    }
    return figure, [b for _, b in pairs]


def refresher(user: str, scope: str = "openid offline_access") -> Any:
    """Follow one rotating refresh token; a refresh answers the scope the first sign-in asked (`scope`)."""

    async def send(client: httpx.AsyncClient, refresh_token: str | None) -> str:
        if refresh_token is None:
            response = await client.post("/oauth2/token", data=password_form(user, scope))
        else:
            form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": "app"}
            response = await client.post("/oauth2/token", data=form)
        if response.status_code != 200:
            raise RuntimeError(response.text[:300])
        return str(response.json()["refresh_token"])

    return send


def signer(user: str) -> Any:
    async def send(client: httpx.AsyncClient, _: object) -> None:
        response = await client.post("/oauth2/token", data=password_form(user))
        if response.status_code != 200 or "access_token" not in response.json():
            raise RuntimeError(response.text[:300])

    return send


async def baseline_send(client: httpx.AsyncClient, _: object) -> None:
    response = await client.post("/token")
    if response.status_code != 200:
        raise RuntimeError(response.text[:300])


async def signing_key_pem(database_url: str, home: Path) -> Path:
    """The active signing key of `tok` (made by its first token), written where the baseline reads it."""
    services = await Services.start(UserIOConfig(database_url=database_url), run_jobs=False)
    try:
        key = (await services.tokens.keys.active("tok")).private_key
        pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
    finally:
        await services.close()
    path = home / "baseline-key.pem"
    path.write_text(pem)
    return path


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.send_signal(signal.SIGINT)
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


async def run_engine(engine: str, seconds: float, clients: int, rounds: int) -> dict[str, dict[str, float]]:
    home = OUT / f"tokens-{engine}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    if engine == "postgres":
        database_url = await recreate_database("userio_bench_tokens")
    else:
        database_url = f"sqlite:///{(home / 'userio.sqlite3').resolve()}"
    ids = await setup(database_url)
    key_file = await signing_key_pem(database_url, home)
    port, baseline_port = free_port(), free_port()
    env = {
        **os.environ,
        "USERIO_HOME": str(home),
        "USERIO_DATABASE_URL": database_url,
        "PORT": str(port),
        "LOG_LEVEL": "warning",
        "USERIO_METRICS": "off",
    }
    env.pop("USERIO_REDIS_URL", None)
    server = start([sys.executable, "-m", "example_app"], env, OUT / f"tokens-{engine}-server.log")
    processes = [server]
    figures: dict[str, dict[str, float]] = {}
    try:
        base, cert = f"https://localhost:{port}", home / "tls" / "localhost.crt"
        for _ in range(600):
            if cert.exists():
                break
            await asyncio.sleep(0.1)
        await wait_until_up(base, cert)
        baseline_env = {
            **os.environ,
            "BASELINE_DATABASE_URL": database_url,
            "BASELINE_USER_ID": ids["tok/cost4"],
            "BASELINE_KEY_FILE": str(key_file),
        }
        uvicorn = [
            sys.executable,
            "-m",
            "uvicorn",
            "bench.token_baseline:app",
            "--port",
            str(baseline_port),
            "--ssl-certfile",
            str(cert),
            "--ssl-keyfile",
            str(home / "tls" / "localhost.key"),
            "--log-level",
            "warning",
        ]
        baseline = start(uvicorn, baseline_env, OUT / f"tokens-{engine}-baseline.log")
        processes.append(baseline)
        baseline_base = f"https://localhost:{baseline_port}"
        for _ in range(300):
            try:
                async with httpx.AsyncClient(verify=str(cert)) as probe:
                    if (await probe.post(baseline_base + "/token")).status_code == 200:
                        break
            except (httpx.HTTPError, OSError):
                await asyncio.sleep(0.2)
        tok, hook = PROJECTS["tok"], PROJECTS["tokhook"]
        slice_ = seconds / rounds

        def ours(host: str, send: Any) -> Any:
            return lambda: hammer(base, cert, host, clients, slice_, send, server.pid)

        def floor() -> Any:
            return hammer(baseline_base, cert, tok, clients, slice_, baseline_send, baseline.pid)

        await ours(tok, refresher("cost4"))()  # not counted: the first seconds of a new process
        await floor()
        samples: list[dict[str, float]] = []
        for name, host, send in (
            ("refresh", tok, refresher("cost4")),
            ("refresh_access_only", tok, refresher("cost4", "offline_access")),
            ("refresh_with_hook", hook, refresher("cost4")),
            ("password", tok, signer("cost4")),
            ("password_with_hook", hook, signer("cost4")),
            ("password_cost10", tok, signer("cost10")),
        ):
            figures[name], taken = await paired(ours(host, send), floor, rounds)
            samples += taken
        figures["baseline"] = {
            "per_second": round(statistics.median(b["per_second"] for b in samples), 1),
            "server_cpu_ms": round(statistics.median(b["server_cpu_ms"] for b in samples), 2),
            "failed": sum(b["failed"] for b in samples),
        }
    finally:
        stop(processes)
    return figures


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--engines", default="postgres,sqlite")
    parser.add_argument("--rounds", type=int, default=4, help="Turns of each figure and the baseline, in alternation")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    engines = {}
    for engine in args.engines.split(","):
        print(f"{engine}: {args.clients} clients, {args.seconds:g} s a figure ...", flush=True)
        engines[engine] = await run_engine(engine, args.seconds, args.clients, args.rounds)
    top = engines.get("sqlite") or next(iter(engines.values()))
    result = {
        "refresh": top["refresh"],
        "refresh_access_only": top["refresh_access_only"],
        "password": top["password"],
        "engines": engines,
        "clients": args.clients,
        "seconds": args.seconds,
        "rounds": args.rounds,
    }
    (OUT / "tokens.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    for engine, figures in engines.items():
        for name, figure in figures.items():
            if name == "baseline":
                continue
            print(
                f"tokens {engine} {name}: {figure['per_second']:,.0f}/s, server {figure['server_cpu_ms']:.2f} ms CPU "
                f"an answer | baseline (one indexed read + RS256) {figure['baseline_per_second']:,.0f}/s, "
                f"{figure['baseline_server_cpu_ms']:.2f} ms | ratio {figure['ratio_to_baseline']:.2f} (median of "
                f"{args.rounds} turns in alternation) | failed {figure['failed']:.0f}"
            )


if __name__ == "__main__":
    asyncio.run(main())
