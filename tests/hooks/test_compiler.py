"""The hook compiler: TypeScript in, column-exact JavaScript out, refused shapes named with line and column.

Every valid corpus hook (tests/hooks/corpus and the ready hooks of plugins/) is compiled, checked for positions and
for leftover TypeScript, and run in V8 the way the runtime runs it; its answer must equal `<name>.expected.json`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tree_sitter_typescript
from py_mini_racer import MiniRacer
from tree_sitter import Language, Node, Parser

from litestar_userio.hooks.compiler import MAX_SOURCE_BYTES, CompiledHook, HookCompileError, compile_hook

CORPUS = Path(__file__).parent / "corpus"
PLUGINS = Path(__file__).parents[2] / "plugins"
# A migration plugin asks an old system through fetch: tests/tokens/test_password_migration.py saves and runs it.
HOOKS = sorted(CORPUS.glob("*.ts")) + sorted(
    p for p in PLUGINS.glob("*.ts") if not p.name.endswith(".d.ts") and not p.name.startswith("migrate-")
)

# The runtime's wrapper (DECISIONS 5): a script, one function scope per hook, the default export returned.
PREFIX = '(function(){"use strict";var __default__;'
SUFFIX = "\n;return __default__;})()"
RUN = "(async function (hook, eventJson) { return JSON.stringify(await hook(JSON.parse(eventJson))); })"
STACK = (
    "(async function (hook, eventJson) {"
    " try { await hook(JSON.parse(eventJson)); return 'no error'; } catch (err) { return String(err.stack); } })"
)

TS_ONLY = {
    "type_annotation",
    "type_arguments",
    "type_parameters",
    "interface_declaration",
    "type_alias_declaration",
    "ambient_declaration",
    "as_expression",
    "satisfies_expression",
    "non_null_expression",
    "type_assertion",
    "instantiation_expression",
    "abstract_class_declaration",
    "abstract_method_signature",
    "method_signature",
    "function_signature",
    "index_signature",
    "implements_clause",
    "accessibility_modifier",
    "override_modifier",
    "optional_parameter",
    "enum_declaration",
    "internal_module",
    "module",
    "decorator",
    "import_statement",
    "export_statement",
    "type_predicate_annotation",
    "asserts_annotation",
    "predefined_type",
    "generic_type",
}

_PARSER = Parser(Language(tree_sitter_typescript.language_typescript()))


@pytest.fixture(scope="module")
def v8() -> Iterator[MiniRacer]:
    ctx = MiniRacer()  # made by a sync fixture, outside any running event loop
    try:
        yield ctx
    finally:
        ctx.close()


def event_for(name: str) -> str:
    own = CORPUS / f"{name}.event.json"
    if own.exists():
        return own.read_text()
    return (CORPUS / "events" / ("id_token.json" if "id-token" in name else "jwt.json")).read_text()


def run_hook(v8: MiniRacer, javascript: str, event_json: str) -> Any:
    hook = v8.eval(PREFIX + javascript + SUFFIX)
    runner = v8.eval(RUN)
    return json.loads(runner(hook, event_json).get(timeout=5))


def utf16_units(text: str) -> list[bytes]:
    data = text.encode("utf-16-le")
    return [data[i : i + 2] for i in range(0, len(data), 2)]


def leaves(source: str) -> list[tuple[int, int, str, str]]:
    """(line, UTF-16 column, type, text) of every token, comments included."""
    data = source.encode()
    out: list[tuple[int, int, str, str]] = []
    stack: list[Node] = [_PARSER.parse(data).root_node]
    while stack:
        node = stack.pop()
        if node.child_count == 0 and node.end_byte > node.start_byte:
            line_start = data.rfind(b"\n", 0, node.start_byte) + 1
            column = len(data[line_start : node.start_byte].decode().encode("utf-16-le")) // 2
            out.append((node.start_point.row, column, node.type, data[node.start_byte : node.end_byte].decode()))
        stack.extend(reversed(node.children))
    return out


def node_types(source: str) -> tuple[set[str], bool]:
    tree = _PARSER.parse(source.encode())
    types: set[str] = set()
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        types.add(node.type)
        stack.extend(node.children)
    return types, tree.root_node.has_error


def rewritten_columns(source_line: str, output_line: str) -> set[int]:
    """UTF-16 columns where the output is neither the source character nor an erasing space."""
    src, out = utf16_units(source_line), utf16_units(output_line)
    assert len(src) == len(out)
    return {i for i, (a, b) in enumerate(zip(src, out, strict=True)) if a != b and b != " ".encode("utf-16-le")}


# -- the corpus -------------------------------------------------------------------------------------------------------


def test_corpus_is_large_enough() -> None:
    assert len(HOOKS) >= 40
    assert {p.name for p in HOOKS} >= {
        "add-user-attributes-to-jwt.ts",
        "add-custom-attributes-to-id-token.ts",
        "roles-to-claims.ts",
        "deny-disabled-or-unverified.ts",
    }


@pytest.mark.parametrize("path", HOOKS, ids=lambda p: p.stem)
def test_corpus_hook_keeps_every_line_and_column(path: Path) -> None:
    source = path.read_text()
    javascript = compile_hook(source).javascript

    source_lines, output_lines = source.split("\n"), javascript.split("\n")
    assert len(output_lines) == len(source_lines)
    rewritten: set[tuple[int, int]] = set()
    for row, (src, out) in enumerate(zip(source_lines, output_lines, strict=True)):
        columns = rewritten_columns(src, out)
        if columns:  # only the default export is rewritten, in place of `export ...`
            match = re.search(r"__default__ = (\w+;)?", out)
            assert match is not None, out
            start = len(out[: match.start()].encode("utf-16-le")) // 2
            assert src[match.start() :].startswith("export")
            assert columns <= set(range(start, start + len(match.group(0))))
            rewritten |= {(row, column) for column in columns}

    source_tokens = {(line, column, text) for line, column, _, text in leaves(source)}
    for line, column, kind, text in leaves(javascript):
        if (line, column) in rewritten:
            continue
        assert (line, column, text) in source_tokens, f"{kind} {text!r} moved from line {line + 1}, column {column + 1}"


@pytest.mark.parametrize("path", HOOKS, ids=lambda p: p.stem)
def test_corpus_hook_output_is_plain_javascript(path: Path) -> None:
    javascript = compile_hook(path.read_text()).javascript
    types, has_error = node_types(javascript)
    assert not has_error
    assert not types & TS_ONLY


@pytest.mark.parametrize("path", HOOKS, ids=lambda p: p.stem)
def test_corpus_hook_answers_as_expected(v8: MiniRacer, path: Path) -> None:
    expected = json.loads((CORPUS / f"{path.stem}.expected.json").read_text())
    javascript = compile_hook(path.read_text()).javascript
    assert run_hook(v8, javascript, event_for(path.stem)) == expected


# -- what is erased, exactly ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "javascript"),
    [
        ("let x: number = 1;", "let x         = 1;"),
        ("f<string>(x as any, y!);", "f        (x       , y );"),
        ("new Map<string, number>();", "new Map                ();"),
        ("const id = <T,>(x: T): T => x;", "const id =     (x   )    => x;"),
        ("function f(this: A, b?: B) {}", "function f(         b    ) {}"),
        ("x = y satisfies Z;", "x = y            ;"),
        ("x = <T>y;", "x =    y;"),
        ("let d!: string;", "let d         ;"),
        ("class A<T> extends B<T> implements C {}", "class A    extends B                 {}"),
        ("class A implements C, D {}", "class A                 {}"),
        ("abstract class A { abstract m(): void; }", "         class A {                   ; }"),
        (
            "class A { private readonly x?: number = 1; static y!: string; declare z: number; }",
            "class A {                  x          = 1; static y         ;                  ; }",
        ),
        ("class A { public override m?(): void {} }", "class A {                 m ()       {} }"),
        ("class A { m(a: string): void; m(a) {} }", "class A {                   ; m(a) {} }"),
        ("class A { [k: string]: unknown }", "class A {                      }"),
        ("function f(a: string): void;\nfunction f(a) {}", "                           ;\nfunction f(a) {}"),
        ("interface I {\n  a: string;\n}", "             \n            \n "),
        ("type T = string;", "               ;"),
        ("declare const D: number;", "                       ;"),
        ('import type { A } from "a";', "                          ;"),
        ('import { A } from "a";\nlet x: A;', "                     ;\nlet x   ;"),
        ('import { type A, B } from "a";\nlet x: A | B;', "                             ;\nlet x       ;"),
        ('import D, * as N from "a";\nlet x: D | N.T;', "                         ;\nlet x         ;"),
        ("export type { A };\nexport { b };", "                 ;\n            ;"),
        ("type T = number\n;[1].map(f);", "               \n;[1].map(f);"),
        ("if (c) type T = 1;", "if (c)           ;"),
        ("export const c = 1;", "       const c = 1;"),
        ("export function f() {}", "       function f() {}"),
        ("export interface I {}", "                     "),
        ("function g(): asserts x is string {}", "function g()                      {}"),
        ("function h(x): x is string {}", "function h(x)              {}"),
        ("catch_((e: unknown) => e);", "catch_((e         ) => e);"),
        ("const c = f<string>;", "const c = f        ;"),
        ("x = a as unknown as T;", "x = a                ;"),
        ("x = a ? b : c satisfies T;", "x = a ? b : c            ;"),
        ("x = (a + b as number) / 2;", "x = (a + b          ) / 2;"),
        ("x = `${a as string}` + 's as T';", "x = `${a          }` + 's as T';"),
        ("x = 1; // y as T\n/* <T>(x: T) */", "x = 1; // y as T\n/* <T>(x: T) */"),
        ("#!/usr/bin/env deno\nx = 1;", "                   \nx = 1;"),
    ],
)
def test_erasure_replaces_types_with_spaces(source: str, javascript: str) -> None:
    compiled = compile_hook(source + "\nexport default 0;").javascript
    assert compiled == javascript + "\n__default__ =  0;"


@pytest.mark.parametrize(
    ("source", "javascript"),
    [
        ("export default function (e) {}", "__default__ =  function (e) {}"),
        ("export default async function (e) {}", "__default__ =  async function (e) {}"),
        ("export default function named(e) {}", "__default__ =  function named(e) {}"),
        ("export default (e) => e;", "__default__ =  (e) => e;"),
        ("export default async (e: E) => e;", "__default__ =  async (e   ) => e;"),
        ("export default hook;\nfunction hook() {}", "__default__ =  hook;\nfunction hook() {}"),
        ("export default class {}", "__default__ =  class {}"),
        ("export default abstract class A {}", "__default__ =           class A {}"),
        ("const h = 1;\nexport { h as default };", "const h = 1;\n__default__ = h;        "),
        ("function h() {}\nexport {\n  h as default,\n};", "function h() {}\n        \n__default__=h; \n  "),
        ("export  default  1;", "__default__ =    1;"),
    ],
)
def test_default_export_becomes_an_assignment_in_place(source: str, javascript: str) -> None:
    assert compile_hook(source).javascript == javascript


def test_erased_astral_characters_keep_utf16_columns() -> None:
    source = 'const a: "👋" = "👋"; const b = 1;\nexport default a;'
    javascript = compile_hook(source).javascript
    assert javascript.split("\n")[0] == 'const a       = "👋"; const b = 1;'
    assert len(javascript.split("\n")[0].encode("utf-16-le")) == len(source.split("\n")[0].encode("utf-16-le"))


def test_line_endings_are_kept() -> None:
    source = "interface I {\r\n  a: string;\r\n}\r\nexport default (e: I) => e;\r\n"
    javascript = compile_hook(source).javascript
    assert javascript == "             \r\n            \r\n \r\n__default__ =  (e   ) => e;\r\n"


def test_compiled_hook_is_a_frozen_value() -> None:
    compiled = compile_hook("export default 1;")
    assert compiled == CompiledHook("__default__ =  1;")
    with pytest.raises(AttributeError):
        compiled.javascript = ""


def test_a_source_of_exactly_the_limit_compiles() -> None:
    head = "export default 1;\n//"
    source = head + "x" * (MAX_SOURCE_BYTES - len(head))
    assert len(source.encode()) == MAX_SOURCE_BYTES
    assert compile_hook(source).javascript.startswith("__default__ =  1;")


# -- what is refused --------------------------------------------------------------------------------------------------

DEFAULT = "\nexport default 0;"

REFUSED = [
    ("enum", "enum Colour { Red }" + DEFAULT, 1, 1, "enum is not supported: it needs code generation"),
    ("const enum", "const enum C { A }" + DEFAULT, 1, 1, "enum is not supported"),
    ("exported enum", "export enum C { A }" + DEFAULT, 1, 8, "enum is not supported"),
    ("namespace", "\nnamespace N { export const x = 1 }" + DEFAULT, 2, 1, "namespace is not supported"),
    ("module", "module M { export const x = 1 }" + DEFAULT, 1, 1, "module declarations are not supported"),
    (
        "parameter property",
        "class A {\n  constructor(private x: number) {}\n}" + DEFAULT,
        2,
        15,
        "constructor parameter properties are not supported",
    ),
    ("readonly parameter", "class A { constructor(readonly x) {} }" + DEFAULT, 1, 23, "parameter properties"),
    ("decorator", "@sealed\nclass A {}" + DEFAULT, 1, 1, "decorators are not supported"),
    ("member decorator", "class A {\n  @log m() {}\n}" + DEFAULT, 2, 3, "decorators are not supported"),
    (
        "value import",
        'import { helper } from "./helper.ts";\nexport default () => helper();',
        1,
        10,
        "imports are not supported: only types may be imported; `helper` is used as a value at line 2, column 22",
    ),
    (
        "mixed import with a value",
        'import { type A, b } from "x";\nexport default (e: A) => b;',
        1,
        18,
        "imports are not supported: only types may be imported; `b` is used as a value",
    ),
    ("default import used", 'import D from "x";\nexport default D;', 1, 8, "`D` is used as a value"),
    ("namespace import used", 'import * as N from "x";\nexport default N.f;', 1, 13, "`N` is used as a value"),
    ("side-effect import", 'import "./setup.ts";' + DEFAULT, 1, 1, "imports are not supported"),
    ("import require", 'import fs = require("fs");' + DEFAULT, 1, 1, "imports are not supported"),
    ("import alias", "export import A = B.C;" + DEFAULT, 1, 8, "imports are not supported"),
    ("dynamic import", 'export default async () => import("x");', 1, 28, "imports are not supported"),
    ("re-export", 'export { a } from "x";' + DEFAULT, 1, 1, "re-exports load modules"),
    ("star re-export", 'export * from "x";' + DEFAULT, 1, 1, "re-exports load modules"),
    ("import.meta", "export default () => import.meta.url;", 1, 22, "import.meta is not available"),
    ("export =", "export = 1;", 1, 1, "`export =` and `export as namespace` are not supported"),
    ("no default export", "export function handler(e) {}", 1, 1, "the hook must have a default export"),
    ("two default exports", "export default 1;\nexport default 2;", 2, 1, "more than one default export"),
    ("top-level await", "const c = await load();" + DEFAULT, 1, 11, "top-level await is not supported"),
    ("top-level for await", "for await (const x of xs) {}" + DEFAULT, 1, 1, "top-level await is not supported"),
    ("top-level return", "return 1;" + DEFAULT, 1, 1, "return outside a function"),
    ("syntax error", "export default function (e) {\n  return e +;\n}", 2, 13, "syntax error"),
    ("missing token", "export default function (e) {\n  if (e {}\n}", 2, 8, "syntax error: missing `)`"),
    ("unclosed", "export default function (e) {\n  return 1;\n", 3, 1, "the code ends too early"),
    (
        "as on a binary operand",
        "export default () => 1 + 1 as number / 2;",
        1,
        22,
        "`as` on an unparenthesised binary expression: erasing it could change the meaning; write (1 + 1) as",
    ),
    ("as on a binary initialiser", "const x = a ?? b as string;" + DEFAULT, 1, 11, "unparenthesised binary"),
    ("satisfies on a binary", "const x = a + b satisfies T;" + DEFAULT, 1, 11, "`satisfies` on an unparenthesised"),
    (
        "as then a call on the next line",
        "const x = y as Foo\n(async () => {})()" + DEFAULT,
        1,
        13,
        "the type after `as` ends the statement in TypeScript",
    ),
    ("as then an index on the next line", "const x = y as Foo\n[0]" + DEFAULT, 2, 1, "a line break before `[`"),
    ("as then an array on the next line", "const x = y as Foo\n[1, 2].map(f)" + DEFAULT, 2, 2, "syntax error"),
    ("satisfies then a call", "x = y satisfies T\n(z)" + DEFAULT, 1, 7, "the type after `satisfies`"),
    (
        "arrow type parameters over lines",
        "export default async <\n  T,\n>(e: T) => e;",
        1,
        22,
        "type parameters of an arrow function must stay on one line",
    ),
    (
        "line break after return",
        "function f(x) {\n  return <string>\n    x;\n}" + DEFAULT,
        2,
        10,
        "line break after `return`",
    ),
    (
        "line break before arrow",
        "const f = (a): string\n  => a;" + DEFAULT,
        2,
        3,
        "no line break before `=>`",
    ),
    (
        "erased statement joins two lines",
        "const a = b\ninterface X {}\n(c)" + DEFAULT,
        1,
        11,
        "automatic semicolon insertion",
    ),
    (
        "anonymous default function then a paren",
        "export default function (e) {}\n(1);",
        2,
        1,
        "start that line with `;`",
    ),
    ("named default function then a bracket", "export default function f(e) {}\n[1];", 2, 1, "start that line"),
    (
        "default function name used outside",
        "export default function hook(e) {}\nhook.x = 1;",
        2,
        1,
        "`hook` is the default export's own name",
    ),
    ("export as default before const", "export { h as default };\nconst h = 1;", 1, 10, "declare `h` before"),
    (
        "export as default of a reassigned let",
        "let h = 1;\nexport { h as default };\nh = 2;",
        2,
        10,
        "`h` is reassigned",
    ),
    (
        "field named get",
        "class A {\n  get: number\n  m() {}\n}" + DEFAULT,
        2,
        3,
        "end the field `get` with a semicolon",
    ),
    ("field named static", "class A { static: number\n m() {} }" + DEFAULT, 1, 11, "end the field `static`"),
    ("html comment", "const a = b <!--c;" + DEFAULT, 1, 13, "`<!--` starts a comment in a script"),
    ("reserved name", "const __default__ = 1;" + DEFAULT, 1, 7, "`__default__` is reserved"),
    ("reserved word as a name", "export\n\nexport default 1;", 1, 1, "`export` is a reserved word"),
    (
        "await outside an async function",
        "export default function (e) {\n  return await e;\n}",
        2,
        10,
        "only valid in async",
    ),
    (
        "return type before a line break and =>",
        "const f = (a: number)\n  : number => a;" + DEFAULT,
        2,
        3,
        "line break before `=>`",
    ),
    (
        "type arguments that TypeScript reads as comparisons",
        "export default (xs) => xs.map((n: number) => n <T>+ 1);",
        1,
        48,
        "reads these `<` and `>` as comparisons",
    ),
    ("export default on two lines", "export /*\n*/ default 1;", 1, 1, "write `export default` on one line"),
    ("class used as default via alias not declared", "export { h as default };", 1, 10, "declare `h` before"),
]


@pytest.mark.parametrize(("source", "line", "column", "message"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_shape_names_line_column_and_reason(source: str, line: int, column: int, message: str) -> None:
    with pytest.raises(HookCompileError) as caught:
        compile_hook(source)
    assert (caught.value.line, caught.value.column) == (line, column), caught.value.message
    assert message in caught.value.message
    assert str(caught.value).startswith(f"{line}:{column}: ")


def test_source_over_the_limit_is_refused() -> None:
    source = "export default 1;\n//" + "x" * MAX_SOURCE_BYTES
    with pytest.raises(HookCompileError) as caught:
        compile_hook(source)
    assert (caught.value.line, caught.value.column) == (1, 1)
    assert f"the limit is {MAX_SOURCE_BYTES} bytes" in caught.value.message


def test_lone_surrogate_is_refused_at_its_position() -> None:
    with pytest.raises(HookCompileError) as caught:
        compile_hook('export default 1;\nconst s = "\ud800";')
    assert (caught.value.line, caught.value.column) == (2, 12)


def test_refused_column_counts_utf16_units() -> None:
    with pytest.raises(HookCompileError) as caught:
        compile_hook('const s = "👋"; enum E { A }' + DEFAULT)
    assert (caught.value.line, caught.value.column) == (1, 17)


# -- runtime errors point at the TypeScript ---------------------------------------------------------------------------

THROWING = """\
import type { EventOIDCJWTPreCreate } from "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";
type Why = string;
export default async function (e: EventOIDCJWTPreCreate): Promise<never> {
  const why: Why = "boom" as Why; const err: Error = new Error(why as string);
  const attrs = e.payload.user.custom_attributes as unknown as { missing: { deeper: string } };
  if (e.seq === 1) return attrs.missing.deeper as never;
  throw err;
}
"""


def stack_position(v8: MiniRacer, javascript: str, event: dict[str, Any]) -> tuple[int, int]:
    hook = v8.eval(PREFIX + javascript + SUFFIX + "\n//# sourceURL=hook.ts")
    stack = v8.eval(STACK)(hook, json.dumps(event)).get(timeout=5)
    match = re.search(r"hook\.ts:(\d+):(\d+)", str(stack))
    assert match is not None, stack
    return int(match.group(1)), int(match.group(2))


def test_thrown_error_reports_the_typescript_line_and_column(v8: MiniRacer) -> None:
    javascript = compile_hook(THROWING).javascript
    line = THROWING.split("\n")[3]
    assert stack_position(v8, javascript, {"seq": 2, "payload": {"user": {}}}) == (4, line.index("new Error") + 1)


def test_type_error_reports_the_typescript_line_and_column(v8: MiniRacer) -> None:
    javascript = compile_hook(THROWING).javascript
    line = THROWING.split("\n")[5]
    position = stack_position(v8, javascript, {"seq": 1, "payload": {"user": {"custom_attributes": {}}}})
    assert position == (6, line.index("deeper") + 1)


def test_error_on_the_first_line_is_shifted_by_the_wrapper_only(v8: MiniRacer) -> None:
    source = "export default (e: unknown): never => { throw new Error(e as string); };"
    javascript = compile_hook(source).javascript
    assert stack_position(v8, javascript, {}) == (1, len(PREFIX) + source.index("new Error") + 1)


# -- the ready hooks of plugins/ --------------------------------------------------------------------------------------


def plugin(v8: MiniRacer, name: str, event: dict[str, Any]) -> Any:
    javascript = compile_hook((PLUGINS / name).read_text()).javascript
    return run_hook(v8, javascript, json.dumps(event))


def jwt_event(**user: Any) -> dict[str, Any]:
    event: dict[str, Any] = json.loads(event_for("jwt"))
    event["payload"]["user"].update(user)
    return event


def test_deny_hook_refuses_a_disabled_user(v8: MiniRacer) -> None:
    answer = plugin(v8, "deny-disabled-or-unverified.ts", jwt_event(is_disabled=True))
    assert answer == {"is_allowed": False, "title": "Account disabled", "reason": "This account is disabled."}


def test_deny_hook_refuses_an_unverified_email(v8: MiniRacer) -> None:
    answer = plugin(v8, "deny-disabled-or-unverified.ts", jwt_event(standard_attributes={"email": "a@example.com"}))
    assert answer["is_allowed"] is False
    assert answer["title"] == "Email not verified"
    assert "a@example.com" in answer["reason"]


def test_deny_hook_allows_a_user_without_email(v8: MiniRacer) -> None:
    answer = plugin(v8, "deny-disabled-or-unverified.ts", jwt_event(standard_attributes={"phone_number": "+1"}))
    assert answer == {"is_allowed": True}


def test_id_token_hook_sets_null_when_the_user_has_no_custom_attributes(v8: MiniRacer) -> None:
    event: dict[str, Any] = json.loads(event_for("id-token"))
    event["payload"]["user"]["custom_attributes"] = {}
    answer = plugin(v8, "add-custom-attributes-to-id-token.ts", event)
    payload = answer["mutations"]["id_token"]["payload"]
    assert payload["custom_attributes"] is None
    assert payload["sub"] == event["payload"]["id_token"]["payload"]["sub"]


def test_roles_hook_gives_empty_lists_when_the_user_has_none(v8: MiniRacer) -> None:
    event = jwt_event()
    del event["payload"]["user"]["roles"], event["payload"]["user"]["groups"]
    payload = plugin(v8, "roles-to-claims.ts", event)["mutations"]["jwt"]["payload"]
    assert (payload["roles"], payload["groups"]) == ([], [])
    assert payload["jti"] == event["payload"]["jwt"]["payload"]["jti"]


def test_hook_types_parse_as_typescript() -> None:
    types, has_error = node_types((PLUGINS / "hooks.d.ts").read_text())
    assert not has_error
    assert "interface_declaration" in types
