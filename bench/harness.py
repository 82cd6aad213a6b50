"""What the benchmarks share: real server and worker processes, a fresh database, import through the API."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import httpx
import msgspec

ROOT = Path(__file__).resolve().parents[1]
PG = os.environ.get("USERIO_BENCH_PG", "postgresql://root@127.0.0.1:5432")
REDIS = os.environ.get("USERIO_BENCH_REDIS", "redis://127.0.0.1:6379/0")
OUT = ROOT / "bench" / "out"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def recreate_database(name: str, server: str = PG) -> str:
    conn = await asyncpg.connect(f"{server}/postgres")
    await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    await conn.execute(f"CREATE DATABASE {name}")
    await conn.close()
    return f"{server}/{name}"


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)


def profile(pid: int, output: Path) -> subprocess.Popen[bytes]:
    """py-spy sampling `pid` until `stop_profile`: a speedscope file (https://www.speedscope.app) at `output`."""
    spy = Path(sys.executable).parent / "py-spy"
    command = [
        str(spy),
        "record",
        "--pid",
        str(pid),
        "--rate",
        "250",
        "--format",
        "speedscope",
        "--output",
        str(output),
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def perf_record(output: Path) -> subprocess.Popen[bytes] | None:
    """`perf record` of the whole machine with call graphs until `stop_profile` (None where perf is missing).

    What py-spy cannot see: PostgreSQL's own functions and the kernel's (`perf report -i output`).
    """
    perf = shutil.which("perf")
    if perf is None:
        return None
    command = [perf, "record", "--all-cpus", "--freq", "499", "--call-graph", "fp", "--output", str(output)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_profile(spy: subprocess.Popen[bytes]) -> None:
    spy.send_signal(signal.SIGINT)
    spy.wait(timeout=60)


async def wait_until_up(base: str, cert: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(verify=str(cert)) as client:
        while time.monotonic() < deadline:
            try:
                if (await client.get(base + "/")).status_code == 200:
                    return
            except (httpx.HTTPError, OSError):
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError("the example app did not start")


class _Status(msgspec.Struct):
    status: str
    summary: dict[str, int] | None = None


_STATUS = msgspec.json.Decoder(_Status)
"""A status answer as this client reads it: whether the task is done, and its counts. Decoding every detail
(each echoes its record) into dicts cost this client 0.55 s of CPU per 100 000 records (48 MB of answers), CPU
that the machine's other processes, the ones measured, then lacked; msgspec skips what a struct leaves out."""


async def run_import(
    base: str, cert: Path, token: str, bodies: list[bytes], in_flight: int, host: str = "localhost"
) -> tuple[float, float, list[dict]]:
    """POST every body with `in_flight` requests at once, then wait for every task; (post s, total s, summaries)."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Host": host}
    limits = httpx.Limits(max_connections=in_flight + 2)
    async with httpx.AsyncClient(
        base_url=base, verify=str(cert), headers=headers, timeout=120, limits=limits
    ) as client:
        semaphore = asyncio.Semaphore(in_flight)
        started = time.perf_counter()

        async def post(body: bytes) -> str:
            async with semaphore:
                response = await client.post("/_api/admin/users/import", content=body)
                if response.status_code != 202:
                    raise RuntimeError(f"import request answered {response.status_code}: {response.text[:500]}")
                return str(response.headers["location"])

        locations = await asyncio.gather(*(post(b) for b in bodies))
        posted = time.perf_counter()
        results = []
        for location in locations:
            while True:
                body = _STATUS.decode((await client.get(location)).content)
                if body.status == "completed":
                    results.append(body.summary)
                    break
                await asyncio.sleep(0.05)
        finished = time.perf_counter()
    return posted - started, finished - started, results
