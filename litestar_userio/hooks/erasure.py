"""Type erasure: one walk over the tree-sitter tree that blanks type syntax and refuses what needs code generation.

Each TypeScript-only node is erased (overwritten with spaces, line breaks kept) or refused with its position; the
facts needed afterwards (imports used only as types, the default export, assigned names) are collected on the way
for `checks`, and `verification` parses again what `render()` gives.
"""

from __future__ import annotations

from tree_sitter import Node, Parser

from litestar_userio.hooks.source import (
    DECLARATION_AS_EXPRESSION,
    LANGUAGE,
    NO_IMPORTS,
    HookCompileError,
    blank,
    children_of_type,
    position,
)

__all__ = ["Erasure"]

_DEFAULT = "__default__"

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


class Erasure:
    """One compilation: walks the tree once, collecting erasures, replacements and the facts `checks` looks at."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        parser = Parser(LANGUAGE)
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

    def fail(self, node: Node | int, message: str) -> HookCompileError:
        """The error to raise for `node` (or a byte offset), with its line and column."""
        offset = node if isinstance(node, int) else node.start_byte
        line, column = position(self.data, offset)
        return HookCompileError(line, column, message)

    def text(self, node: Node) -> str:
        """The source text of `node`."""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def erase(self, start: Node | int, end: Node | int | None = None) -> None:
        """Blank a node, or the span from `start` to `end` (nodes or byte offsets)."""
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
        blanked = blank(self.data[start:end].decode("utf-8", "surrogatepass"))
        for text in texts:
            at = blanked.find(" " * len(text))
            if at >= 0:
                self.replaced[start] = (end, blanked[:at] + text + blanked[at + len(text) :])
                return
        raise self.fail(node, message)

    def syntax_error(self, root: Node) -> None:
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

    def walk(self, root: Node) -> None:
        """Visit every node once, erasing and refusing as the handlers say."""
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
            raise self.fail(node, NO_IMPORTS)
        if not children_of_type(node, "type"):  # `import type ...` needs no look at its names
            for part in clause.named_children:
                if part.type == "identifier":
                    self.type_imports[self.text(part)] = part
                elif part.type == "namespace_import":
                    name = part.named_children[-1]
                    self.type_imports[self.text(name)] = name
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        if spec.type != "import_specifier" or children_of_type(spec, "type"):
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
        if node.child_by_field_name("source") is not None or children_of_type(node, "*", "namespace_export"):
            if children_of_type(node, "type") or self._only_type_specifiers(node):
                self.erase_statement(node)
                return []
            raise self.fail(node, NO_IMPORTS + " (re-exports load modules)")
        if children_of_type(node, "type"):  # `export type { A }`
            self.erase_statement(node)
            return []
        if children_of_type(node, "=", "as"):
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
            raise self.fail(declaration, NO_IMPORTS)
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
            named = target.type in DECLARATION_AS_EXPRESSION or target.type in ("function_expression", "class")
            if named and target.child_by_field_name("name") is not None:
                self.default_named = target
            return [target]
        if declaration is not None:
            self.erase(export)
            self.expected_exports[node.id] = ("declaration", declaration)
            return [declaration]
        clause = next(c for c in node.named_children if c.type == "export_clause")
        for spec in clause.named_children:
            if spec.type != "export_specifier" or children_of_type(spec, "type"):
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
        elif target.type in DECLARATION_AS_EXPRESSION:
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
        return all(children_of_type(spec, "type") for spec in specs)

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
        if not children_of_type(function, "async"):
            raise self.fail(node, "await is only valid in async functions")
        return node.children

    def _for_in(self, node: Node) -> list[Node]:
        if children_of_type(node, "await"):
            return self._await(node)
        return node.children

    def _meta_property(self, node: Node) -> list[Node]:
        if node.children[0].type == "import":
            raise self.fail(node, "import.meta is not available: the hook is a script, not a module")
        return []

    def _dynamic_import(self, node: Node) -> list[Node]:
        raise self.fail(node, NO_IMPORTS)

    # -- classes ----------------------------------------------------------------------------------------------------

    def _abstract_class(self, node: Node) -> list[Node]:
        for token in children_of_type(node, "abstract"):
            self.erase(token)
        return node.children

    def _field(self, node: Node) -> list[Node]:
        if children_of_type(node, "declare", "abstract"):
            self.erase(node)  # `declare x: T` and `abstract x: T` declare no field at run time
            return []
        for token in children_of_type(node, "readonly", "?", "!"):
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
        for token in children_of_type(node, "?"):
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
        for token in children_of_type(node, "?"):
            self.erase(token)
        return node.children

    def _declarator(self, node: Node) -> list[Node]:
        for token in children_of_type(node, "!"):
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

    # -- output -----------------------------------------------------------------------------------------------------

    def merged(self) -> list[tuple[int, int]]:
        """The erased spans, sorted and merged."""
        merged: list[tuple[int, int]] = []
        for start, end in sorted(self.erased):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

    def render(self) -> str:
        """The JavaScript: the source with every erased span blanked and every replacement written."""
        edits: list[tuple[int, int, str | None]] = [(s, e, None) for s, e in self.merged()]
        edits.extend((start, end, text) for start, (end, text) in self.replaced.items())
        edits.sort()
        parts: list[str] = []
        position = 0
        for start, end, text in edits:
            if start < position:  # a replacement inside an erased span (or the reverse) cannot happen
                raise AssertionError("overlapping edits")  # pragma: no cover
            parts.append(self.data[position:start].decode("utf-8", "surrogatepass"))
            parts.append(text if text is not None else blank(self.data[start:end].decode("utf-8", "surrogatepass")))
            position = end
        parts.append(self.data[position:].decode("utf-8", "surrogatepass"))
        return "".join(parts)


_REFUSED = {
    "enum_declaration": "enum is not supported: it needs code generation; use a const object",
    "internal_module": "namespace is not supported: it needs code generation; use a const object or plain functions",
    "module": "module declarations are not supported: they need code generation; use plain functions",
    "decorator": "decorators are not supported: they need code generation",
    "import_alias": NO_IMPORTS,
}

_HANDLERS = {
    "import_statement": Erasure._import,
    "export_statement": Erasure._export,
    "return_statement": Erasure._return,
    "await_expression": Erasure._await,
    "for_in_statement": Erasure._for_in,
    "meta_property": Erasure._meta_property,
    "import": Erasure._dynamic_import,
    "abstract_class_declaration": Erasure._abstract_class,
    "public_field_definition": Erasure._field,
    "method_definition": Erasure._method,
    "required_parameter": Erasure._parameter,
    "optional_parameter": Erasure._parameter,
    "variable_declarator": Erasure._declarator,
    "assignment_expression": Erasure._assignment,
    "augmented_assignment_expression": Erasure._assignment,
    "update_expression": Erasure._update,
    "arrow_function": Erasure._arrow,
    "as_expression": Erasure._type_cast,
    "satisfies_expression": Erasure._type_cast,
    "non_null_expression": Erasure._non_null,
    "type_assertion": Erasure._unwrap,
    "instantiation_expression": Erasure._instantiation,
    "enum_declaration": Erasure._refused,
    "internal_module": Erasure._refused,
    "module": Erasure._refused,
    "decorator": Erasure._refused,
    "import_alias": Erasure._refused,
}
