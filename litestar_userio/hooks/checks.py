"""Checks after the erasure walk: imports used as values, the default export's shape, line breaks erasure would move.

Each is a rule of the form "erasing this would change what the code does": it refuses the source with a position.
"""

from __future__ import annotations

import bisect

from tree_sitter import Node

from litestar_userio.hooks.erasure import Erasure
from litestar_userio.hooks.source import NO_IMPORTS, HookCompileError, leaves, position

__all__ = ["check_line_breaks", "check_module_facts"]

# Tokens after which JavaScript forbids a line break ("no LineTerminator here"): erasing a type that stood between
# them and the next token on the same line would let automatic semicolon insertion cut the statement.
_NO_LINE_BREAK_AFTER = frozenset({"return", "throw", "break", "continue", "yield", "async"})

_NO_DEFAULT_EXPORT = "the hook must have a default export: export default async function (e) { ... }"


def check_module_facts(erasure: Erasure) -> None:
    """Imports used only as types, one default export, and a default export whose name only its body uses."""
    for name, spec in erasure.type_imports.items():
        uses = erasure.value_names.get(name)
        if uses:
            line, column = position(erasure.data, uses[0].start_byte)
            raise erasure.fail(spec, f"{NO_IMPORTS}; `{name}` is used as a value at line {line}, column {column}")
    if erasure.default is None:
        raise HookCompileError(1, 1, _NO_DEFAULT_EXPORT)
    if erasure.default_named is not None:
        name_node = erasure.default_named.child_by_field_name("name")
        assert name_node is not None
        name = erasure.text(name_node)
        for use in erasure.value_names.get(name, []):
            if not erasure.default_named.start_byte <= use.start_byte < erasure.default_named.end_byte:
                raise erasure.fail(
                    use,
                    f"`{name}` is the default export's own name and is only visible inside it once compiled: "
                    f"declare it without `export default` and add `export default {name};`",
                )
    if erasure.default_alias is not None:
        _check_alias(erasure, *erasure.default_alias)


def _check_alias(erasure: Erasure, statement: Node, local: Node) -> None:
    """`export { h as default }` is a live binding: it reads `h` at the end, a plain assignment reads it now."""
    name = erasure.text(local)
    declared_by, declared_at = _top_level_declaration(erasure, name)
    if declared_by == "function":
        return
    if declared_by is None or declared_at > statement.start_byte:
        raise erasure.fail(
            local, f"declare `{name}` before `export {{ {name} as default }}`, or write `export default {name};`"
        )
    if declared_by in ("let", "var") and name in erasure.assigned:
        raise erasure.fail(local, f"`{name}` is reassigned: the default export must be a const or a function")


def _top_level_declaration(erasure: Erasure, name: str) -> tuple[str | None, int]:
    for statement in erasure.tree.root_node.named_children:
        node = statement
        if node.type == "export_statement":
            inner = node.child_by_field_name("declaration")
            if inner is None:
                continue
            node = inner
        declared = node.child_by_field_name("name")
        if node.type in ("function_declaration", "generator_function_declaration"):
            if declared is not None and erasure.text(declared) == name:
                return "function", node.start_byte
        elif node.type in ("class_declaration", "abstract_class_declaration"):
            if declared is not None and erasure.text(declared) == name:
                return "class", node.start_byte
        elif node.type in ("lexical_declaration", "variable_declaration"):
            kind = node.children[0].type
            for declarator in node.named_children:
                pattern = declarator.child_by_field_name("name")
                if pattern is not None and name in _bound_names(erasure, pattern):
                    return kind, node.start_byte
    return None, 0


def _bound_names(erasure: Erasure, pattern: Node) -> set[str]:
    names: set[str] = set()
    stack = [pattern]
    while stack:
        node = stack.pop()
        if node.type in ("identifier", "shorthand_property_identifier_pattern"):
            names.add(erasure.text(node))
        elif node.type == "pair_pattern":
            value = node.child_by_field_name("value")
            if value is not None:
                stack.append(value)
        else:
            stack.extend(node.named_children)
    return names


def check_line_breaks(erasure: Erasure, root: Node) -> None:
    """Refuse erasures that would put a line break where JavaScript forbids one (`return <T>` + newline + `x`)."""
    intervals = erasure.merged()
    starts = [start for start, _ in intervals]
    previous: Node | None = None
    first_erased: Node | None = None
    for leaf in leaves(root):
        if leaf.type == "comment" or leaf.start_byte == leaf.end_byte:
            continue
        index = bisect.bisect_right(starts, leaf.start_byte) - 1
        if index >= 0 and leaf.end_byte <= intervals[index][1]:
            if first_erased is None:
                first_erased = leaf
            continue
        if (
            previous is not None
            and first_erased is not None
            and leaf.start_point.row > previous.end_point.row
            and (
                leaf.type == "=>"  # TypeScript wants `=>` on the line where the return type ends
                or (previous.type in _NO_LINE_BREAK_AFTER and first_erased.start_point.row == previous.end_point.row)
            )
        ):
            where = f"after `{previous.type}`" if leaf.type != "=>" else "before `=>`"
            raise erasure.fail(
                first_erased,
                f"erasing this type would leave a line break {where}, which changes the meaning in JavaScript: "
                "keep the code on one line",
            )
        previous, first_erased = leaf, None
