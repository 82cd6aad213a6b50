"""SCIM filters (RFC 7644 3.4.2.2) parsed by `scim2-filter-parser` and turned into conditions (`users/search.py`).

The library's lexer and LALR parser give an AST; we never use its SQL transpiler (it writes SQL text). What we do
about the library, and why (docs/scim.md#filters):

- its grammar gives `and` and `or` the same precedence, left to right (`a or b and c` parses as `(a or b) and c`);
  RFC 7644 binds `and` tighter. A chain of `and`/`or` without parentheses is flattened here and rebuilt with the
  RFC's precedence (parentheses are kept as the AST shows them);
- its string token keeps the text between the quotes as is: JSON escapes are decoded here, and a string holding a
  `"` cannot be written (400 `invalidFilter`);
- a string and a literal lose their kind (`"true"` and `true` are both `true`): the attribute's type decides;
- its number token is one digit: no attribute we filter is a number.

Bounds before parsing, so a hostile filter costs little: its length, the number of comparisons and the depth of
parentheses and brackets (`ScimConfig`). Every value becomes a bound parameter of the users repository's query.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scim2_filter_parser import ast
from scim2_filter_parser.lexer import SCIMLexer
from scim2_filter_parser.parser import SCIMParser, SCIMParserError

from litestar_userio.errors import ScimError
from litestar_userio.users.search import AllOf, AnyOf, Compare, Condition, Constant, Negation, Operator

__all__ = ["GROUP_ATTRIBUTES", "USER_ATTRIBUTES", "Attribute", "FilterLimits", "parse_filter"]

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"

_COMPARISONS = frozenset({"EQ", "NE", "CO", "SW", "EW", "GT", "GE", "LT", "LE", "PR"})
_OPENERS = frozenset({"LPAREN", "LBRACKET"})
_CLOSERS = frozenset({"RPAREN", "RBRACKET"})


@dataclass(frozen=True, slots=True)
class Attribute:
    """A filterable SCIM attribute: the field it compares, its type, and `caseExact` (RFC 7643 schema)."""

    field: str
    kind: str = "string"
    """`string`, `boolean`, `dateTime`, `work` (an email's type: always "work") or `primary` (always true)."""
    case_exact: bool = False
    login_id: str | None = None
    """The login-id attribute an `eq` value is normalized as (sign-in's rules), so it probes the unique index."""
    inverted: bool = False
    """`active` is `not disabled`."""


USER_ATTRIBUTES: dict[str, Attribute] = {
    "id": Attribute("id", case_exact=True),
    "username": Attribute("username", login_id="preferred_username"),
    "externalid": Attribute("external_id", case_exact=True),
    "emails": Attribute("email", login_id="email"),
    "emails.value": Attribute("email", login_id="email"),
    "emails.type": Attribute("email", kind="work"),
    "emails.primary": Attribute("email", kind="primary"),
    "phonenumbers": Attribute("phone_number", login_id="phone_number"),
    "phonenumbers.value": Attribute("phone_number", login_id="phone_number"),
    "name.givenname": Attribute("given_name"),
    "name.familyname": Attribute("family_name"),
    "name.middlename": Attribute("middle_name"),
    "displayname": Attribute("name"),
    "nickname": Attribute("nickname"),
    "locale": Attribute("locale"),
    "timezone": Attribute("zoneinfo"),
    "active": Attribute("disabled", kind="boolean", inverted=True),
    "meta.created": Attribute("created_at", kind="dateTime"),
    "meta.lastmodified": Attribute("updated_at", kind="dateTime"),
    "groups": Attribute("group_id", case_exact=True),
    "groups.value": Attribute("group_id", case_exact=True),
}
"""What a Users filter may name (lower case: attribute names are case-insensitive, RFC 7643 2.1)."""

GROUP_ATTRIBUTES: dict[str, Attribute] = {
    "id": Attribute("id", case_exact=True),
    "displayname": Attribute("name"),
    "externalid": Attribute("external_id", case_exact=True),
    "members": Attribute("member", case_exact=True),
    "members.value": Attribute("member", case_exact=True),
    "meta.created": Attribute("created_at", kind="dateTime"),
    "meta.lastmodified": Attribute("updated_at", kind="dateTime"),
}
"""What a Groups filter may name."""


@dataclass(frozen=True, slots=True)
class FilterLimits:
    """The bounds checked before a filter is parsed (`ScimConfig`)."""

    length: int = 16_384
    clauses: int = 200
    depth: int = 32


Normalize = Callable[[str, str], str]
"""(login-id attribute, value) -> the value normalized as sign-in does; raises ValueError when it cannot be one."""


def _invalid(message: str) -> ScimError:
    return ScimError("invalidFilter", message)


def parse_filter(
    text: str,
    attributes: dict[str, Attribute],
    schema: str,
    limits: FilterLimits,
    normalize: Normalize | None = None,
) -> Condition:
    """The condition of a SCIM filter over `attributes`; 400 `invalidFilter` for anything else."""
    if len(text) > limits.length:
        raise _invalid(f"the filter is longer than {limits.length} characters")
    try:
        tokens = list(SCIMLexer().tokenize(text))
    except ValueError as exc:
        raise _invalid(f"the filter cannot be read: {exc}") from None
    clauses = depth = deepest = 0
    for token in tokens:
        if token.type in _COMPARISONS:
            clauses += 1
        elif token.type in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif token.type in _CLOSERS:
            depth -= 1
    if clauses > limits.clauses:
        raise _invalid(f"the filter has more than {limits.clauses} comparisons")
    if deepest > limits.depth:
        raise _invalid(f"the filter nests deeper than {limits.depth}")
    if clauses == 0:
        raise _invalid("the filter has no comparison")
    try:
        tree = SCIMParser().parse(iter(tokens))
    except (SCIMParserError, ValueError, TypeError, AttributeError, IndexError) as exc:
        raise _invalid(f"the filter is not valid: {exc}") from None
    if tree is None:
        raise _invalid("the filter is not valid")
    if "\x00" in text or "\\u0000" in text:
        raise _invalid("the filter holds U+0000, which no stored value holds")
    return _Translator(attributes, schema, normalize).filter(tree, None)


class _Translator:
    def __init__(self, attributes: dict[str, Attribute], schema: str, normalize: Normalize | None) -> None:
        self.attributes = attributes
        self.schema = schema.lower()
        self.normalize = normalize

    def filter(self, node: Any, namespace: str | None) -> Condition:
        if isinstance(node, ast.AttrExpr):
            return self.comparison(node, namespace)
        if isinstance(node, ast.LogExpr):
            return self.chain(node, namespace)
        if not isinstance(node, ast.Filter):
            raise _invalid("the filter is not valid")
        if node.namespace is not None:  # a value path: emails[type eq "work" and value co "@x"]
            if namespace is not None:
                raise _invalid("a value path cannot hold another")
            inner = self.filter(node.expr, self.path_name(node.namespace, allow_sub=False))
        else:
            inner = self.filter(node.expr, namespace)
        return Negation(inner) if node.negated else inner

    def chain(self, node: Any, namespace: str | None) -> Condition:
        """An `and`/`or` chain without parentheses, rebuilt with `and` before `or` (RFC 7644 3.4.2.2)."""
        operands: list[Any] = []
        operators: list[str] = []
        todo: list[Any] = [node]
        while todo:  # left to right, without recursion: a chain may be long
            item = todo.pop()
            if isinstance(item, str):
                operators.append(item)
            elif isinstance(item, ast.LogExpr):
                todo += [item.expr2, item.op.lower(), item.expr1]
            elif _bare_chain(item):
                todo.append(item.expr)
            else:
                operands.append(item)
        groups: list[list[Condition]] = [[self.filter(operands[0], namespace)]]
        for operator, operand in zip(operators, operands[1:], strict=True):
            if operator == "or":
                groups.append([])
            groups[-1].append(self.filter(operand, namespace))
        ands: list[Condition] = [group[0] if len(group) == 1 else AllOf(tuple(group)) for group in groups]
        return ands[0] if len(ands) == 1 else AnyOf(tuple(ands))

    def path_name(self, path: Any, *, allow_sub: bool = True) -> str:
        if not isinstance(path, ast.AttrPath) or not isinstance(path.attr_name, str):
            raise _invalid("a value path is allowed only at the top of a comparison")
        if path.uri is not None and str(path.uri).lower() != self.schema:
            raise _invalid(f"the schema {path.uri} is not supported here")
        name = path.attr_name.lower()
        if path.sub_attr is not None:
            if not allow_sub:
                raise _invalid("a value path names an attribute without a sub-attribute")
            name += "." + str(path.sub_attr.value).lower()
        return name

    def comparison(self, node: Any, namespace: str | None) -> Condition:
        name = self.path_name(node.attr_path)
        if namespace is not None:
            name = f"{namespace}.{name}"
        attribute = self.attributes.get(name)
        if attribute is None:
            raise _invalid(f"filtering on {name} is not supported")
        op: Operator = str(node.value).lower()  # type: ignore[assignment]
        if op == "pr":
            return Constant(True) if attribute.kind in ("boolean",) else Compare(attribute.field, "pr")
        raw = node.comp_value.value if node.comp_value is not None else None
        value = _decode(str(raw))
        if attribute.kind in ("work", "primary"):
            wanted = "work" if attribute.kind == "work" else "true"
            if op not in ("eq", "ne"):
                raise _invalid(f"{name} supports eq, ne and pr")
            holds = (value.lower() if attribute.kind == "work" else value) == wanted
            present = Compare(attribute.field, "pr")
            if op == "eq":
                return present if holds else Constant(False)
            return Negation(present) if holds else Constant(True)
        if attribute.kind == "boolean":
            if value not in ("true", "false") or op not in ("eq", "ne"):
                raise _invalid(f"{name} is compared with eq or ne to true or false")
            flag = (value == "true") != attribute.inverted
            return Compare(attribute.field, op, flag)
        if attribute.kind == "dateTime":
            if op in ("co", "sw", "ew"):
                raise _invalid(f"{name} is a dateTime: eq, ne, gt, ge, lt, le or pr")
            try:
                moment = datetime.fromisoformat(value)
            except ValueError:
                raise _invalid(f"{name} is compared with an RFC 3339 dateTime") from None
            if moment.tzinfo is None:
                raise _invalid(f"{name} is compared with a dateTime with its offset")
            return Compare(attribute.field, op, moment)
        if op == "eq" and attribute.login_id is not None and self.normalize is not None:
            try:
                return Compare(attribute.field, "eq", self.normalize(attribute.login_id, value), case_exact=True)
            except ValueError:
                return Constant(False)  # no login id can be this value
        return Compare(attribute.field, op, value, case_exact=attribute.case_exact)


def _bare_chain(node: Any) -> bool:
    """A `Filter` the grammar wraps around an `and`/`or` written without parentheses."""
    return (
        isinstance(node, ast.Filter)
        and isinstance(node.expr, ast.LogExpr)
        and not node.negated
        and node.namespace is None
    )


def _decode(raw: str) -> str:
    """The string's JSON escapes decoded (the library keeps them as written)."""
    if "\\" not in raw:
        return raw
    try:
        decoded = str(json.loads(f'"{raw}"'))
    except ValueError:
        raise _invalid("the filter's string is not a valid JSON string") from None
    if "\x00" in decoded:
        raise _invalid("the filter holds U+0000, which no stored value holds")
    if not decoded.isascii():
        try:
            decoded.encode("utf-8")
        except UnicodeEncodeError:  # a `\ud800` without its pair: no text in UTF-8, nor a stored value (was a 500)
            raise _invalid("the filter holds a lone surrogate, which no stored value holds") from None
    return decoded
