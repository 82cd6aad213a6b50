"""`litestar --app example_app.app:app userio ...` for tests: in this process by default, a real process on request.

A Python start costs seconds on a busy machine, so most CLI tests run the commands through click's runner on
Litestar's own root group: the real option parsing, the plugin's `on_cli_init` and our command code run; only the
interpreter start and the app lookup by module path are skipped. The example app reads its settings from the
environment when it is built, so each call builds it from that call's environment (`create_app`) and hands it to
Litestar as `ctx.obj`, the way `LitestarEnv.from_env` does. A few smoke tests keep the real entry point
(`process=True`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
APP = "example_app.app:app"
TIMEOUT = 120


def run_userio(env: Mapping[str, str], *args: str, process: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `litestar --app example_app.app:app userio *args` with `env` as the whole environment."""
    argv = ["--app", APP, "userio", *args]
    if process:
        return subprocess.run(
            [sys.executable, "-m", "litestar", *argv],
            cwd=ROOT,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    # The commands call asyncio.run(), and an async test has a loop running in this thread.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_in_process, dict(env), argv).result(TIMEOUT)


def _in_process(env: dict[str, str], argv: list[str]) -> subprocess.CompletedProcess[str]:
    from litestar.cli._utils import LitestarEnv
    from litestar.cli.main import litestar_group

    with _environment(env):
        from example_app.app import create_app  # first import here: the module's own `app` reads this environment

        loaded = LitestarEnv(app_path=APP, app=create_app(), cwd=ROOT)
        result = CliRunner().invoke(litestar_group, argv, obj=loaded)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # What the interpreter would print before exiting 1: a test that asserts "no traceback" can fail.
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(["litestar", *argv], result.exit_code, result.stdout, stderr)


@contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """`env` as the whole of os.environ (a process's view), the caller's restored after."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
