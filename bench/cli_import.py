"""The migration client's end-to-end rate against the API driven directly, in the same run (issue 12: >= 0.9).

    .venv/bin/python bench/cli_import.py [--users 100000] [--workers 2] [--order api-first|cli-first]

Starts the example app (HTTPS, PostgreSQL, 2 arq workers) as real processes. Imports the same generated users
twice, each into its own empty project of that server: once the way bench/import.py does (requests just
under 500 000 bytes, posted 8 at a time, then every task awaited), once with `userio import users.ndjson`
as a person runs it (its own process: reading and checking the file, cutting requests, following tasks,
writing the report). Prints both rates (records/s, end to end) and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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
from litestar_userio.auth.keys import sign_admin_token  # noqa: E402

USERIO = str(Path(sys.executable).parent / "userio")
LITESTAR = [sys.executable, "-m", "litestar", "--app", "example_app.app:app", "userio"]


async def api_import(base: str, cert: Path, home: Path, bodies: list[bytes], in_flight: int) -> float:
    token = sign_admin_token((home / "demo-admin-key.pem").read_text(), "demo")
    _, total_seconds, summaries = await run_import(base, cert, token, bodies, in_flight)
    assert sum(s["inserted"] for s in summaries) == sum(s["total"] for s in summaries), summaries[:3]
    return total_seconds


def cli_import(base: str, env: dict[str, str], work: Path, project: str) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run(
        [USERIO, "import", "users.ndjson", "--url", base, "--project", project, "--host", f"{project}.localhost",
         "--quiet"],
        cwd=work, env=env, capture_output=True, text=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"userio import failed ({result.returncode}): {result.stderr[-2000:]}")
    return elapsed, result.stderr


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--in-flight", type=int, default=8, help="bench/import.py's requests at once")
    parser.add_argument("--order", choices=["api-first", "cli-first"], default="api-first")
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
        project = "clibench"
        subprocess.run(
            [*LITESTAR, "project", "create", "--id", project, "--domain", f"{project}.localhost"],
            cwd=ROOT, env=env, check=True, capture_output=True,
        )  # fmt: skip
        subprocess.run(
            [*LITESTAR, "roles", "add", "--project", project, "admin", "editor", "viewer"],
            cwd=ROOT, env=env, check=True, capture_output=True,
        )  # fmt: skip
        subprocess.run(
            [*LITESTAR, "groups", "add", "--project", project, "staff", "customers"],
            cwd=ROOT, env=env, check=True, capture_output=True,
        )  # fmt: skip
        await asyncio.sleep(3)  # workers import and connect
        if args.order == "api-first":
            api_seconds = await api_import(base, cert, home, bodies, args.in_flight)
            cli_seconds, cli_output = cli_import(base, env, work, project)
        else:
            cli_seconds, cli_output = cli_import(base, env, work, project)
            api_seconds = await api_import(base, cert, home, bodies, args.in_flight)
    finally:
        for process in [server, *workers]:
            process.send_signal(signal.SIGINT)
        for process in [server, *workers]:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()

    api_rate = args.users / api_seconds
    cli_rate = args.users / cli_seconds
    figures = {
        "users": args.users,
        "workers": args.workers,
        "order": args.order,
        "api_seconds": round(api_seconds, 2),
        "api_records_per_second": round(api_rate),
        "cli_seconds": round(cli_seconds, 2),
        "cli_records_per_second": round(cli_rate),
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
