"""A click command run in this process as a user's process would run it, for the CLI tests.

A Python start costs seconds on a busy machine, so the server's and the `userio` client's CLI tests run their
commands through click's runner: the real option parsing and command code run, only the interpreter start is
skipped. The commands call `asyncio.run()` while an async test's loop holds this thread, so each run gets a thread
of its own; the working directory and the whole environment are the process's, so runs take turns.
"""

from __future__ import annotations

import os
import subprocess
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

_TURN = threading.Lock()
"""One in-process run at a time: the working directory and os.environ belong to the process."""


def run_click(
    command: click.Command,
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Path,
    prog_name: str,
    timeout: float,
    stdin: bytes | None = None,
    obj: Callable[[], Any] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`prog_name args` in `cwd` with exactly `env` as the environment; `obj()`, built in that environment, is the
    click context's object. A crash's traceback ends stderr, as the interpreter would print it."""
    pool = ThreadPoolExecutor(1)
    try:
        return pool.submit(_invoke, command, list(args), dict(env), cwd, prog_name, stdin, obj).result(timeout)
    finally:
        pool.shutdown(wait=False)  # on a timeout the test fails instead of waiting for the stuck run


def _invoke(
    command: click.Command,
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    prog_name: str,
    stdin: bytes | None,
    obj: Callable[[], Any] | None,
) -> subprocess.CompletedProcess[str]:
    with _TURN, _process_state(env, cwd):
        result = CliRunner().invoke(command, args, input=stdin, obj=obj() if obj else None, prog_name=prog_name)
    stderr = result.stderr_bytes.decode()  # a process's bytes: `.stderr` would turn CRLF into LF
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess([prog_name, *args], result.exit_code, result.stdout_bytes.decode(), stderr)


@contextmanager
def _process_state(env: dict[str, str], cwd: Path) -> Iterator[None]:
    """`env` as the whole of os.environ and `cwd` as the working directory; the caller's restored after."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
