"""Change-log feed benchmark: one reader following `GET /users/changes` over HTTPS, on PostgreSQL.

    .venv/bin/python bench/changes.py [--entries 100000] [--limit 1000]

Starts the example app (HTTPS, PostgreSQL), creates a project, appends `--entries` entries with the change log's
own bulk append (documents the shape and size of `bench/generate.py`'s users as exported), then reads them all
from the start, `--limit` a page, following `next_cursor` as a consumer does, and prints entries per second
(issue 42 item 7: at least 10 000) with the web process's and PostgreSQL's CPU per entry.
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
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import pg  # noqa: E402
from bench.generate import users  # noqa: E402
from bench.harness import OUT, free_port, recreate_database, start, wait_until_up  # noqa: E402
from bench.import_stats import cpu_seconds  # noqa: E402
from litestar_userio.changes.change_repository import ChangeRepository  # noqa: E402
from litestar_userio.changes.entries import ChangeOrigin, UserChange  # noqa: E402
from litestar_userio.db.engine import Database  # noqa: E402
from userio_core.admin_keys import sign_admin_token  # noqa: E402
from userio_core.ids import new_id  # noqa: E402

BATCH = 2000


async def fill(database_url: str, project_id: str, count: int) -> None:
    """`count` entries through `ChangeRepository.append` (the import's path), `BATCH` per transaction."""
    db = Database(database_url, schema="userio")
    await db.start()
    try:
        records = list(users(min(count, 5000), seed=11))
        origin, now = ChangeOrigin("import", "task_bench"), datetime.now(UTC)
        repository = ChangeRepository()
        for start_at in range(0, count, BATCH):
            batch = []
            for i in range(start_at, min(count, start_at + BATCH)):
                record = {k: v for k, v in records[i % len(records)].items() if k not in ("password", "mfa")}
                user_id = new_id()
                batch.append(UserChange(user_id, "created", msgspec.json.encode({"sub": user_id, **record})))
            async with db.transaction() as tx:
                await repository.append(tx, project_id, batch, origin, now)
    finally:
        await db.close()


async def follow(base: str, cert: Path, token: str, host: str, limit: int, count: int) -> tuple[int, float]:
    headers = {"Authorization": f"Bearer {token}", "Host": host}
    read = 0
    async with httpx.AsyncClient(base_url=base, verify=str(cert), headers=headers, timeout=120) as client:
        cursor: str | None = None
        started = time.perf_counter()
        while read < count:
            params = {"limit": str(limit), **({"cursor": cursor} if cursor else {})}
            response = await client.get("/_api/admin/users/changes", params=params)
            response.raise_for_status()
            page = response.json()["result"]
            read += len(page["items"])
            cursor = page["next_cursor"]
            if not page["has_more"] and read < count:
                await asyncio.sleep(0.05)  # entries not settled yet
        return read, time.perf_counter() - started


async def run(args: argparse.Namespace, database: pg.Server) -> dict:
    home = OUT / "changes-home"
    shutil.rmtree(home, ignore_errors=True)
    database_url = await recreate_database("userio_bench_changes", database.url)
    port = free_port()
    env = {
        **os.environ,
        "USERIO_HOME": str(home),
        "USERIO_DATABASE_URL": database_url,
        "PORT": str(port),
        "LOG_LEVEL": "warning",
    }
    server = start([sys.executable, "-m", "example_app"], env, OUT / "changes-server.log")
    try:
        base = f"https://localhost:{port}"
        cert = home / "tls" / "localhost.crt"
        for _ in range(600):
            if cert.exists():
                break
            await asyncio.sleep(0.1)
        await wait_until_up(base, cert)
        print(f"appending {args.entries} entries ...", flush=True)
        await fill(database_url, "demo", args.entries)
        token = sign_admin_token((home / "demo-admin-key.pem").read_text(), "demo", ttl=timedelta(hours=1))
        await follow(base, cert, token, "localhost", args.limit, min(args.entries, 5000))  # warm up
        web_before, pg_before = cpu_seconds(server.pid), database.cpu_seconds()
        read, seconds = await follow(base, cert, token, "localhost", args.limit, args.entries)
        web, pg_cpu = cpu_seconds(server.pid) - web_before, database.cpu_seconds() - pg_before
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    return {
        "entries": read,
        "page_size": args.limit,
        "seconds": round(seconds, 2),
        "entries_per_second": round(read / seconds),
        "web_cpu_us_per_entry": round(web / read * 1e6, 1),
        "postgres_cpu_us_per_entry": round(pg_cpu / read * 1e6, 1),
        "private_postgres": database.private,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--limit", type=int, default=1000)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with pg.server() as database:
        figures = await run(args, database)
    (OUT / "changes.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))
    print(
        f"feed: {figures['entries_per_second']:,} entries/s to one reader ({figures['entries']:,} entries, pages of"
        f" {figures['page_size']}) | web {figures['web_cpu_us_per_entry']} us CPU per entry, PostgreSQL"
        f" {figures['postgres_cpu_us_per_entry']}"
    )


if __name__ == "__main__":
    asyncio.run(main())
