"""Import benchmark: 100 000 generated users through the HTTP API on PostgreSQL with 2 arq workers.

    .venv/bin/python bench/import.py [--users 100000] [--workers 2] [--in-flight 8] [--observability]

Starts the example app (HTTPS) and the workers as real processes, posts requests just under 500 000 bytes,
waits for every task, and prints records/s end to end. In the same run it loads the same rows (users,
login ids, authenticators, role memberships) with PostgreSQL COPY and prints our rate as a ratio of it.

`--observability`: the cost of metrics and traces (issue 30). The same import runs with both off, then with both
on (`/metrics` and the workers' metrics ports, spans made through the OpenTelemetry SDK and dropped by a discarding
exporter), then off and on again, each on a fresh database; the rates are printed side by side (no COPY baseline).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import pg  # noqa: E402
from bench.generate import split_requests, users  # noqa: E402
from bench.harness import (  # noqa: E402
    OUT,
    REDIS,
    free_port,
    perf_record,
    profile,
    recreate_database,
    run_import,
    start,
    stop_profile,
    wait_until_up,
)
from bench.import_stats import cpu_seconds, machine_cpu_seconds  # noqa: E402
from userio_core.admin_keys import sign_admin_token  # noqa: E402
from userio_core.ids import new_id  # noqa: E402
from userio_core.login_ids import login_key  # noqa: E402


async def copy_baseline(database_url: str, records: list[dict], server: pg.Server) -> tuple[float, float, int]:
    """PostgreSQL COPY of the same rows into empty copies of our tables: (seconds, server CPU s, WAL bytes).

    The rows get their ids from the plugin's own generator: the baseline pays the same index work per id. Each
    login id carries its `unique_key` as the import writes it (issue 46's column; the baseline left it NULL
    until 2026-12-02, so its unique index held NULLs where ours holds the keys).
    """
    conn = await asyncpg.connect(database_url, server_settings={"search_path": "userio"})
    tables = ["userio_user", "userio_identity", "userio_authenticator", "userio_user_role"]
    for table in tables:
        await conn.execute(f"DROP TABLE IF EXISTS bench_{table}")
        await conn.execute(f"CREATE TABLE bench_{table} (LIKE {table} INCLUDING DEFAULTS INCLUDING INDEXES)")
    now = datetime.now(UTC)
    user_rows, identity_rows, auth_rows, role_rows = [], [], [], []
    for record in records:
        user_id = new_id()
        attributes = {
            k: v for k, v in record.items() if k not in {"password", "mfa", "roles", "groups", "custom_attributes"}
        }
        user_rows.append(
            (user_id, "bench", now, now, None, False, json.dumps(attributes), json.dumps(record["custom_attributes"]))
        )
        for attribute, key in (("email", "email"), ("phone_number", "phone"), ("preferred_username", "username")):
            if attribute in record:
                value = record[attribute]
                normalized = value.lower()
                identity_rows.append(
                    (new_id(), "bench", user_id, key, key, value, normalized, login_key(normalized), now)
                )
        auth_rows.append(
            (
                new_id(),
                "bench",
                user_id,
                "primary",
                "password",
                record["password"]["password_hash"],
                None,
                None,
                now,
            )
        )
        for role in record["roles"]:
            role_rows.append((user_id, role))
    await conn.execute("ALTER TABLE bench_userio_user_role ALTER COLUMN role_id TYPE text")
    await pg.settle(conn)  # the import's autovacuum and dirty pages are not the baseline's
    wal_before, cpu_before = await pg.wal_bytes(conn), server.cpu_seconds()
    started = time.perf_counter()
    async with conn.transaction():
        await conn.copy_records_to_table(
            "bench_userio_user",
            records=user_rows,
            columns=[
                "id",
                "project_id",
                "created_at",
                "updated_at",
                "last_login_at",
                "is_disabled",
                "standard_attributes",
                "custom_attributes",
            ],
        )
        await conn.copy_records_to_table(
            "bench_userio_identity",
            records=identity_rows,
            columns=[
                "id",
                "project_id",
                "user_id",
                "login_id_key",
                "login_id_type",
                "original_value",
                "normalized_value",
                "unique_key",
                "created_at",
            ],
        )
        await conn.copy_records_to_table(
            "bench_userio_authenticator",
            records=auth_rows,
            columns=[
                "id",
                "project_id",
                "user_id",
                "kind",
                "type",
                "password_hash",
                "totp_secret",
                "oob_target",
                "created_at",
            ],
        )
        await conn.copy_records_to_table("bench_userio_user_role", records=role_rows, columns=["user_id", "role_id"])
    elapsed = time.perf_counter() - started
    cpu, wal = server.cpu_seconds() - cpu_before, await pg.wal_bytes(conn) - wal_before
    for table in tables:
        await conn.execute(f"DROP TABLE bench_{table}")
    await conn.close()
    return elapsed, cpu, wal


def job_seconds(logs: list[Path]) -> tuple[int, float]:
    """Chunk jobs run and their summed duration, from the workers' arq logs."""
    pattern = re.compile(r"\s([\d.]+)s ← \S+:userio_import_chunk ●")
    count, total = 0, 0.0
    for log in logs:
        for match in pattern.finditer(log.read_text()):
            count += 1
            total += float(match[1])
    return count, total


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="py-spy profiles of the server and workers, and a perf recording of the machine (where perf is), in OUT",
    )
    parser.add_argument(
        "--observability", action="store_true", help="compare metrics+traces off and on in this run (no baseline)"
    )
    args = parser.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    with pg.server() as database:
        if not args.observability:
            await run(args, database)
            return
        rates: dict[str, list[int]] = {"off": [], "on": []}
        cpu: dict[str, list[float]] = {"off": [], "on": []}
        for mode in ("off", "on", "off", "on"):
            rates[mode].append(await run(args, database, observe=mode, cpu_out=cpu[mode]))
        best = {mode: max(values) for mode, values in rates.items()}
        least_cpu = {mode: min(values) for mode, values in cpu.items()}
        figures = {
            "records_per_second": rates,
            "best": best,
            "on_to_off": round(best["on"] / best["off"], 3),
            # CPU of the app, its workers and PostgreSQL per record: what metrics and traces cost, read apart from
            # what other processes on a busy machine do to the wall clock.
            "cpu_us_per_record": cpu,
            "cpu_on_to_off": round(least_cpu["on"] / least_cpu["off"], 3),
        }
        (OUT / "import_observability.json").write_text(json.dumps(figures, indent=2))
        print(json.dumps(figures, indent=2))


OBSERVE = {"off": {"USERIO_METRICS": "off", "USERIO_TRACING": "off"}, "on": {"USERIO_TRACING": "discard"}}
"""The example app's switches: `on` keeps its metrics (the default) and makes spans that a discarding exporter drops."""


async def run(
    args: argparse.Namespace, database: pg.Server, observe: str | None = None, cpu_out: list[float] | None = None
) -> int:
    """One import; its records/s (the full report unless `observe` compares metrics and traces off and on).

    `cpu_out` receives the CPU the app, its workers and PostgreSQL spent per record, in microseconds.
    """
    home = OUT / "import-home"
    shutil.rmtree(home, ignore_errors=True)
    database_url = await recreate_database("userio_bench_import", database.url)
    port = free_port()
    env = {
        **os.environ,
        "USERIO_HOME": str(home),
        "USERIO_DATABASE_URL": database_url,
        "USERIO_REDIS_URL": REDIS,
        "USERIO_QUEUE_NAME": f"userio:bench:{uuid.uuid4().hex[:8]}",
        "PORT": str(port),
        "LOG_LEVEL": "warning",
        **(OBSERVE[observe] if observe else {}),
    }
    print(f"generating {args.users} users ...", flush=True)
    records = list(users(args.users))
    bodies = split_requests(records)
    print(f"{len(bodies)} requests, {sum(map(len, bodies)) / 1e6:.1f} MB", flush=True)

    server = start([sys.executable, "-m", "example_app"], env, OUT / "import-server.log")
    worker_logs = [OUT / f"import-worker-{i}.log" for i in range(args.workers)]
    workers: list[subprocess.Popen[bytes]] = []
    try:
        base = f"https://localhost:{port}"
        cert = home / "tls" / "localhost.crt"
        deadline = time.monotonic() + 60
        while not cert.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await wait_until_up(base, cert)
        cli = [sys.executable, "-m", "litestar", "--app", "example_app.app:app", "userio", "worker"]
        workers = [start(cli, {**env, "USERIO_METRICS_PORT": str(free_port())}, log) for log in worker_logs]
        await asyncio.sleep(3)  # workers import and connect
        token = sign_admin_token((home / "demo-admin-key.pem").read_text(), "demo")

        processes = {"server": server, **{f"worker_{i}": w for i, w in enumerate(workers)}}
        stats = await asyncpg.connect(database_url, server_settings={"search_path": "userio"})
        wal_segments = await pg.warm_up(stats, 400) if database.private else None
        await pg.settle(stats)
        before = {name: cpu_seconds(p.pid) for name, p in processes.items()}
        if database.private:
            await stats.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            await stats.execute("SELECT pg_stat_statements_reset()")
        wal_before = await pg.wal_bytes(stats)
        before |= {"postgres": database.cpu_seconds(), "bench_client": cpu_seconds(os.getpid())}
        clients = {name: p.pid for name, p in processes.items()} | {"bench_client": os.getpid()}
        pg_before, pg_reaped = pg.process_cpu(database, clients), pg.reaped_cpu(database)
        machine_before = machine_cpu_seconds()
        spies = (
            [profile(p.pid, OUT / f"import-{name}.speedscope.json") for name, p in processes.items()]
            if args.profile
            else []
        )
        if args.profile and (recording := perf_record(OUT / "import.perf.data")):
            spies.append(recording)
        post_seconds, total_seconds, summaries = await run_import(base, cert, token, bodies, args.in_flight)
        for spy in spies:
            stop_profile(spy)
        cpu = {name: cpu_seconds(p.pid) - before[name] for name, p in processes.items()}
        cpu |= {"postgres": database.cpu_seconds() - before["postgres"]}
        pg_cpu = pg.cpu_breakdown(pg_before, pg.process_cpu(database, clients), pg.reaped_cpu(database) - pg_reaped)
        wal = await pg.wal_bytes(stats) - wal_before
        statements = await pg.top_statements(stats) if database.private else []
        await stats.close()
        cpu |= {"bench_client": cpu_seconds(os.getpid()) - before["bench_client"]}
        cpu |= {"whole_machine": machine_cpu_seconds() - machine_before}
    finally:
        for process in [server, *workers]:
            process.send_signal(signal.SIGINT)
        for process in [server, *workers]:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()

    totals = {k: sum(s[k] for s in summaries) for k in ("total", "inserted", "updated", "skipped", "failed")}
    rate = totals["total"] / total_seconds
    if observe is not None:
        ours = sum(v for k, v in cpu.items() if k not in ("bench_client", "whole_machine"))
        if cpu_out is not None:
            cpu_out.append(round(ours / totals["total"] * 1e6, 1))
        print(
            f"metrics and traces {observe}: {rate:,.0f} records/s end to end ({args.workers} workers),"
            f" {ours / totals['total'] * 1e6:,.1f} us CPU per record (app, workers, PostgreSQL)",
            flush=True,
        )
        return round(rate)
    copy_seconds, copy_cpu, copy_wal = await copy_baseline(database_url, records, database)
    copy_rate = len(records) / copy_seconds
    n = len(records)
    jobs, job_time = job_seconds(worker_logs)
    figures = {
        "users": args.users,
        "requests": len(bodies),
        "workers": args.workers,
        "outcomes": totals,
        "end_to_end_seconds": round(total_seconds, 2),
        "records_per_second": round(rate),
        "post_phase_seconds": round(post_seconds, 2),
        "cpu_seconds_during_run": {k: round(v, 2) for k, v in cpu.items()},
        "chunk_jobs": jobs,
        "chunk_job_seconds_summed": round(job_time, 2),
        "copy_baseline_seconds": round(copy_seconds, 2),
        "copy_baseline_records_per_second": round(copy_rate),
        "ratio_to_copy": round(rate / copy_rate, 3),
        "postgres": {
            "private_instance": database.private,
            "wal_segments_before_the_run": wal_segments,
            "ours": {"cpu_us_per_record": round(cpu["postgres"] / n * 1e6, 1), "wal_bytes_per_record": round(wal / n)},
            "copy": {"cpu_us_per_record": round(copy_cpu / n * 1e6, 1), "wal_bytes_per_record": round(copy_wal / n)},
            "ours_cpu_us_per_record_by_process": {k: round(v / n * 1e6, 1) for k, v in pg_cpu.items()},
        },
        "machine_cpu_us_per_record": {k: round(v / n * 1e6, 1) for k, v in cpu.items()},
        # At 0.5 of COPY, with every core busy all the time, each record may cost the machine this much CPU.
        "cpu_budget_us_per_record_at_0_5": round((os.cpu_count() or 1) * copy_seconds / n * 1e6 / 0.5, 1),
        "top_statements": statements,
    }
    (OUT / "import.json").write_text(json.dumps(figures, indent=2, default=str))
    print(json.dumps(figures, indent=2, default=str))
    print(
        f"\nimport: {rate:,.0f} records/s end to end ({args.workers} workers) | "
        f"PostgreSQL COPY of the same rows: {copy_rate:,.0f} records/s | ratio {rate / copy_rate:.2f}"
        f"\nPostgreSQL per record: ours {cpu['postgres'] / n * 1e6:,.0f} us CPU, {wal / n:,.0f} WAL bytes | "
        f"COPY {copy_cpu / n * 1e6:,.0f} us CPU, {copy_wal / n:,.0f} WAL bytes"
        f"{'' if database.private else ' (shared server: CPU and WAL include other clients)'}"
        f"\nCPU budget: 0.5 of COPY leaves {figures['cpu_budget_us_per_record_at_0_5']} us of the machine's CPU per"
        f" record ({os.cpu_count()} cores); this run spent {cpu['whole_machine'] / n * 1e6:,.1f}"
    )
    return round(rate)


if __name__ == "__main__":
    asyncio.run(main())
