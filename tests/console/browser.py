"""A live example app (a real uvicorn process serving HTTPS) and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import REQUIRE_SERVICES

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
AXE = ROOT / "console" / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = Path(os.environ.get("USERIO_CONSOLE_SHOTS") or tempfile.gettempdir()) / "userio-console-shots"
"""Where the flows save their screenshots: a temporary folder, or `make console-shots` (docs/console/)."""


def require(condition: bool, message: str) -> None:
    """Fail under USERIO_REQUIRE_SERVICES=1 when a browser test cannot run; skip otherwise."""
    if condition:
        return
    if REQUIRE_SERVICES:
        pytest.fail(message)
    pytest.skip(message)


def chromium_path() -> str:
    require(
        Path(CHROMIUM).is_file() or shutil.which("chromium") is not None,
        "Chromium is missing: apt-get install chromium",
    )
    return CHROMIUM if Path(CHROMIUM).is_file() else str(shutil.which("chromium"))


def axe_source() -> str:
    require(AXE.is_file(), f"axe-core is missing ({AXE}): run `npm ci` in console/")
    return AXE.read_text()


@dataclass
class LiveApp:
    origin: str
    home: Path
    env: dict[str, str]

    def userio(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "litestar", "--app", "example_app.app:app", "userio", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def live_app(home: Path) -> Iterator[LiveApp]:
    """`python -m example_app` on a free port with its own state folder; stopped at the end."""
    port = _free_port()
    env = {**os.environ, "USERIO_HOME": str(home), "PORT": str(port), "USERIO_REDIS_URL": "", "LOG_LEVEL": "warning"}
    env.pop("USERIO_DATABASE_URL", None)
    log = (home.parent / "server.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "example_app"], cwd=ROOT, env=env, stdout=log, stderr=log)
    origin = f"https://localhost:{port}"
    deadline = time.monotonic() + 90
    try:
        while True:
            try:
                if httpx.get(origin + "/", verify=False, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, (home.parent / "server.log").read_text()
            assert time.monotonic() < deadline, "the example app did not start"
            time.sleep(0.2)
        yield LiveApp(origin, home, env)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
