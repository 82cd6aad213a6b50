"""The export's floor on this machine: the COPY baseline's own bytes streamed through the plugin's storage writer.

    .venv/bin/python bench/storage_floor.py DATABASE_URL PROJECT_ID s3 ENDPOINT BUCKET
    .venv/bin/python bench/storage_floor.py DATABASE_URL PROJECT_ID local DIRECTORY

`bench/export.py` runs it as a process of its own, as a worker is. It does no encoding at all: PostgreSQL writes
the baseline's CSV and the writer stores it as it comes. An export reads the same users and stores a file of about
that size through the same writer, and encodes besides: what this spends, every export spends first.
Prints one JSON object: users, seconds (from the first byte asked for to the file completed), CPU seconds of this
process, bytes.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.queries import baseline_query  # noqa: E402
from litestar_userio.config import LocalStorageConfig, S3StorageConfig  # noqa: E402
from litestar_userio.storage.local import LocalStorage  # noqa: E402
from litestar_userio.storage.s3 import S3Storage  # noqa: E402
from litestar_userio.storage.storage_protocol import FileWriter  # noqa: E402
from userio_core.clock import SystemClock  # noqa: E402


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def main(database_url: str, project_id: str, kind: str, *where: str) -> None:
    storage: S3Storage | LocalStorage
    if kind == "s3":
        endpoint, bucket = where
        storage = S3Storage(
            S3StorageConfig(bucket=bucket, endpoint_url=endpoint, access_key_id="bench", secret_access_key="bench")
        )
    else:
        storage = LocalStorage(LocalStorageConfig(directory=Path(where[0])), SystemClock())
    conn = await asyncpg.connect(database_url, server_settings={"search_path": "userio"})
    users = 0
    writer: FileWriter = await storage.open_writer("floor.csv", content_type="text/csv", filename="floor.csv")

    async def sink(data: bytes) -> None:
        nonlocal users
        users += data.count(b"\n")
        await writer.write(data)

    cpu_before, started = _cpu_seconds(), time.perf_counter()
    await conn.copy_from_query(baseline_query(project_id), output=sink, format="csv")
    stored = await writer.complete()
    seconds, cpu = time.perf_counter() - started, _cpu_seconds() - cpu_before
    await conn.close()
    await storage.delete("floor.csv")
    await storage.close()
    print(json.dumps({"users": users, "seconds": seconds, "cpu_seconds": cpu, "bytes": stored.size}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
