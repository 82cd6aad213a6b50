"""TypeScript hooks to JavaScript by type erasure (docs/reference.md#hooks-compiling).

A hook is compiled once, when it is saved: tree-sitter-typescript parses it and every piece of type syntax is
overwritten with spaces, newlines kept, so each character that survives stays at its line and column and a V8 stack
trace points at the author's own TypeScript. Columns are counted in UTF-16 code units, as V8 and browser editors count
them. What cannot be erased without generating code (enum, namespace, parameter properties, decorators, value imports)
and the few shapes where erasure would change how JavaScript parses the rest are refused with line, column and reason.

The result is a script body, not a module: `export default X` becomes `__default__ = X`, a variable the runtime
declares around it: `(function(){"use strict";var __default__;` + javascript + a line break +
`;return __default__;})()`.
"""

from __future__ import annotations

from dataclasses import dataclass

from litestar_userio.hooks.checks import check_line_breaks, check_module_facts
from litestar_userio.hooks.erasure import Erasure
from litestar_userio.hooks.source import HookCompileError, position
from litestar_userio.hooks.verification import verify

__all__ = ["MAX_SOURCE_BYTES", "CompiledHook", "HookCompileError", "compile_hook"]

MAX_SOURCE_BYTES = 100 * 1024
"""A hook's source is at most 100 KiB (UTF-8) (docs/reference.md#hooks-compiling)."""


@dataclass(frozen=True)
class CompiledHook:
    """A hook ready for the runtime: a script body that assigns the hook function to `__default__`."""

    javascript: str
    """Same lines as the source; every character not erased keeps its line and column."""


def compile_hook(source: str) -> CompiledHook:
    """Erase the type syntax of a hook's TypeScript source, or say where and why it cannot run.

    Raises:
        HookCompileError: the source is too large, does not parse, uses syntax that needs code generation or module
            loading, or has a shape where erasing the types would change what the code does.
    """
    try:
        data = source.encode("utf-8")
    except UnicodeEncodeError as exc:
        line, column = position(source.encode("utf-8", "surrogatepass"), len(source[: exc.start].encode("utf-8")))
        raise HookCompileError(line, column, "the source is not valid Unicode text") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise HookCompileError(1, 1, f"the hook is {len(data)} bytes long; the limit is {MAX_SOURCE_BYTES} bytes")
    erasure = Erasure(data)
    root = erasure.tree.root_node
    if root.has_error:
        erasure.syntax_error(root)
    erasure.walk(root)
    check_module_facts(erasure)
    check_line_breaks(erasure, root)
    javascript = erasure.render()
    verify(erasure, javascript)
    return CompiledHook(javascript)
