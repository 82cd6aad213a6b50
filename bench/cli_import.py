"""The `userio` client's end-to-end rate against the API driven directly, in the same run (issue 12: >= 0.9).

    .venv/bin/python bench/cli_import.py [--users 100000] [--workers 2]

Starts the example app (HTTPS, PostgreSQL, 2 arq workers) as real processes. Imports the same generated users
four times, each into its own empty project of that server, in the order API, CLI, CLI, API (so a database
that grows, or load that drifts, favours neither): the API way is bench/import.py's (requests just under
500 000 bytes, posted 8 at a time, then every task awaited); the CLI way is `userio import users.ndjson` as a
person runs it (its own process: reading and checking the file, cutting requests, following tasks, writing
the report and the summary). Prints both rates (records/s, end to end, summed over their two runs), the
ratio, and the CLI process's own CPU seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.generate import split_requests, users  # noqa: E402
from bench.harness import OUT, REDIS, free_port, recreate_database, run_import, start, wait_until_up  # noqa: E402
from userio_core.admin_keys import sign_admin_token  # noqa: E402

USERIO = str(Path(sys.executable).parent / "userio")
LITESTAR = [sys.executable, "-m", "litestar", "--app", "example_app.app:app", "userio"]


def make_project(env: dict[str, str], home: Path, project: str) -> None:
    """A project with the generated users' roles and groups, through `litestar userio` as an operator does."""
    for command in (
        ["project", "create", "--id", project, "--domain", f"{project}.localhost"],
        ["roles", "add", "--project", project, "admin", "editor", "viewer"],
        ["groups", "add", "--project", project, "staff", "customers"],
    ):
        subprocess.run([*LITESTAR, *command], cwd=ROOT, env=env, check=True, capture_output=True)


async def api_import(base: str, cert: Path, home: Path, project: str, bodies: list[bytes], in_flight: int) -> float:
    token = sign_admin_token((home / f"{project}-admin-key.pem").read_text(), project)
    _, total_seconds, summaries = await run_import(base, cert, token, bodies, in_flight, host=f"{project}.localhost")
    assert sum(s["inserted"] for s in summaries) == sum(s["total"] for s in summaries), summaries[:3]
    return total_seconds


def cli_import(base: str, env: dict[str, str], work: Path, project: str) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds of the CLI process, its closing lines."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(
        [USERIO, "import", "users.ndjson", "--url", base, "--project", project, "--host", f"{project}.localhost",
         "--quiet", "--report", f"{project}.ndjson", "--failed", f"{project}-failed.ndjson"],
        cwd=work, env=env, capture_output=True, text=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"userio import failed ({result.returncode}): {result.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu, result.stderr


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--in-flight", type=int, default=8, help="bench/import.py's requests at once")
    args = parser.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    home = OUT / "cli-import-home"
    work = OUT / "cli-import-work"
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    database_url = await recreate_database("userio_bench_cli_import")
    port = free_port()
    env = {
        **os.environ,
        "USERIO_HOME": str(home.resolve()),
        "USERIO_DATABASE_URL": database_url,
        "USERIO_REDIS_URL": REDIS,
        "USERIO_QUEUE_NAME": f"userio:bench:{uuid.uuid4().hex[:8]}",
        "PORT": str(port),
        "LOG_LEVEL": "warning",
    }
    print(f"generating {args.users} users ...", flush=True)
    records = list(users(args.users))
    bodies = split_requests(records)
    (work / "users.ndjson").write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    print(f"{len(bodies)} requests, {sum(map(len, bodies)) / 1e6:.1f} MB", flush=True)

    server = start([sys.executable, "-m", "example_app"], env, OUT / "cli-import-server.log")
    workers: list[subprocess.Popen[bytes]] = []
    try:
        base = f"https://localhost:{port}"
        cert = home / "tls" / "localhost.crt"
        deadline = time.monotonic() + 90
        while not cert.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await wait_until_up(base, cert)
        workers = [start([*LITESTAR, "worker"], env, OUT / f"cli-import-worker-{i}.log") for i in range(args.workers)]
        for project in ("api1", "cli1", "cli2", "api2"):
            make_project(env, home, project)
        await asyncio.sleep(3)  # workers import and connect
        api_runs, cli_runs, cli_cpu = [], [], []
        for project in ("api1", "cli1", "cli2", "api2"):
            if project.startswith("api"):
                seconds = await api_import(base, cert, home, project, bodies, args.in_flight)
                api_runs.append(seconds)
            else:
                seconds, cpu, cli_output = cli_import(base, env, work, project)
                cli_runs.append(seconds)
                cli_cpu.append(cpu)
            print(f"{project}: {args.users / seconds:,.0f} records/s", flush=True)
        api_seconds, cli_seconds = sum(api_runs), sum(cli_runs)
    finally:
        for process in [server, *workers]:
            process.send_signal(signal.SIGINT)
        for process in [server, *workers]:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()

    api_rate = 2 * args.users / api_seconds
    cli_rate = 2 * args.users / cli_seconds
    figures = {
        "users": args.users,
        "workers": args.workers,
        "order": "api, cli, cli, api",
        "api_seconds": [round(s, 2) for s in api_runs],
        "api_records_per_second": round(api_rate),
        "cli_seconds": [round(s, 2) for s in cli_runs],
        "cli_records_per_second": round(cli_rate),
        "cli_cpu_seconds": [round(s, 2) for s in cli_cpu],
        "ratio": round(cli_rate / api_rate, 3),
        "cli_closing_lines": cli_output.strip().splitlines()[-3:],
    }
    (OUT / "cli_import.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))
    print(
        f"\nbench/import.py way: {api_rate:,.0f} records/s | userio import: {cli_rate:,.0f} records/s | "
        f"ratio {cli_rate / api_rate:.2f} (target >= 0.9)"
    )


if __name__ == "__main__":
    asyncio.run(main())
