"""A private PostgreSQL for a benchmark: its CPU, WAL and statements are the benchmark's alone.

On a machine where others use the shared PostgreSQL, its CPU and WAL counters mix their work with ours. As
root (and with the server binaries installed) the benchmarks start their own instance, configured like the
shared one (PostgreSQL's defaults: 128 MB shared buffers, fsync and synchronous commit on) plus
`pg_stat_statements`, on a free loopback port; otherwise they fall back to `USERIO_BENCH_PG`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from bench.harness import PG, free_port


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (folder / name).exists():
            return str(folder / name)
    return None


@dataclass
class Server:
    """A PostgreSQL server URL (no database) and, when private, its postmaster pid."""

    url: str
    pid: int | None

    @property
    def private(self) -> bool:
        return self.pid is not None

    def cpu_seconds(self) -> float:
        """CPU used so far by this server: the postmaster, its live children, and the children it reaped."""
        if self.pid is None:
            from bench.import_stats import postgres_cpu_seconds

            return postgres_cpu_seconds()
        tick = os.sysconf("SC_CLK_TCK")
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total = sum(int(f) for f in fields[11:15]) / tick  # utime, stime, cutime, cstime
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                child = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(child[1]) == self.pid:
                total += (int(child[11]) + int(child[12])) / tick
        return total


def _socket_owners(pids: dict[str, int]) -> dict[int, str]:
    """Local TCP port -> the name of the process in `pids` whose socket it is."""
    inodes: dict[str, str] = {}
    for name, pid in pids.items():
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:["):
                        inodes[target[8:-1]] = name
    owners: dict[int, str] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[9] in inodes:
                    owners[int(fields[1].rsplit(":", 1)[1], 16)] = inodes[fields[9]]
    return owners


def process_cpu(server: Server, clients: dict[str, int]) -> dict[int, tuple[str, float]]:
    """Each live process of a private server: (what it is, CPU seconds so far).

    A backend is named after the client in `clients` (name -> pid) whose connection it serves, found through the
    client's port; background processes after their title (`checkpointer`, `autovacuum worker`, ...).
    """
    if server.pid is None:
        return {}
    owners = _socket_owners(clients)
    tick = os.sysconf("SC_CLK_TCK")
    found: dict[int, tuple[str, float]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != server.pid:
                continue
            title = Path(stat.parent, "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except (OSError, ValueError):
            continue
        title = title.removeprefix("postgres: ")
        if port := re.search(r"\(([0-9]+)\)", title):
            kind = f"backend of {owners.get(int(port[1]), 'another client')}"
        else:
            kind = re.sub(r" +[0-9].*$", "", title.split(" for ")[0]).strip()
        found[int(stat.parent.name)] = (kind, (int(fields[11]) + int(fields[12])) / tick)
    return found


def cpu_breakdown(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]], ended: float
) -> dict[str, float]:
    """CPU seconds by kind of server process between two `process_cpu` snapshots; `ended`: the postmaster's
    reaped children's CPU in between (processes that exited: autovacuum workers, closed connections)."""
    totals: dict[str, float] = {}
    for pid, (kind, seconds) in after.items():
        spent = seconds - before[pid][1] if pid in before else seconds
        totals[kind] = totals.get(kind, 0.0) + spent
    if ended > 0:
        totals["exited during the run"] = ended
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def reaped_cpu(server: Server) -> float:
    """CPU seconds of the server's children that have exited (the postmaster's cutime + cstime)."""
    if server.pid is None:
        return 0.0
    fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


async def wal_bytes(conn: asyncpg.Connection) -> int:
    """The server's WAL position in bytes (differences are WAL written in between)."""
    return int(await conn.fetchval("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"))


async def warm_up(conn: asyncpg.Connection, megabytes: int) -> int:
    """Give a fresh server what a server in service already has; returns how many WAL segment files it holds.

    - WAL segments: a new server has a few. A run that writes hundreds of MB creates and zero-fills each new 16 MB
      segment while committing (`XLogFileInit`, found with `perf`: 11 % of the import's server CPU), where a server
      in service renames one it no longer needs. Writing `megabytes` of WAL and checkpointing leaves that much as
      segments ready for reuse.
    - Shared buffers: each 8 KB buffer's memory is mapped on its first use, a page fault (`perf`: part of the 9 %
      of the import's server CPU spent in page faults). Reading a table larger than the buffers touches them all.

    The COPY baseline, measured after the import, already gets both: without this the two windows would not pay
    the same.
    """
    rows = megabytes * 1000
    await conn.execute(
        f"CREATE TABLE userio_bench_warm AS SELECT g, repeat('w', 1000) AS pad FROM generate_series(1, {rows}) g"
    )
    await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    await conn.execute("SELECT pg_prewarm('userio_bench_warm')")
    await conn.execute("DROP TABLE userio_bench_warm")
    await conn.execute("DROP EXTENSION pg_prewarm")
    await conn.execute("CHECKPOINT")
    return int(await conn.fetchval("SELECT count(*) FROM pg_ls_waldir()"))


async def settle(conn: asyncpg.Connection, *, vacuum: bool = True, timeout: float = 120) -> None:
    """Let the server finish the work earlier writes left it, so the next measured window pays only for its own.

    Without it the work a run leaves behind (autovacuum of the tables it filled, a checkpoint of its dirty pages)
    lands in the window measured next: the import's COPY baseline measured 22-34 us of server CPU per row from one
    run to the next. Vacuums the database (hint bits and visibility map set, statistics fresh: the first full read
    would otherwise set them), checkpoints (which also restarts `checkpoint_timeout`, so no timed checkpoint falls
    in a window of a few minutes), then waits until no autovacuum worker runs (at most `timeout` seconds).
    """
    deadline = time.monotonic() + timeout
    if vacuum:
        await conn.execute("VACUUM ANALYZE")
    await conn.execute("CHECKPOINT")
    while time.monotonic() < deadline and await conn.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'"
    ):
        await asyncio.sleep(0.2)


async def top_statements(conn: asyncpg.Connection, limit: int = 12) -> list[dict[str, object]]:
    """pg_stat_statements' heaviest statements by total execution time (private server only)."""
    rows = await conn.fetch(
        "SELECT calls, round(total_exec_time::numeric, 1) AS ms, rows, wal_bytes::bigint AS wal_bytes,"
        " shared_blks_hit + shared_blks_read AS blocks, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query"
        " FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT $1",
        limit,
    )
    return [dict(row) for row in rows]


@contextlib.contextmanager
def server() -> Iterator[Server]:
    """A private server when possible (see the module docstring), else the shared one."""
    initdb, postgres = _binary("initdb"), _binary("postgres")
    if os.geteuid() != 0 or initdb is None or postgres is None or os.environ.get("USERIO_BENCH_PG"):
        yield Server(PG, None)
        return
    folder = Path(tempfile.mkdtemp(prefix="userio-bench-pg-"))
    folder.chmod(0o755)
    shutil.chown(folder, "postgres", "postgres")
    as_postgres = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
    data = folder / "data"
    process: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run(
            [*as_postgres, initdb, "-D", str(data), "-U", "root", "-A", "trust", "-E", "UTF8"],
            check=True,
            capture_output=True,
            cwd=folder,
        )
        port = free_port()
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(port),
            "unix_socket_directories": str(folder),
            "shared_preload_libraries": "pg_stat_statements",
            "pg_stat_statements.track": "all",
            "max_wal_size": "1GB",
        }
        args = [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]
        with (folder / "log").open("wb") as log:
            process = subprocess.Popen(
                [*as_postgres, postgres, "-D", str(data), *args], cwd=folder, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 60
        while subprocess.run(
            [_binary("pg_isready") or "pg_isready", "-q", "-h", "127.0.0.1", "-p", str(port)], check=False
        ).returncode:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the private PostgreSQL did not start:\n{(folder / 'log').read_text()[-2000:]}")
            time.sleep(0.2)
        yield Server(f"postgresql://root@127.0.0.1:{port}", process.pid)
    finally:
        if process is not None:
            process.send_signal(signal.SIGINT)  # PostgreSQL's fast shutdown
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(folder, ignore_errors=True)
