"""`litestar --app example_app.app:app userio ...` for tests: in this process by default, a real process on request.

A Python start costs seconds on a busy machine, so most CLI tests run the commands through click's runner on
Litestar's own root group: the real option parsing, the plugin's `on_cli_init` and our command code run; only the
interpreter start and the app lookup by module path are skipped. The example app reads its settings from the
environment when it is built, so it is built from the call's environment (`create_app`) and handed to Litestar as
`ctx.obj`, the way `LitestarEnv.from_env` does. Calls with the same environment in a row (one test's commands) share
the app: building it was 0.55 s of a 0.6 s command, and no command changes the app. A few smoke tests keep the real
entry point (`process=True`).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from tests.click_runner import run_click

if TYPE_CHECKING:
    from litestar.cli._utils import LitestarEnv

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
    from litestar.cli.main import litestar_group

    def loaded() -> LitestarEnv:
        return _app_for(tuple(sorted(os.environ.items())))

    return run_click(litestar_group, argv, env, cwd=ROOT, prog_name="litestar", timeout=TIMEOUT, obj=loaded)


@functools.lru_cache(maxsize=1)
def _app_for(environment: tuple[tuple[str, str], ...]) -> LitestarEnv:
    """The example app built in `environment`, which is os.environ while it runs; the last one is kept."""
    from litestar.cli._utils import LitestarEnv

    from example_app.app import create_app  # first import here: the module's own `app` reads this environment

    return LitestarEnv(app_path=APP, app=create_app(), cwd=ROOT)
