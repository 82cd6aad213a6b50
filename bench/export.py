"""Export benchmark: 200 000 users to CSV, ndjson and the lossless format through the API, S3 (moto) on loopback.

    .venv/bin/python bench/export.py [--users 200000] [--small 20000] [--changed 0.01]

Loads the users with the import benchmark's generator through the import API (PostgreSQL, arq workers), then
for each format and for a project of `--small` users and one of `--users` users: starts a fresh worker,
exports through the HTTP API, downloads the file from S3 and checks it, and reads the worker's peak RSS. In
the same run PostgreSQL's `COPY (SELECT ...) TO STDOUT CSV` over the same users gives the baseline, and the
same COPY's bytes stored through the plugin's S3 and local writers with no encoding at all give the floor
(`bench/storage_floor.py`). The lossless export (`format: "userio"`: import records with their hashes, age-encrypted as
they are written) runs beside the ndjson one and is compared with it (issue 45: within 25 % of its time). Last, the
CPU budget: 0.8 of COPY TO leaves the machine's cores that much time per
user, and the run prints what storing alone and what each export spend of it.

The delta export (issue 42): once the full ndjson export of `--users` is done, `--changed` of its users (1 %) are
updated through the import API (upsert), and an ndjson export `since` the full one's watermark writes only them;
its time is printed beside the full one's.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import pg  # noqa: E402
from bench.generate import split_requests, users  # noqa: E402
from bench.harness import (  # noqa: E402
    OUT,
    REDIS,
    free_port,
    recreate_database,
    run_import,
    start,
    stop_profile,
    wait_until_up,
)
from bench.harness import profile as start_profile  # noqa: E402
from bench.import_stats import cpu_seconds  # noqa: E402
from bench.queries import baseline_query  # noqa: E402
from userio_core.admin_keys import sign_admin_token  # noqa: E402

FORMATS = ("csv", "ndjson", "userio")

BUCKET = "userio-bench"


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def export_once(
    base: str,
    cert: Path,
    token: str,
    host: str,
    body: dict,
    worker_cmd: list[str],
    env: dict,
    log: Path,
    database: pg.Server,
    profile: Path | None = None,
) -> dict:
    """One export through the API with its own fresh worker; returns rate, peak RSS and the checked file.

    With `profile`, py-spy samples the worker while it exports and writes a flame graph there.
    """
    worker = start(worker_cmd, env, log)
    spy = None
    try:
        await asyncio.sleep(2.5)  # the worker imports and connects
        if profile is not None:
            spy = start_profile(worker.pid, profile)
            await asyncio.sleep(1)
        cpu_before, pg_before = cpu_seconds(worker.pid), database.cpu_seconds()
        headers = {"Authorization": f"Bearer {token}", "Host": host, "Content-Type": "application/json"}
        async with httpx.AsyncClient(base_url=base, verify=str(cert), headers=headers, timeout=300) as client:
            started = time.perf_counter()
            response = await client.post("/_api/admin/users/export", json=body)
            response.raise_for_status()
            location = response.headers["location"]
            while True:
                result = (await client.get(location)).json()["result"]
                if result["status"] == "completed":
                    break
                await asyncio.sleep(0.05)
            seconds = time.perf_counter() - started
            rss = peak_rss_mb(worker.pid)
            cpu = cpu_seconds(worker.pid) - cpu_before
            pg_cpu = database.cpu_seconds() - pg_before
        async with httpx.AsyncClient(timeout=300) as storage:
            digest = hashlib.sha256()
            size = 0
            async with storage.stream("GET", result["download_url"]) as download:
                download.raise_for_status()
                async for chunk in download.aiter_bytes():
                    digest.update(chunk)
                    size += len(chunk)
        assert "failed_at" not in result, result
        written, completing = _phases(log)
        assert digest.hexdigest() == result["sha256"] and size == result["size"], "downloaded file differs"
        return {
            "users": result["record_count"],
            "watermark": result.get("watermark"),
            "seconds": round(seconds, 2),
            "users_per_second": round(result["record_count"] / seconds),
            "worker_writing_seconds": written,
            "storage_completing_seconds": completing,
            "size_mb": round(size / 1e6, 1),
            "worker_peak_rss_mb": round(rss, 1),
            "worker_cpu_seconds": round(cpu, 2),
            "worker_cpu_us_per_user": round(cpu / result["record_count"] * 1e6, 1),
            "postgres_cpu_us_per_user": round(pg_cpu / result["record_count"] * 1e6, 1),
        }
    finally:
        if spy is not None:
            stop_profile(spy)
        worker.send_signal(signal.SIGINT)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()


def _phases(log: Path) -> tuple[float | None, float | None]:
    """(seconds reading and encoding, seconds the S3 server took to complete the file), from the worker's log."""
    found = re.findall(r"written in ([\d.]+) s; the storage completed the file in ([\d.]+) s", log.read_text())
    return (float(found[-1][0]), float(found[-1][1])) if found else (None, None)


async def delta_export(
    args: argparse.Namespace,
    base: str,
    cert: Path,
    home: Path,
    cli: list[str],
    env: dict,
    database: pg.Server,
    full: dict,
) -> dict:
    """Change `args.changed` of the demo project's users through the import API, then export only them (`since`)."""
    token = sign_admin_token((home / "demo-admin-key.pem").read_text(), "demo", ttl=timedelta(hours=1))
    every = max(1, round(1 / args.changed))
    changed = [{"email": record["email"], "name": "changed"} for record in list(users(args.users, seed=7))[::every]]
    bodies = [
        body.replace(b'{"identifier":"email",', b'{"identifier":"email","upsert":true,', 1)
        for body in split_requests(changed)
    ]
    loaders = [start([*cli, "worker"], env, OUT / f"export-delta-loader-{i}.log") for i in range(2)]
    try:
        await asyncio.sleep(3)
        print(f"changing {len(changed)} users through the import API ...", flush=True)
        await run_import(base, cert, token, bodies, 8)
    finally:
        for loader in loaders:
            loader.send_signal(signal.SIGINT)
        for loader in loaders:
            loader.wait(timeout=30)
    print("exporting ndjson-delta ...", flush=True)
    result = await export_once(
        base,
        cert,
        token,
        "localhost",
        {"format": "ndjson", "since": full["watermark"]},
        [*cli, "worker"],
        env,
        OUT / "export-worker-ndjson-delta.log",
        database,
    )
    assert result["users"] >= len(changed), result
    return result


async def copy_baseline(database_url: str, project_id: str, database: pg.Server) -> tuple[int, float, float]:
    """PostgreSQL COPY of the same users (attributes, login ids, second factors, roles) as CSV to nowhere."""
    conn = await asyncpg.connect(database_url, server_settings={"search_path": "userio"})
    await pg.settle(conn, vacuum=False)
    count = 0

    async def sink(data: bytes) -> None:
        nonlocal count
        count += data.count(b"\n")

    started, pg_before = time.perf_counter(), database.cpu_seconds()
    await conn.copy_from_query(baseline_query(project_id), output=sink, format="csv")
    seconds, pg_cpu = time.perf_counter() - started, database.cpu_seconds() - pg_before
    await conn.close()
    return count, seconds, pg_cpu


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=200_000)
    parser.add_argument("--changed", type=float, default=0.01, help="Share of the users the delta export holds.")
    parser.add_argument("--small", type=int, default=20_000)
    parser.add_argument("--profile", action="store_true", help="py-spy profiles of the big exports' workers, in OUT")
    args = parser.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    with pg.server() as database:
        await run(args, database)


async def run(args: argparse.Namespace, database: pg.Server) -> None:
    from moto.server import ThreadedMotoServer

    home = OUT / "export-home"
    shutil.rmtree(home, ignore_errors=True)
    moto_port = free_port()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=moto_port, verbose=False)
    moto.start()
    endpoint = f"http://127.0.0.1:{moto_port}"
    import boto3

    boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="bench", aws_secret_access_key="bench"
    ).create_bucket(Bucket=BUCKET)

    database_url = await recreate_database("userio_bench_export", database.url)
    port = free_port()
    env = {
        **os.environ,
        "USERIO_HOME": str(home),
        "USERIO_DATABASE_URL": database_url,
        "USERIO_REDIS_URL": REDIS,
        "USERIO_QUEUE_NAME": f"userio:bench:{uuid.uuid4().hex[:8]}",
        "USERIO_S3_ENDPOINT_URL": endpoint,
        "USERIO_S3_BUCKET": BUCKET,
        "USERIO_S3_ACCESS_KEY_ID": "bench",
        "USERIO_S3_SECRET_ACCESS_KEY": "bench",
        "PORT": str(port),
        "LOG_LEVEL": "warning",
    }
    cli = [sys.executable, "-m", "litestar", "--app", "example_app.app:app", "userio"]
    server = start([sys.executable, "-m", "example_app"], env, OUT / "export-server.log")
    results: dict[str, dict] = {}
    try:
        base = f"https://localhost:{port}"
        cert = home / "tls" / "localhost.crt"
        for _ in range(600):
            if cert.exists():
                break
            await asyncio.sleep(0.1)
        await wait_until_up(base, cert)
        subprocess.run(
            [
                *cli,
                "project",
                "create",
                "--id",
                "small",
                "--domain",
                "127.0.0.1.small",
                "--key-out",
                str(home / "small-key.pem"),
            ],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        for project_id in ("demo", "small"):
            subprocess.run(
                [*cli, "project", "configure", "--project", project_id, "--set", "allow_secret_export=true"],
                env=env,
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
        from pyrage import x25519

        recipient = str(x25519.Identity.generate().to_public())
        bodies_by_format = {
            "csv": {"format": "csv"},
            "ndjson": {"format": "ndjson"},
            "userio": {"format": "userio", "encryption": {"age_recipients": [recipient]}},
        }
        subprocess.run(
            [*cli, "roles", "add", "--project", "small", "admin", "editor", "viewer"],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [*cli, "groups", "add", "--project", "small", "staff", "customers"],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        loaders = [start([*cli, "worker"], env, OUT / f"export-loader-{i}.log") for i in range(2)]
        try:
            await asyncio.sleep(3)
            print(f"loading {args.users} + {args.small} users through the import API ...", flush=True)
            for project_id, host, count, key in (
                ("demo", "localhost", args.users, home / "demo-admin-key.pem"),
                ("small", "127.0.0.1.small", args.small, home / "small-key.pem"),
            ):
                token = sign_admin_token(key.read_text(), project_id, ttl=timedelta(hours=1))
                bodies = split_requests(list(users(count, seed=7 if project_id == "demo" else 8)))
                await run_import(base, cert, token, bodies, 8, host=host)
        finally:
            for loader in loaders:
                loader.send_signal(signal.SIGINT)
            for loader in loaders:
                loader.wait(timeout=30)
        conn = await asyncpg.connect(database_url, server_settings={"search_path": "userio"})
        await pg.settle(conn)  # the first full read would otherwise set every row's hint bits
        await conn.close()

        for project_id, host, key in (
            ("small", "127.0.0.1.small", home / "small-key.pem"),
            ("demo", "localhost", home / "demo-admin-key.pem"),
        ):
            token = sign_admin_token(key.read_text(), project_id, ttl=timedelta(hours=1))
            for fmt in FORMATS:
                name = f"{fmt}-{project_id}"
                print(f"exporting {name} ...", flush=True)
                results[name] = await export_once(
                    base,
                    cert,
                    token,
                    host,
                    bodies_by_format[fmt],
                    [*cli, "worker"],
                    env,
                    OUT / f"export-worker-{name}.log",
                    database,
                    OUT / f"export-worker-{name}.speedscope.json" if args.profile and project_id == "demo" else None,
                )
                # One running export at a time and the UserExport bucket: wait out nothing, the task is done.
        results["ndjson-delta"] = await delta_export(args, base, cert, home, cli, env, database, results["ndjson-demo"])
        copied, copy_seconds, copy_pg_cpu = await copy_baseline(database_url, "demo", database)
        floors = {
            "s3": await storage_floor(database_url, "demo", database, "s3", endpoint, BUCKET),
            "local": await storage_floor(database_url, "demo", database, "local", str(home / "floor")),
        }
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        moto.stop()

    copy_rate = copied / copy_seconds
    figures = {
        "exports": results,
        "copy_baseline": {
            "users": copied,
            "seconds": round(copy_seconds, 2),
            "users_per_second": round(copy_rate),
            "postgres_cpu_us_per_user": round(copy_pg_cpu / copied * 1e6, 1),
        },
        "private_postgres": database.private,
        "csv_ratio_to_copy": round(results["csv-demo"]["users_per_second"] / copy_rate, 3),
        "ndjson_ratio_to_copy": round(results["ndjson-demo"]["users_per_second"] / copy_rate, 3),
        "userio_ratio_to_copy": round(results["userio-demo"]["users_per_second"] / copy_rate, 3),
        # Issue 45: the lossless export's time over the ndjson export's, target at most 1.25.
        "userio_time_to_ndjson": round(results["userio-demo"]["seconds"] / results["ndjson-demo"]["seconds"], 3),
        # Diagnostic, not the target: the same ratio without the S3 server's assembly of the parts, which moto
        # does in Python after the last byte arrived (a production S3 completes a multipart upload itself).
        "ratio_to_copy_without_storage_completion": {
            fmt: round(
                results[f"{fmt}-demo"]["users"]
                / (results[f"{fmt}-demo"]["seconds"] - (results[f"{fmt}-demo"]["storage_completing_seconds"] or 0))
                / copy_rate,
                3,
            )
            for fmt in FORMATS
        },
        # Diagnostic: the baseline's own CSV stored as PostgreSQL writes it, no encoding at all
        # (`bench/storage_floor.py`): what storing alone costs, which every export pays before it encodes.
        "storage_floor": {
            kind: {**floor, "ratio_to_copy": round(floor["users_per_second"] / copy_rate, 3)}
            for kind, floor in floors.items()
        },
        # At 0.8 of COPY TO, with every core busy all the time, each user may cost the machine this much CPU; what
        # storing alone and what the exports spend of it (their S3 server, web process and client not counted).
        "cpu_budget_us_per_user_at_0_8": round((os.cpu_count() or 1) * 1e6 / copy_rate / 0.8, 1),
        "cpu_us_per_user_storing_alone": round(
            floors["s3"]["cpu_us_per_user"] + floors["s3"]["postgres_cpu_us_per_user"], 1
        ),
        "cpu_us_per_user_worker_and_postgres": {
            fmt: round(
                results[f"{fmt}-demo"]["worker_cpu_us_per_user"] + results[f"{fmt}-demo"]["postgres_cpu_us_per_user"], 1
            )
            for fmt in FORMATS
        },
        "peak_rss_ratio_big_to_small": {
            fmt: round(results[f"{fmt}-demo"]["worker_peak_rss_mb"] / results[f"{fmt}-small"]["worker_peak_rss_mb"], 3)
            for fmt in FORMATS
        },
    }
    (OUT / "export.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))
    for fmt in FORMATS:
        big = results[f"{fmt}-demo"]
        print(
            f"export {fmt}: {big['users_per_second']:,} users/s ({big['users']:,} users, {big['size_mb']} MB) | peak RSS "
            f"{big['worker_peak_rss_mb']} MB at {args.users:,} vs {results[f'{fmt}-small']['worker_peak_rss_mb']} MB at "
            f"{args.small:,} | COPY TO baseline {copy_rate:,.0f} users/s, ratio {big['users_per_second'] / copy_rate:.2f}"
            f" | of its {big['seconds']} s, the S3 server completing the file took {big['storage_completing_seconds']} s"
            f" (ratio without it {figures['ratio_to_copy_without_storage_completion'][fmt]:.2f})"
        )
    delta, full = results["ndjson-delta"], results["ndjson-demo"]
    # End to end includes the fresh worker picking the job up (seconds on a busy machine); the worker's own
    # reading and writing time is the figure that compares the two files.
    print(
        f"delta export ndjson: {delta['users']:,} users changed of {full['users']:,}: the worker wrote it in"
        f" {delta['worker_writing_seconds']} s against {full['worker_writing_seconds']} s for the full export"
        f" ({(delta['worker_writing_seconds'] or 0) / (full['worker_writing_seconds'] or 1):.3f} of it);"
        f" end to end {delta['seconds']} s against {full['seconds']} s"
    )
    for kind, floor in figures["storage_floor"].items():
        print(
            f"floor ({kind} storage): COPY TO streamed as is through the plugin's writer {floor['users_per_second']:,}"
            f" users/s, ratio {floor['ratio_to_copy']:.2f} (its process {floor['cpu_us_per_user']} us of CPU per user,"
            f" PostgreSQL {floor['postgres_cpu_us_per_user']})"
        )
    budget = figures["cpu_budget_us_per_user_at_0_8"]
    spent = figures["cpu_us_per_user_worker_and_postgres"]
    print(
        f"CPU budget: 0.8 of COPY TO leaves {budget} us of the machine's CPU per user ({os.cpu_count()} cores);"
        f" storing COPY's bytes alone spends {figures['cpu_us_per_user_storing_alone']} (S3 writer and PostgreSQL),"
        f" the exports' worker and PostgreSQL CSV {spent['csv']}, ndjson {spent['ndjson']} (S3 server, web and"
        " client not counted)"
    )
    print(f"lossless export: {figures['userio_time_to_ndjson']:.2f} of the ndjson export's time (target <= 1.25)")


async def storage_floor(database_url: str, project_id: str, database: pg.Server, kind: str, *where: str) -> dict:
    """`bench/storage_floor.py` in a process of its own, as a worker is: COPY TO's bytes stored without encoding.

    PostgreSQL is settled first, as for the baseline.
    """
    conn = await asyncpg.connect(database_url, server_settings={"search_path": "userio"})
    await pg.settle(conn, vacuum=False)
    await conn.close()
    pg_before = database.cpu_seconds()
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "storage_floor.py"), database_url, project_id, kind, *where],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    pg_cpu = database.cpu_seconds() - pg_before
    floor = json.loads(done.stdout)
    return {
        "users": floor["users"],
        "seconds": round(floor["seconds"], 2),
        "users_per_second": round(floor["users"] / floor["seconds"]),
        "size_mb": round(floor["bytes"] / 1e6, 1),
        "cpu_us_per_user": round(floor["cpu_seconds"] / floor["users"] * 1e6, 1),
        "postgres_cpu_us_per_user": round(pg_cpu / floor["users"] * 1e6, 1),
    }


if __name__ == "__main__":
    asyncio.run(main())
