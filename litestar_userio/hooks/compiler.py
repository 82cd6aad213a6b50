"""TypeScript hooks to JavaScript by type erasure (DECISIONS 5).

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

import bisect
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

__all__ = ["MAX_SOURCE_BYTES", "CompiledHook", "HookCompileError", "compile_hook"]

MAX_SOURCE_BYTES = 100 * 1024
"""DECISIONS 5: a hook's source is at most 100 KiB (UTF-8)."""

# The TypeScript grammar, not TSX: in TSX `<T>x` and `<T,>(x) => x` would read as JSX.
_LANGUAGE = Language(tree_sitter_typescript.language_typescript())

_DEFAULT = "__default__"
_LINE_TERMINATORS = frozenset("\n\r\u2028\u2029")

# Nodes that are nothing but types, wherever they stand in code: erased whole.
_ERASED_NODES = frozenset(
    {
        "type_annotation",
        "opting_type_annotation",
        "omitting_type_annotation",
        "adding_type_annotation",
        "type_predicate_annotation",
        "asserts_annotation",
        "type_arguments",
        "type_parameters",
        "interface_declaration",
        "type_alias_declaration",
        "ambient_declaration",
        "function_signature",
        "abstract_method_signature",
        "method_signature",
        "index_signature",
        "implements_clause",
        "accessibility_modifier",
        "override_modifier",
        "hash_bang_line",
    }
)

# Erased nodes that stand as statements: their closing `;` is kept.
_STATEMENTS = frozenset(
    {"interface_declaration", "type_alias_declaration", "ambient_declaration", "function_signature"}
)

# TypeScript-only nodes that must never reach the output; met outside an erased part they are refused, so a
# construct this module does not know about cannot slip through as broken JavaScript.
_TS_ONLY_NODES = frozenset(
    {
        "array_type",
        "asserts",
        "call_signature",
        "conditional_type",
        "constraint",
        "construct_signature",
        "constructor_type",
        "default_type",
        "existential_type",
        "extends_type_clause",
        "flow_maybe_type",
        "function_type",
        "generic_type",
        "import_require_clause",
        "index_type_query",
        "infer_type",
        "interface_body",
        "intersection_type",
        "literal_type",
        "lookup_type",
        "mapped_type_clause",
        "nested_type_identifier",
        "object_type",
        "optional_type",
        "parenthesized_type",
        "predefined_type",
        "property_signature",
        "readonly_type",
        "rest_type",
        "template_literal_type",
        "template_type",
        "this_type",
        "tuple_type",
        "type_parameter",
        "type_predicate",
        "type_query",
        "union_type",
        "html_comment",
        "jsx_text",
    }
)

_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "generator_function_declaration",
        "generator_function",
        "arrow_function",
        "method_definition",
        "class_static_block",
    }
)

# An `as` whose operand is one of these changes meaning once erased if anything binds to it
# (`1 + 1 as number / 2` is `(1 + 1) / 2` in TypeScript, `1 + 1 / 2` in JavaScript).
_LOOSE_OPERANDS = frozenset(
    {
        "binary_expression",
        "ternary_expression",
        "assignment_expression",
        "augmented_assignment_expression",
        "arrow_function",
        "yield_expression",
        "sequence_expression",
    }
)

# Tokens after which JavaScript forbids a line break ("no LineTerminator here"): erasing a type that stood between
# them and the next token on the same line would let automatic semicolon insertion cut the statement.
_NO_LINE_BREAK_AFTER = frozenset({"return", "throw", "break", "continue", "yield", "async"})

# Words that strict-mode JavaScript never takes as a name, some of which tree-sitter lets through.
_RESERVED_WORDS = frozenset(
    {
        *("await", "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do"),
        *("else", "enum", "export", "extends", "false", "finally", "for", "function", "if", "implements", "import"),
        *("in", "instanceof", "interface", "let", "new", "null", "package", "private", "protected", "public"),
        *("return", "static", "super", "switch", "this", "throw", "true", "try", "typeof", "var", "void", "while"),
        *("with", "yield"),
    }
)

# Tokens after which TypeScript keeps `f<T>` an instantiation expression: a binary operator or what cannot start an
# expression (TypeScript's canFollowTypeArgumentsInExpression, less `+`, `-`, `<` and `>`, refused).
_FOLLOW_TYPE_ARGUMENTS = frozenset(
    {
        *(")", "]", "}", ",", ";", ":", "?", "?.", ".", "=", "=>", "as", "satisfies", "in", "instanceof"),
        *("==", "===", "!=", "!==", "<=", ">=", "&&", "||", "??", "*", "/", "%", "**", "&", "|", "^"),
        *("<<", ">>", ">>>", "+=", "-=", "*=", "/=", "%=", "**=", "&&=", "||=", "??=", "&=", "|=", "^="),
        *("<<=", ">>=", ">>>="),
    }
)

# Class field names that JavaScript reads as a modifier of the next member when a line break follows them.
_MODIFIER_NAMES = frozenset({"get", "set", "static", "accessor"})

# Where `<!--` is text, not code.
_LITERAL_TOKENS = frozenset({"comment", "string_fragment", "regex_pattern", "template_string", "string"})

_CALL_CHAIN = frozenset({"call_expression", "member_expression", "subscript_expression"})

_DECLARATION_AS_EXPRESSION = {
    "function_declaration": "function_expression",
    "generator_function_declaration": "generator_function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
}
_RENAMED_BY_ERASURE = {"abstract_class_declaration": "class_declaration", "optional_parameter": "required_parameter"}

_NO_IMPORTS = "imports are not supported: only types may be imported"
_NO_DEFAULT_EXPORT = "the hook must have a default export: export default async function (e) { ... }"


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
        line, column = _position(source.encode("utf-8", "surrogatepass"), len(source[: exc.start].encode("utf-8")))
        raise HookCompileError(line, column, "the source is not valid Unicode text") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise HookCompileError(1, 1, f"the hook is {len(data)} bytes long; the limit is {MAX_SOURCE_BYTES} bytes")
    return CompiledHook(_Eraser(data).compile())


def _position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and UTF-16 column of a byte offset, counting lines the way JavaScript does."""
    before = data[:offset].decode("utf-8", "surrogatepass")
    line, start, i = 1, 0, 0
    while i < len(before):
        char = before[i]
        if char in _LINE_TERMINATORS:
            if char == "\r" and before[i + 1 : i + 2] == "\n":
                i += 1
            line, start = line + 1, i + 1
        i += 1
    return line, _utf16_len(before[start:]) + 1


def _utf16_len(text: str) -> int:
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def _blank(text: str) -> str:
    """Spaces in place of text, one per UTF-16 unit, line terminators kept: columns and lines stay put."""
    return "".join(c if c in _LINE_TERMINATORS else "  " if ord(c) > 0xFFFF else " " for c in text)


def _leaves(node: Node) -> Iterator[Node]:
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


def _children_of_type(node: Node, *types: str) -> list[Node]:
    return [child for child in node.children if child.type in types]


class _Eraser:
    """One compilation: walks the tree once, collecting erasures, replacements and the facts checked at the end."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        parser = Parser(_LANGUAGE)
        self.tree = parser.parse(data)
        self.erased: list[tuple[int, int]] = []
        self.erased_statements: set[int] = set()  # erased but for their `;`
        self.replaced: dict[int, tuple[int, str]] = {}  # start byte -> (end byte, text written over the span)
        self.expected_exports: dict[int, tuple[str, Node | str]] = {}  # export_statement id -> how it reads after
        self.type_imports: dict[str, Node] = {}  # names brought in by imports that must be used as types only
        self.value_names: dict[str, list[Node]] = {}  # identifiers in code, by name
        self.assigned: set[str] = set()
        self.default: Node | None = None
        self.default_named: Node | None = None  # the default-exported function or class that has a name
        self.default_alias: tuple[Node, Node] | None = None  # (export statement, local name) of `export {x as default}`
        self.parent: Node | None = None  # of the node being visited
        self.function: Node | None = None  # the function around the node being visited

    # -- driver -----------------------------------------------------------------------------------------------------

    def compile(self) -> str:
        root = self.tree.root_node
        if root.has_error:
            self._syntax_error(root)
        self._walk(root)
        self._check_module_facts()
        self._check_line_breaks(root)
        javascript = self._render()
        self._verify(javascript)
        return javascript

    def fail(self, node: Node | int, message: str) -> HookCompileError:
        offset = node if isinstance(node, int) else node.start_byte
        line, column = _position(self.data, offset)
        return HookCompileError(line, column, message)

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def erase(self, start: Node | int, end: Node | int | None = None) -> None:
        first = start if isinstance(start, int) else start.start_byte
        if end is None:
            assert not isinstance(start, int)
            last = start.end_byte
        else:
            last = end if isinstance(end, int) else end.end_byte
        if last > first:
            self.erased.append((first, last))

    def erase_statement(self, node: Node) -> None:
        """Erase a declaration but keep its closing `;`: an empty statement still ends the one before it."""
        last = node
        while last.child_count:
            last = last.children[-1]
        if last.type == ";" and not last.is_missing and last.end_byte == node.end_byte:
            self.erase(node.start_byte, last.start_byte)
            self.erased_statements.add(node.id)
        else:
            self.erase(node)

    def replace(self, start: int, end: int, texts: tuple[str, ...], node: Node, message: str) -> None:
        """Blank a span and write the first of `texts` that fits on one of its lines (no line break may move)."""
        blanked = _blank(self.data[start:end].decode("utf-8", "surrogatepass"))
        for text in texts:
            at = blanked.find(" " * len(text))
            if at >= 0:
                self.replaced[start] = (end, blanked[:at] + text + blanked[at + len(text) :])
                return
        raise self.fail(node, message)

    def _syntax_error(self, root: Node) -> None:
        """Refuse the source at its first ERROR or MISSING node."""
        stack = [root]
        while stack:
            node = stack.pop()
            if node.is_missing:
                raise self.fail(node, f"syntax error: missing `{node.type}`")
            if node.is_error:
                if node.end_byte >= len(self.data.rstrip()) and node.child_count > 1:
                    raise self.fail(node.end_byte, "syntax error: the code ends too early (an unclosed bracket?)")
                raise self.fail(node, "syntax error")
            stack.extend(reversed([child for child in node.children if child.has_error]))
        raise self.fail(root, "syntax error")  # pragma: no cover - has_error always has a culprit

    # -- the walk ---------------------------------------------------------------------------------------------------

    def _walk(self, root: Node) -> None:
        # Parents and enclosing functions travel with the walk: `Node.parent` searches down from the root.
        stack: list[tuple[Node, Node | None, Node | None]] = [(root, None, None)]
        while stack:
            node, self.parent, self.function = stack.pop()
            function = node if node.type in _FUNCTIONS else self.function
            stack.extend((child, node, function) for child in reversed(self._visit(node)))

    def _visit(self, node: Node) -> list[Node]:
        """Erase or refuse one node; return the children still to look at."""
        kind = node.type
        if kind == "comment":
            return []
        if kind in _ERASED_NODES:
            parent = self.parent
            self._check_type_line_breaks(node)
            if kind == "implements_clause" and parent is not None and parent.named_child_count == 1:
                self.erase(parent)  # `class A implements B {}`: the whole heritage goes
            elif kind in _STATEMENTS:
                self.erase_statement(node)
            else:
                self.erase(node)
            return []
        if kind in _TS_ONLY_NODES:
            raise self.fail(node, f"unsupported syntax in code: {kind.replace('_', ' ')}")
        handler = _HANDLERS.get(kind)
        if handler is not None:
            return handler(self, node)
        if kind in ("identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern"):
            name = self.text(node)
            if name == _DEFAULT:
                raise self.fail(node, f"`{_DEFAULT}` is reserved for the hook's default export")
            if name in _RESERVED_WORDS:  # tree-sitter accepts some of them as names; V8 would not load the hook
                raise self.fail(node, f"`{name}` is a reserved word and cannot be used as a name")
            self.value_names.setdefault(name, []).append(node)
        return node.children

    # -- statements -------------------------------------------------------------------------------------------------

    def _import(self, node: Node) -> list[Node]:
        clause = next((c for c in node.named_children if c.type in ("import_clause", "import_require_clause")), None)
        if clause is None or clause.type == "import_require_clause":
            raise self.fail(node, _NO_IMPORTS)
        if not _children_of_type(node, "type"):  # `import type ...` needs no look at its names
            for part in clause.named_children:
                if part.type == "identifier":
                    self.type_imports[self.text(part)] = part
                elif part.type == "namespace_import":
                    name = part.named_children[-1]
                    self.type_imports[self.text(name)] = name
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        if spec.type != "import_specifier" or _children_of_type(spec, "type"):
                            continue
                        local = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                        assert local is not None
                        self.type_imports[self.text(local)] = local
        self.erase_statement(node)
        return []

    def _export(self, node: Node) -> list[Node]:
        export = node.children[0]
        default = next((c for c in node.children if c.type == "default"), None)
        declaration = node.child_by_field_name("declaration")
        value = node.child_by_field_name("value")
        if node.child_by_field_name("source") is not None or _children_of_type(node, "*", "namespace_export"):
            if _children_of_type(node, "type") or self._only_type_specifiers(node):
                self.erase_statement(node)
                return []
            raise self.fail(node, _NO_IMPORTS + " (re-exports load modules)")
        if _children_of_type(node, "type"):  # `export type { A }`
            self.erase_statement(node)
            return []
        if _children_of_type(node, "=", "as"):
            raise self.fail(node, "`export =` and `export as namespace` are not supported: use export default")
        if declaration is not None and declaration.type in (
            "interface_declaration",
            "type_alias_declaration",
            "ambient_declaration",
            "function_signature",
        ):
            self.erase_statement(node)
            return []
        if declaration is not None and declaration.type == "import_alias":
            raise self.fail(declaration, _NO_IMPORTS)
        if default is not None:
            target = declaration or value
            assert target is not None
            self._set_default(node)
            self._check_default_declaration_end(node, target)
            if (
                self.data[export.start_byte : default.end_byte].count(b"\n")
                or b"\r" in self.data[export.start_byte : default.end_byte]
            ):
                raise self.fail(export, "write `export default` on one line")
            self.replace(export.start_byte, default.end_byte, (f"{_DEFAULT} =",), export, "write `export default`")
            self.expected_exports[node.id] = ("default", target)
            named = target.type in _DECLARATION_AS_EXPRESSION or target.type in ("function_expression", "class")
            if named and target.child_by_field_name("name") is not None:
                self.default_named = target
            return [target]
        if declaration is not None:
            self.erase(export)
            self.expected_exports[node.id] = ("declaration", declaration)
            return [declaration]
        clause = next(c for c in node.named_children if c.type == "export_clause")
        for spec in clause.named_children:
            if spec.type != "export_specifier" or _children_of_type(spec, "type"):
                continue
            alias = spec.child_by_field_name("alias")
            name = spec.child_by_field_name("name")
            assert name is not None
            if alias is not None and self.text(alias) == "default":
                if name.type != "identifier":
                    raise self.fail(name, "export a local variable as default: export { handler as default }")
                self._set_default(node)
                self.default_alias = (node, name)
                self.value_names.setdefault(self.text(name), []).append(name)
                local = self.text(name)
                self.replace(
                    node.start_byte,
                    node.end_byte,
                    (f"{_DEFAULT} = {local};", f"{_DEFAULT}={local};"),
                    node,
                    f"no room to rewrite this export on one of its lines: write `export default {local};`",
                )
                self.expected_exports[node.id] = ("alias", local)
                return []
        self.erase_statement(node)  # other export lists only name things; a script has nobody to export to
        return []

    def _check_default_declaration_end(self, statement: Node, target: Node) -> None:
        """`export default function () {}` ends at its `}`; once it is an assignment, `(`... on the next line calls it.

        tree-sitter already reads an anonymous one as an expression that the next line continues, so both shapes are
        refused rather than compiled into a call.
        """
        node = target
        while node.child_count and node.type not in ("function_expression", "generator_function", "class"):
            node = node.children[0]
        following: Node | None = None
        if node.id != target.id and node.type in ("function_expression", "generator_function", "class"):
            following = node.next_sibling or node
        elif target.type in _DECLARATION_AS_EXPRESSION:
            after = statement.next_sibling
            while after is not None and after.type == "comment":
                after = after.next_sibling
            while after is not None and after.child_count:
                after = after.children[0]
            if after is not None and after.type in ("(", "[", "`", "+", "-", "/"):
                following = after
        if following is not None:
            raise self.fail(
                following,
                "the default-exported function or class ends at its closing `}`, but once compiled JavaScript would "
                "continue it on the next line: start that line with `;`",
            )

    def _only_type_specifiers(self, node: Node) -> bool:
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if clause is None:
            return False
        specs = [c for c in clause.named_children if c.type == "export_specifier"]
        return all(_children_of_type(spec, "type") for spec in specs)

    def _set_default(self, node: Node) -> None:
        if self.default is not None:
            raise self.fail(node, "the hook has more than one default export")
        self.default = node

    def _return(self, node: Node) -> list[Node]:
        if self.function is None:
            raise self.fail(node, "return outside a function: the hook is a script, return from the default export")
        return node.children

    def _await(self, node: Node) -> list[Node]:
        function = self.function
        if function is None:
            raise self.fail(node, "top-level await is not supported: await inside the default export")
        if not _children_of_type(function, "async"):
            raise self.fail(node, "await is only valid in async functions")
        return node.children

    def _for_in(self, node: Node) -> list[Node]:
        if _children_of_type(node, "await"):
            return self._await(node)
        return node.children

    def _meta_property(self, node: Node) -> list[Node]:
        if node.children[0].type == "import":
            raise self.fail(node, "import.meta is not available: the hook is a script, not a module")
        return []

    def _dynamic_import(self, node: Node) -> list[Node]:
        raise self.fail(node, _NO_IMPORTS)

    # -- classes ----------------------------------------------------------------------------------------------------

    def _abstract_class(self, node: Node) -> list[Node]:
        for token in _children_of_type(node, "abstract"):
            self.erase(token)
        return node.children

    def _field(self, node: Node) -> list[Node]:
        if _children_of_type(node, "declare", "abstract"):
            self.erase(node)  # `declare x: T` and `abstract x: T` declare no field at run time
            return []
        for token in _children_of_type(node, "readonly", "?", "!"):
            self.erase(token)
        name = node.child_by_field_name("name")
        if (
            name is not None
            and self.text(name) in _MODIFIER_NAMES
            and node.child_by_field_name("value") is None
            and node.end_byte > name.end_byte
            and not self._followed_by_semicolon(node)
        ):
            raise self.fail(
                name,
                f"end the field `{self.text(name)}` with a semicolon: once its type is erased JavaScript would read "
                "it as a modifier of the next member",
            )
        return node.children

    def _followed_by_semicolon(self, node: Node) -> bool:
        following = node.next_sibling
        return following is not None and following.type == ";"

    def _method(self, node: Node) -> list[Node]:
        for token in _children_of_type(node, "?"):
            self.erase(token)
        return node.children

    # -- parameters and declarations ---------------------------------------------------------------------------------

    def _parameter(self, node: Node) -> list[Node]:
        for child in node.children:
            if child.type in ("accessibility_modifier", "override_modifier", "readonly"):
                raise self.fail(
                    node,
                    "constructor parameter properties are not supported: they need code generation; declare the "
                    "field in the class body and assign it in the constructor",
                )
        if node.children and node.children[0].type == "this":
            following = node.next_sibling
            self.erase(node, following if following is not None and following.type == "," else None)
            return []
        for token in _children_of_type(node, "?"):
            self.erase(token)
        return node.children

    def _declarator(self, node: Node) -> list[Node]:
        for token in _children_of_type(node, "!"):
            self.erase(token)
        return node.children

    def _assignment(self, node: Node) -> list[Node]:
        left = node.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            self.assigned.add(self.text(left))
        return node.children

    def _update(self, node: Node) -> list[Node]:
        argument = node.child_by_field_name("argument")
        if argument is not None and argument.type == "identifier":
            self.assigned.add(self.text(argument))
        return node.children

    # -- expressions ------------------------------------------------------------------------------------------------

    def _type_cast(self, node: Node) -> list[Node]:
        """`x as T`, `x satisfies T`: erase from the keyword on, after checking erasure keeps the meaning."""
        keyword = next(c for c in node.children if c.type in ("as", "satisfies"))
        expression = node.children[0]
        inner = expression
        while inner.type in ("as_expression", "satisfies_expression", "non_null_expression"):
            inner = inner.children[0]
        parent = self.parent
        outermost = parent is None or parent.type not in ("as_expression", "satisfies_expression")
        if (
            outermost
            and inner.type in _LOOSE_OPERANDS
            and (parent is None or parent.type != "parenthesized_expression")
        ):
            raise self.fail(
                node,
                f"`{keyword.type}` on an unparenthesised {inner.type.replace('_', ' ')}: erasing it could change the "
                f"meaning; write ({self.text(inner)}) {keyword.type} ...",
            )
        if (
            outermost
            and parent is not None
            and parent.type in ("call_expression", "member_expression", "subscript_expression")
            and parent.children[0].id == node.id
        ):
            raise self.fail(
                keyword,
                f"the type after `{keyword.type}` ends the statement in TypeScript but, once erased, the next token "
                f"would continue it: end the line with a semicolon, or parenthesise ({self.text(node)})",
            )
        for part in node.children[node.children.index(keyword) + 1 :]:
            self._check_type_line_breaks(part)
        self.erase(keyword.start_byte, node.end_byte)
        return [expression]

    def _arrow(self, node: Node) -> list[Node]:
        type_parameters = node.child_by_field_name("type_parameters")
        if type_parameters is not None and type_parameters.start_point.row != type_parameters.end_point.row:
            raise self.fail(
                type_parameters,
                "type parameters of an arrow function must stay on one line: erasing them could break the line "
                "before `=>`",
            )
        arrow = next((c for c in node.children if c.type == "=>"), None)
        before = arrow.prev_sibling if arrow is not None else None
        if arrow is not None and before is not None and arrow.start_point.row > before.end_point.row:
            raise self.fail(arrow, "JavaScript allows no line break before `=>`: move it up a line")
        return node.children

    def _check_type_line_breaks(self, node: Node) -> None:
        """`x as T`, then `[0]` on the next line: TypeScript ends the type at the line break; tree-sitter reads T[0]."""
        stack = [node]
        while stack:
            part = stack.pop()
            if part.type in ("lookup_type", "array_type"):
                bracket = next((c for c in part.children if c.type == "["), None)
                before = bracket.prev_sibling if bracket is not None else None
                if bracket is not None and before is not None and bracket.start_point.row > before.end_point.row:
                    raise self.fail(
                        bracket,
                        "a line break before `[` ends the type in TypeScript: end the statement before with a "
                        "semicolon, or keep `[` on the line of the type",
                    )
            stack.extend(part.children)

    def _non_null(self, node: Node) -> list[Node]:
        self.erase(node.children[-1])
        return node.children[:-1]

    def _unwrap(self, node: Node) -> list[Node]:
        """`<T>x` and `f<T>`: the type arguments go, the expression stays."""
        return node.children

    def _instantiation(self, node: Node) -> list[Node]:
        """`f<T>` alone: TypeScript reads `<...>` as comparisons when an operand follows, tree-sitter may not."""
        following = node
        while following.next_sibling is None and following.parent is not None:
            following = following.parent
        after = following.next_sibling
        while after is not None and after.type == "comment":
            after = after.next_sibling
        while after is not None and after.child_count:
            after = after.children[0]
        if after is not None and (
            after.type in ("<", ">", "+", "-")
            or (after.start_point.row == node.end_point.row and after.type not in _FOLLOW_TYPE_ARGUMENTS)
        ):
            raise self.fail(
                node.children[-1],
                "TypeScript reads these `<` and `>` as comparisons, not type arguments: add parentheses",
            )
        return node.children

    def _refused(self, node: Node) -> list[Node]:
        raise self.fail(node, _REFUSED[node.type])

    # -- checks after the walk --------------------------------------------------------------------------------------

    def _check_module_facts(self) -> None:
        for name, spec in self.type_imports.items():
            uses = self.value_names.get(name)
            if uses:
                line, column = _position(self.data, uses[0].start_byte)
                raise self.fail(spec, f"{_NO_IMPORTS}; `{name}` is used as a value at line {line}, column {column}")
        if self.default is None:
            raise HookCompileError(1, 1, _NO_DEFAULT_EXPORT)
        if self.default_named is not None:
            name_node = self.default_named.child_by_field_name("name")
            assert name_node is not None
            name = self.text(name_node)
            for use in self.value_names.get(name, []):
                if not self.default_named.start_byte <= use.start_byte < self.default_named.end_byte:
                    raise self.fail(
                        use,
                        f"`{name}` is the default export's own name and is only visible inside it once compiled: "
                        f"declare it without `export default` and add `export default {name};`",
                    )
        if self.default_alias is not None:
            self._check_alias(*self.default_alias)

    def _check_alias(self, statement: Node, local: Node) -> None:
        """`export { h as default }` is a live binding: it reads `h` at the end, a plain assignment reads it now."""
        name = self.text(local)
        declared_by, declared_at = self._top_level_declaration(name)
        if declared_by == "function":
            return
        if declared_by is None or declared_at > statement.start_byte:
            raise self.fail(
                local, f"declare `{name}` before `export {{ {name} as default }}`, or write `export default {name};`"
            )
        if declared_by in ("let", "var") and name in self.assigned:
            raise self.fail(local, f"`{name}` is reassigned: the default export must be a const or a function")

    def _top_level_declaration(self, name: str) -> tuple[str | None, int]:
        for statement in self.tree.root_node.named_children:
            node = statement
            if node.type == "export_statement":
                inner = node.child_by_field_name("declaration")
                if inner is None:
                    continue
                node = inner
            declared = node.child_by_field_name("name")
            if node.type in ("function_declaration", "generator_function_declaration"):
                if declared is not None and self.text(declared) == name:
                    return "function", node.start_byte
            elif node.type in ("class_declaration", "abstract_class_declaration"):
                if declared is not None and self.text(declared) == name:
                    return "class", node.start_byte
            elif node.type in ("lexical_declaration", "variable_declaration"):
                kind = node.children[0].type
                for declarator in node.named_children:
                    pattern = declarator.child_by_field_name("name")
                    if pattern is not None and name in self._bound_names(pattern):
                        return kind, node.start_byte
        return None, 0

    def _bound_names(self, pattern: Node) -> set[str]:
        names: set[str] = set()
        stack = [pattern]
        while stack:
            node = stack.pop()
            if node.type in ("identifier", "shorthand_property_identifier_pattern"):
                names.add(self.text(node))
            elif node.type == "pair_pattern":
                value = node.child_by_field_name("value")
                if value is not None:
                    stack.append(value)
            else:
                stack.extend(node.named_children)
        return names

    def _check_line_breaks(self, root: Node) -> None:
        """Refuse erasures that would put a line break where JavaScript forbids one (`return <T>` + newline + `x`)."""
        intervals = self._merged()
        starts = [start for start, _ in intervals]
        previous: Node | None = None
        first_erased: Node | None = None
        for leaf in _leaves(root):
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
                    or (
                        previous.type in _NO_LINE_BREAK_AFTER and first_erased.start_point.row == previous.end_point.row
                    )
                )
            ):
                where = f"after `{previous.type}`" if leaf.type != "=>" else "before `=>`"
                raise self.fail(
                    first_erased,
                    f"erasing this type would leave a line break {where}, which changes the meaning in JavaScript: "
                    "keep the code on one line",
                )
            previous, first_erased = leaf, None

    # -- output -----------------------------------------------------------------------------------------------------

    def _merged(self) -> list[tuple[int, int]]:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(self.erased):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

    def _render(self) -> str:
        edits: list[tuple[int, int, str | None]] = [(s, e, None) for s, e in self._merged()]
        edits.extend((start, end, text) for start, (end, text) in self.replaced.items())
        edits.sort()
        parts: list[str] = []
        position = 0
        for start, end, text in edits:
            if start < position:  # a replacement inside an erased span (or the reverse) cannot happen
                raise AssertionError("overlapping edits")  # pragma: no cover
            parts.append(self.data[position:start].decode("utf-8", "surrogatepass"))
            parts.append(text if text is not None else _blank(self.data[start:end].decode("utf-8", "surrogatepass")))
            position = end
        parts.append(self.data[position:].decode("utf-8", "surrogatepass"))
        return "".join(parts)

    def _verify(self, javascript: str) -> None:
        """Parse the output again: it must read exactly as the source minus its types, or the erasure changed it.

        This catches what the shape rules above do not name, such as a statement whose end was a type declaration
        that automatic semicolon insertion now joins to the next line.
        """
        data = javascript.encode("utf-8", "surrogatepass")
        tree = Parser(_LANGUAGE).parse(data)
        expected, where = self._shape(self.tree.root_node, source=True)
        actual, _ = self._shape(tree.root_node, source=False)
        if tree.root_node.has_error or expected != actual:
            index = next((i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b), len(actual))
            offset = where[min(index, len(where) - 1)]
            raise self.fail(
                offset,
                "erasing the types here changes how the code around it parses (automatic semicolon insertion): "
                "end the statement before with a semicolon",
            )
        self._check_html_comments(tree.root_node, data)

    def _shape(self, root: Node, *, source: bool) -> tuple[list[str], list[int]]:
        """The tree as a flat list of `(type` and `)` items, without comments and empty statements.

        For the source, the tree as erasure should leave it: erased nodes gone, `x as T` read as `x`, exports rewritten,
        and `await f<T>(x)`, which tree-sitter reads as `(await f)<T>(x)`, read as TypeScript does.
        """
        intervals = self._merged() if source else []
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
                if node.id in self.erased_statements:
                    continue
                if node.type in ("as_expression", "satisfies_expression", "non_null_expression"):
                    inner = substitutes.get(node.children[0].id, node.children[0])
                    stack.append((inner, inner.type, 0))
                    continue
                if node.type in ("type_assertion", "instantiation_expression"):
                    push_children(node)
                    continue
                exported = self.expected_exports.get(node.id)
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
                        stack.append((target, _DECLARATION_AS_EXPRESSION.get(target.type, target.type), 0))
                    stack.extend(
                        (None, item, at)
                        for item in (")", "(identifier", "(assignment_expression", "(expression_statement")
                    )
                    continue
                prefixes = self._misplaced_prefixes(node, substitutes)
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

    @staticmethod
    def _misplaced_prefixes(node: Node, substitutes: dict[int, Node]) -> list[Node]:
        """Prefix operators tree-sitter bound tighter than a generic call below `node`, outermost first."""
        if node.type not in _CALL_CHAIN:
            return []
        generic = False
        base = node
        while base.type in _CALL_CHAIN or base.type == "non_null_expression":
            generic = generic or bool(_children_of_type(base, "type_arguments"))
            base = substitutes.get(base.children[0].id, base.children[0])
        prefixes: list[Node] = []
        while generic and (
            base.type in ("await_expression", "unary_expression")
            or (base.type == "update_expression" and not base.children[0].is_named)
        ):
            prefixes.append(base)
            base = base.named_children[-1]
        return prefixes

    def _check_html_comments(self, root: Node, data: bytes) -> None:
        """`<!--` and a line-leading `-->` open comments in a script (not in a module): refuse them in code."""
        for marker in (b"<!--", b"-->"):
            start = data.find(marker)
            while start >= 0:
                line_start = max(data.rfind(b"\n", 0, start), data.rfind(b"\r", 0, start)) + 1
                if marker == b"<!--" or not data[line_start:start].strip():
                    node = root.descendant_for_byte_range(start, start + 1)
                    if node is not None and node.type not in _LITERAL_TOKENS:
                        raise self.fail(
                            start, f"`{marker.decode()}` starts a comment in a script: add spaces inside the operators"
                        )
                start = data.find(marker, start + 1)


_REFUSED = {
    "enum_declaration": "enum is not supported: it needs code generation; use a const object",
    "internal_module": "namespace is not supported: it needs code generation; use a const object or plain functions",
    "module": "module declarations are not supported: they need code generation; use plain functions",
    "decorator": "decorators are not supported: they need code generation",
    "import_alias": _NO_IMPORTS,
}

_HANDLERS = {
    "import_statement": _Eraser._import,
    "export_statement": _Eraser._export,
    "return_statement": _Eraser._return,
    "await_expression": _Eraser._await,
    "for_in_statement": _Eraser._for_in,
    "meta_property": _Eraser._meta_property,
    "import": _Eraser._dynamic_import,
    "abstract_class_declaration": _Eraser._abstract_class,
    "public_field_definition": _Eraser._field,
    "method_definition": _Eraser._method,
    "required_parameter": _Eraser._parameter,
    "optional_parameter": _Eraser._parameter,
    "variable_declarator": _Eraser._declarator,
    "assignment_expression": _Eraser._assignment,
    "augmented_assignment_expression": _Eraser._assignment,
    "update_expression": _Eraser._update,
    "arrow_function": _Eraser._arrow,
    "as_expression": _Eraser._type_cast,
    "satisfies_expression": _Eraser._type_cast,
    "non_null_expression": _Eraser._non_null,
    "type_assertion": _Eraser._unwrap,
    "instantiation_expression": _Eraser._instantiation,
    "enum_declaration": _Eraser._refused,
    "internal_module": _Eraser._refused,
    "module": _Eraser._refused,
    "decorator": _Eraser._refused,
    "import_alias": _Eraser._refused,
}
