"""A small cluster on this machine: one network namespace per host, joined by veth pairs to a bridge.

Each host is a network namespace with one interface whose other end sits on a bridge in the root namespace
(where the test itself runs, as the client host). Cutting a host off is `ip link set <its bridge port> down`:
its packets are dropped, its TCP connections stay open and resume when the link comes back, as a switch port
or a cable would behave. Nothing here routes anywhere but between these hosts.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Cluster", "Host", "cluster_unavailable", "free_port", "pg_binary", "wait_for_port"]


def cluster_unavailable() -> str | None:
    """Why a cluster cannot be built here (None when it can): it needs root, `ip`, PostgreSQL and Redis."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "setpriv", "initdb", "postgres", "redis-server"):
        if shutil.which(tool) is None and not _pg_binary(tool):
            return f"{tool} is not installed"
    return None


def _pg_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (folder / name).exists():
            return str(folder / name)
    return None


def _run(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=30)


@dataclass
class Host:
    """One namespace: its name, address, and the bridge-side end of its link (what a cut takes down)."""

    name: str
    namespace: str
    address: str
    port_link: str


@dataclass
class Cluster:
    """Hosts on one bridge; every namespace, link, process and folder it makes is removed by `close`."""

    prefix: str
    subnet: str
    client_address: str
    hosts: dict[str, Host] = field(default_factory=dict)
    processes: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    _undo: list[Callable[[], None]] = field(default_factory=list)

    @classmethod
    @contextlib.contextmanager
    def build(cls, names: Sequence[str]) -> Iterator[Cluster]:
        """Namespaces `names` on a fresh bridge; torn down on exit, also when the body (or the set-up) fails."""
        tag = f"{os.getpid() % 10000:04d}{random.randrange(100):02d}"
        used = subprocess.run(["ip", "-4", "route"], capture_output=True, text=True, check=True).stdout
        third = next(n for n in random.sample(range(16, 250), 234) if f"10.231.{n}." not in used)
        cluster = cls(prefix=f"uc{tag}", subnet=f"10.231.{third}", client_address=f"10.231.{third}.1")
        try:
            cluster._make_bridge()
            for offset, name in enumerate(names, start=2):
                cluster._add_host(name, f"{cluster.subnet}.{offset}")
            yield cluster
        finally:
            cluster.close()

    def _make_bridge(self) -> None:
        bridge = f"{self.prefix}br"
        _run("ip", "link", "add", bridge, "type", "bridge")
        self._undo.append(lambda: _run("ip", "link", "del", bridge))
        _run("ip", "addr", "add", f"{self.client_address}/24", "dev", bridge)
        _run("ip", "link", "set", bridge, "up")

    def _add_host(self, name: str, address: str) -> None:
        namespace = f"{self.prefix}{name}"
        port_link, inner = f"{self.prefix}{name}p"[:15], f"{self.prefix}{name}i"[:15]
        _run("ip", "netns", "add", namespace)
        self._undo.append(lambda: _run("ip", "netns", "del", namespace))
        _run("ip", "link", "add", port_link, "type", "veth", "peer", "name", inner)
        self._undo.append(lambda: subprocess.run(["ip", "link", "del", port_link], capture_output=True, check=False))
        _run("ip", "link", "set", inner, "netns", namespace)
        _run("ip", "link", "set", port_link, "master", f"{self.prefix}br")
        _run("ip", "link", "set", port_link, "up")
        _run("ip", "netns", "exec", namespace, "ip", "link", "set", "lo", "up")
        _run("ip", "netns", "exec", namespace, "ip", "addr", "add", f"{address}/24", "dev", inner)
        _run("ip", "netns", "exec", namespace, "ip", "link", "set", inner, "up")
        self.hosts[name] = Host(name, namespace, address, port_link)

    def folder(self, name: str, owner: str | None = None) -> Path:
        """A fresh folder under /tmp (readable by `owner` when given), removed with the cluster."""
        path = Path(tempfile.mkdtemp(prefix=f"{self.prefix}-{name}-"))
        path.chmod(0o755)
        if owner is not None:
            shutil.chown(path, owner, owner)
        self.folders.append(path)
        return path

    def spawn(
        self,
        host: str,
        args: Sequence[str],
        log: Path,
        *,
        env: dict[str, str] | None = None,
        user: str | None = None,
        cwd: Path | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start a process on `host` (as `user` when given), its own process group, output to `log`."""
        command = ["ip", "netns", "exec", self.hosts[host].namespace]
        if user is not None:
            command += ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups"]
        with log.open("wb") as out:
            process = subprocess.Popen(
                [*command, *args], env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.processes.append((f"{host}: {args[0]}", process))
        return process

    def cut(self, host: str) -> None:
        """Take the host's link down: every packet to or from it is dropped until `restore`."""
        _run("ip", "link", "set", self.hosts[host].port_link, "down")

    def restore(self, host: str) -> None:
        """Bring the host's link back up."""
        _run("ip", "link", "set", self.hosts[host].port_link, "up")

    def close(self) -> None:
        """Stop every process (SIGINT, then SIGKILL after 20 s), remove links, namespaces and folders."""
        for _, process in reversed(self.processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGINT)
        deadline = time.monotonic() + 20
        for _, process in reversed(self.processes):
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        self.processes.clear()
        while self._undo:
            with contextlib.suppress(subprocess.SubprocessError):
                self._undo.pop()()
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)
        self.folders.clear()


def free_port() -> int:
    """A TCP port nobody listens on right now (the hosts' namespaces have their own, all free)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(address: str, port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = 120) -> None:
    """Poll until `address:port` accepts TCP connections; fail early with the log when the process exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=1):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{address}:{port} did not open within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def pg_binary(name: str) -> str:
    """Path of a PostgreSQL server binary (`initdb`, `postgres`), on PATH or in the Debian layout."""
    found = _pg_binary(name)
    if found is None:
        raise RuntimeError(f"{name} not found")
    return found
