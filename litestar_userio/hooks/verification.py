"""Verification: the output parsed again must read exactly as the source minus its types.

The shape rules of `erasure` and `checks` name the cases known to change meaning; this catches the rest (a statement
ended by a type declaration that automatic semicolon insertion now joins to the next line, HTML-like comments).
"""

from __future__ import annotations

import bisect

from tree_sitter import Node, Parser

from litestar_userio.hooks.erasure import Erasure
from litestar_userio.hooks.source import DECLARATION_AS_EXPRESSION, LANGUAGE, children_of_type

__all__ = ["verify"]

# Where `<!--` is text, not code.
_LITERAL_TOKENS = frozenset({"comment", "string_fragment", "regex_pattern", "template_string", "string"})

_CALL_CHAIN = frozenset({"call_expression", "member_expression", "subscript_expression"})

_RENAMED_BY_ERASURE = {"abstract_class_declaration": "class_declaration", "optional_parameter": "required_parameter"}


def verify(erasure: Erasure, javascript: str) -> None:
    """Parse the output again: it must read exactly as the source minus its types, or the erasure changed it.

    This catches what the shape rules above do not name, such as a statement whose end was a type declaration
    that automatic semicolon insertion now joins to the next line.
    """
    data = javascript.encode("utf-8", "surrogatepass")
    tree = Parser(LANGUAGE).parse(data)
    expected, where = _shape(erasure, erasure.tree.root_node, source=True)
    actual, _ = _shape(erasure, tree.root_node, source=False)
    if tree.root_node.has_error or expected != actual:
        index = next((i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b), len(actual))
        offset = where[min(index, len(where) - 1)]
        raise erasure.fail(
            offset,
            "erasing the types here changes how the code around it parses (automatic semicolon insertion): "
            "end the statement before with a semicolon",
        )
    _check_html_comments(erasure, tree.root_node, data)


def _shape(erasure: Erasure, root: Node, *, source: bool) -> tuple[list[str], list[int]]:
    """The tree as a flat list of `(type` and `)` items, without comments and empty statements.

    For the source, the tree as erasure should leave it: erased nodes gone, `x as T` read as `x`, exports rewritten,
    and `await f<T>(x)`, which tree-sitter reads as `(await f)<T>(x)`, read as TypeScript does.
    """
    intervals = erasure.merged() if source else []
    starts = [start for start, _ in intervals]
    items: list[str] = []
    offsets: list[int] = []
    substitutes: dict[int, Node] = {}  # a prefix operator moved out of a call chain -> its operand
    # (node, type to record, offset); a None node is a literal item, a synthetic part of a rewritten export
    stack: list[tuple[Node | None, str, int]] = [(root, root.type, 0)]

    def push_children(node: Node) -> None:
        for child in reversed(node.named_children):
            child = substitutes.get(child.id, child)
            stack.append((child, child.type, 0))

    while stack:
        node, kind, offset = stack.pop()
        if node is None:
            items.append(kind)
            offsets.append(offset)
            continue
        if node.type in ("comment", "empty_statement"):  # `export default function f() {};` keeps its `;`
            continue
        if source:
            index = bisect.bisect_right(starts, node.start_byte) - 1
            if index >= 0 and node.end_byte <= intervals[index][1] and node.end_byte > node.start_byte:
                continue
            if node.id in erasure.erased_statements:
                continue
            if node.type in ("as_expression", "satisfies_expression", "non_null_expression"):
                inner = substitutes.get(node.children[0].id, node.children[0])
                stack.append((inner, inner.type, 0))
                continue
            if node.type in ("type_assertion", "instantiation_expression"):
                push_children(node)
                continue
            exported = erasure.expected_exports.get(node.id)
            if exported is not None:
                how, target = exported
                at = node.start_byte
                if isinstance(target, str):
                    stack.extend([(None, ")", at), (None, ")", at), (None, ")", at), (None, "(identifier", at)])
                elif how == "declaration":
                    stack.append((target, target.type, 0))
                    continue
                else:
                    stack.extend([(None, ")", at), (None, ")", at)])
                    stack.append((target, DECLARATION_AS_EXPRESSION.get(target.type, target.type), 0))
                stack.extend(
                    (None, item, at) for item in (")", "(identifier", "(assignment_expression", "(expression_statement")
                )
                continue
            prefixes = _misplaced_prefixes(node, substitutes)
            if prefixes:
                for prefix in prefixes:
                    items.append("(" + prefix.type)
                    offsets.append(prefix.start_byte)
                stack.extend((None, ")", prefix.start_byte) for prefix in prefixes)
                operand = prefixes[-1].named_children[-1]
                substitutes[prefixes[0].id] = operand
            kind = _RENAMED_BY_ERASURE.get(kind, kind)
        items.append("(" + kind)
        offsets.append(node.start_byte)
        stack.append((None, ")", node.start_byte))
        push_children(node)
    return items, offsets


def _misplaced_prefixes(node: Node, substitutes: dict[int, Node]) -> list[Node]:
    """Prefix operators tree-sitter bound tighter than a generic call below `node`, outermost first."""
    if node.type not in _CALL_CHAIN:
        return []
    generic = False
    base = node
    while base.type in _CALL_CHAIN or base.type == "non_null_expression":
        generic = generic or bool(children_of_type(base, "type_arguments"))
        base = substitutes.get(base.children[0].id, base.children[0])
    prefixes: list[Node] = []
    while generic and (
        base.type in ("await_expression", "unary_expression")
        or (base.type == "update_expression" and not base.children[0].is_named)
    ):
        prefixes.append(base)
        base = base.named_children[-1]
    return prefixes


def _check_html_comments(erasure: Erasure, root: Node, data: bytes) -> None:
    """`<!--` and a line-leading `-->` open comments in a script (not in a module): refuse them in code."""
    for marker in (b"<!--", b"-->"):
        start = data.find(marker)
        while start >= 0:
            line_start = max(data.rfind(b"\n", 0, start), data.rfind(b"\r", 0, start)) + 1
            if marker == b"<!--" or not data[line_start:start].strip():
                node = root.descendant_for_byte_range(start, start + 1)
                if node is not None and node.type not in _LITERAL_TOKENS:
                    raise erasure.fail(
                        start, f"`{marker.decode()}` starts a comment in a script: add spaces inside the operators"
                    )
            start = data.find(marker, start + 1)
