"""What the compiler's parts share: the grammar, positions as V8 counts them, and the error they raise."""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter_typescript
from tree_sitter import Language, Node

__all__ = [
    "DECLARATION_AS_EXPRESSION",
    "LANGUAGE",
    "LINE_TERMINATORS",
    "NO_IMPORTS",
    "HookCompileError",
    "blank",
    "children_of_type",
    "leaves",
    "position",
    "utf16_len",
]

# The TypeScript grammar, not TSX: in TSX `<T>x` and `<T,>(x) => x` would read as JSX.
LANGUAGE = Language(tree_sitter_typescript.language_typescript())

LINE_TERMINATORS = frozenset("\n\r\u2028\u2029")

DECLARATION_AS_EXPRESSION = {
    "function_declaration": "function_expression",
    "generator_function_declaration": "generator_function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
}

NO_IMPORTS = "imports are not supported: only types may be imported"


class HookCompileError(Exception):
    """A hook that cannot be saved, with the place to fix in the author's own source."""

    line: int
    """1-based line of the offending code."""
    column: int
    """1-based column, in UTF-16 code units like V8 and browser editors."""
    message: str
    """Why, in a sentence the admin can act on."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(f"{line}:{column}: {message}")
        self.line = line
        self.column = column
        self.message = message


def position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and UTF-16 column of a byte offset, counting lines the way JavaScript does."""
    before = data[:offset].decode("utf-8", "surrogatepass")
    line, start, i = 1, 0, 0
    while i < len(before):
        char = before[i]
        if char in LINE_TERMINATORS:
            if char == "\r" and before[i + 1 : i + 2] == "\n":
                i += 1
            line, start = line + 1, i + 1
        i += 1
    return line, utf16_len(before[start:]) + 1


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as V8 counts columns."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def blank(text: str) -> str:
    """Spaces in place of text, one per UTF-16 unit, line terminators kept: columns and lines stay put."""
    return "".join(c if c in LINE_TERMINATORS else "  " if ord(c) > 0xFFFF else " " for c in text)


def leaves(node: Node) -> Iterator[Node]:
    """The leaves under `node`, in source order."""
    cursor = node.walk()
    while True:
        if cursor.goto_first_child():
            continue
        current = cursor.node
        assert current is not None
        yield current
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def children_of_type(node: Node, *types: str) -> list[Node]:
    """The children of `node` of one of `types`."""
    return [child for child in node.children if child.type in types]
