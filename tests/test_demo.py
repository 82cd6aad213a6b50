"""`make demo` (`python -m example_app`) on a port another process holds: it stops before its banner and says how
to pick another port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_demo_on_a_busy_port_fails_before_its_banner_and_names_the_way_out(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {**os.environ, "PORT": str(port), "HOST": "127.0.0.1", "USERIO_HOME": str(tmp_path / "home")}

        result = subprocess.run(
            [sys.executable, "-m", "example_app"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )

    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == (
        f"port {port} on 127.0.0.1 is in use (another demo?): pick another, e.g. PORT={port + 1} make demo"
    )
    assert not (tmp_path / "home").exists()
