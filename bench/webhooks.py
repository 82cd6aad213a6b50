"""Webhook delivery benchmark: deliveries per second from one delivery worker to a local receiver.

    .venv/bin/python bench/webhooks.py [--changes 10000] [--database sqlite|postgres] [--concurrency 8]

One process runs the jobs (the in-process runner, as the embedded default, or the same job function an arq worker
runs); the receiver is another process on loopback (plain asyncio HTTP/1.1, keep-alive, answers 204). A burst of
`--changes` new users is imported (requests of 1 000 records; the import writes one change-log entry per user, the
`webhooks` consumer turns the entries into deliveries, the delivery job sends them), and the clock runs until the
receiver has counted every one. Printed: deliveries/s, what the receiver
counted (each change once: nothing lost), and the baseline from the same run: the same number of bare signed POSTs
from one httpx client at the same concurrency (what the network path alone allows).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import PG, free_port, recreate_database  # noqa: E402
from litestar_userio import UserIOConfig, WebhookConfig  # noqa: E402
from litestar_userio.config import QueueConfig  # noqa: E402
from litestar_userio.services import Services  # noqa: E402
from litestar_userio.web.imports import parse_import_request  # noqa: E402
from litestar_userio.webhooks.signing import new_secret, signed_headers  # noqa: E402
from litestar_userio.webhooks.webhook_schemas import WebhookSpec  # noqa: E402

RECEIVER = r"""
import asyncio, sys
count = 0
async def serve(reader, writer):
    global count
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            length = 0
            while (header := await reader.readline()) not in (b"\r\n", b""):
                if header[:15].lower() == b"content-length:":
                    length = int(header[15:])
            await reader.readexactly(length)
            if line.startswith(b"GET /count"):
                body = str(count).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
            else:
                count += 1
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()
async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", int(sys.argv[1]), backlog=1024)
    print("ready", flush=True)
    await server.serve_forever()
asyncio.run(main())
"""


async def baseline(url: str, n: int, concurrency: int) -> float:
    """Bare signed POSTs from one httpx client, `concurrency` at once: seconds for `n`."""
    secret = new_secret()
    body = b'{"id":"change_x","seq":1,"type":"user.created","payload":{"user":{"id":"u"}},"context":{}}'
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits) as client:
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with gate:
                headers = signed_headers(secret, f"change_{i}", body, datetime.now(UTC))
                response = await client.post(url, content=body, headers=headers)
                assert response.status_code == 204

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return time.perf_counter() - started


_POLL = httpx.AsyncClient()


async def received(origin: str) -> int:
    """What the receiver counted (one client for every poll: making a client builds a TLS context, 15 ms)."""
    return int((await _POLL.get(f"{origin}/count")).text)


async def run(args: argparse.Namespace) -> None:
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, str(port)], stdout=subprocess.PIPE)
    assert receiver.stdout is not None and receiver.stdout.readline().strip() == b"ready"
    try:
        with tempfile.TemporaryDirectory() as folder:
            if args.database == "postgres":
                url = await recreate_database("userio_bench_webhooks", PG)
            else:
                url = f"sqlite:///{folder}/bench.sqlite3"
            webhooks = WebhookConfig(
                allowed_private_origins=(origin,), concurrency=args.concurrency, batch_size=args.batch_size
            )
            config = UserIOConfig(
                database_url=url, migrate_on_startup=True, webhooks=webhooks, queue=QueueConfig(concurrency=2)
            )
            services = await Services.start(config)
            try:
                await report(services, origin, args)
            finally:
                await services.close()
    finally:
        receiver.terminate()
        receiver.wait()


async def report(services: Services, origin: str, args: argparse.Namespace) -> None:
    project = "bench"
    await services.projects.create(project, ["bench.example.test"], None)
    await services.webhooks.replace(project, [WebhookSpec(f"{origin}/hook", ["user.created"], include_import=True)])
    # the receiver counts delivered requests: a user delivered twice would count twice
    project_record = await services.projects.get(project)
    assert project_record is not None
    started = time.perf_counter()
    # A real burst: bulk imports of `--changes` new users (the change log gets one entry each, with the import's
    # COPY); the `webhooks` consumer turns them into deliveries, the delivery job sends them.
    for start in range(0, args.changes, 1000):
        records = [{"email": f"user{i}@example.com"} for i in range(start, min(start + 1000, args.changes))]
        body = json.dumps({"identifier": "email", "records": records}).encode()
        await services.imports.create_task(project_record, parse_import_request("application/json", body))
    committed = time.perf_counter() - started
    first_delivery: float | None = None
    while (count := await received(origin)) < args.changes:
        if count and first_delivery is None:
            first_delivery = time.perf_counter() - started
        if time.perf_counter() - started > 600:
            break
        await asyncio.sleep(0.2)
    elapsed = time.perf_counter() - started
    await asyncio.sleep(0.5)
    async with services.db.reader() as tx:
        rows = await tx.fetch("SELECT status, count(*) AS n FROM userio_webhook_delivery GROUP BY status")
        distinct = await tx.fetch("SELECT count(DISTINCT change_id) AS n FROM userio_webhook_delivery")
    statuses = {r["status"]: r["n"] for r in rows}
    bare = await baseline(f"{origin}/hook", args.changes, args.concurrency)
    print(
        f"database: {args.database}, changes: {args.changes}, concurrency {args.concurrency}, batch {args.batch_size}"
    )
    print(f"imported (tasks stored) in {committed:.2f} s")
    print(
        f"delivered {count} in {elapsed:.2f} s: {count / elapsed:.0f} deliveries/s (import included);"
        f" rows {statuses}, {distinct[0]['n']} distinct entries"
    )
    if first_delivery is not None:
        span = elapsed - first_delivery
        print(f"from the first delivery to the last: {span:.2f} s: {count / span:.0f} deliveries/s")
    print(f"receiver counted {await received(origin) - args.changes} bare POSTs after (baseline)")
    print(f"baseline, bare signed POSTs from one httpx client: {args.changes / bare:.0f}/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=10_000)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--concurrency", type=int, default=WebhookConfig.concurrency)
    parser.add_argument("--batch-size", type=int, default=WebhookConfig.batch_size)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
