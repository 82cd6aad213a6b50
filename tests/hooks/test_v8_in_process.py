"""The save-time syntax check shares the process with whatever else uses V8 there (a host's code, our tests)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio
    from py_mini_racer import MiniRacer
    from litestar_userio.hooks.syntax import v8_syntax_problem

    print(asyncio.run(v8_syntax_problem("let x = ;")).message)
    context = MiniRacer()
    print(context.eval("6 * 7"))
    context.close()
    """
)


def test_a_context_made_on_the_main_thread_after_a_save_time_check_works():
    """mini-racer started on the check's own thread made the next main-thread `MiniRacer()` crash the process
    (a segmentation fault that killed the whole test run); in a process of its own, so a crash fails only this."""
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)

    assert (done.returncode, done.stdout.splitlines()) == (0, ["SyntaxError: Unexpected token ';'", "42"]), done.stderr
