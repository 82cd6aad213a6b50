"""V8's own check of a compiled hook at save time.

Type erasure never breaks valid TypeScript, but tree-sitter accepts some invalid code that V8 refuses
(`let a; let a;`, `/(/`, `const x;`, octal literals in strict mode...). Such a hook would save, then stop
every token of its event. V8 parses the wrapper here without calling it, so nothing of the hook runs; the
context lives on one thread of its own, never on the server's event loop.
"""

from __future__ import annotations

import asyncio
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["SyntaxProblem", "v8_syntax_problem"]

_PREFIX = '(function(){"use strict";var __default__;\n'
_SUFFIX = "\n;return __default__;})"
_LOCATION = re.compile(r"<anonymous>:(\d+): (.*)")

_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="userio-hook-syntax")
_local = threading.local()


class SyntaxProblem:
    """Where V8 refuses the hook: 1-based line and column in the author's source, and why."""

    def __init__(self, line: int, column: int, message: str) -> None:
        self.line = line
        self.column = column
        self.message = message


def _context() -> Any:
    if getattr(_local, "context", None) is None:
        from py_mini_racer import MiniRacer

        _local.context = MiniRacer()
    return _local.context


def _check(javascript: str) -> SyntaxProblem | None:
    from py_mini_racer import JSParseException

    try:
        _context().eval(_PREFIX + javascript + _SUFFIX)  # defines the function; its body never runs
    except JSParseException as exc:
        lines = str(exc).split("\n")
        match = _LOCATION.match(lines[0])
        if match is None:
            return SyntaxProblem(1, 1, lines[0])
        line = max(1, int(match[1]) - 1)
        caret = lines[2] if len(lines) > 2 else ""
        column = caret.index("^") + 1 if "^" in caret else 1
        return SyntaxProblem(line, column, match[2])
    return None


def _initialize_v8_here() -> None:
    """Start mini-racer's V8 on the calling thread, before our own thread makes a context.

    mini-racer 0.14 sets V8 up on the thread that first needs it. Started on our worker thread, the next context
    made on the main thread (a host's own `MiniRacer()`, a test's) crashed the process with a segmentation fault;
    started on the thread that runs the event loop, both work. Later calls do nothing.
    """
    from py_mini_racer import init_mini_racer

    init_mini_racer(ignore_duplicate_init=True)


async def v8_syntax_problem(javascript: str) -> SyntaxProblem | None:
    """None when V8 loads `javascript` as the runtime wraps it; else where and why it does not."""
    _initialize_v8_here()
    return await asyncio.get_running_loop().run_in_executor(_executor, _check, javascript)
