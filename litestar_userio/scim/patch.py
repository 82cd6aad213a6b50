"""PATCH (RFC 7644 3.5.2) applied to a resource's JSON, in the forms Okta and Microsoft Entra send.

The operations change the resource as the client sees it; the result is then written as a PUT would (the one write
path of `UserAdminService`). Accepted as sent: `"op": "Replace"` in any case, a value object without `path` (its
members may themselves be paths, `"name.givenName"`), a path with a schema URN, value filters
(`emails[type eq "work"].value`, `members[value eq "id"]`), booleans as the strings `"True"`/`"False"` (checked
where the attribute is read).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from scim2_filter_parser import ast
from scim2_filter_parser.lexer import SCIMLexer
from scim2_filter_parser.parser import SCIMParser, SCIMParserError

from litestar_userio.errors import ScimError

__all__ = ["MAX_OPERATIONS", "apply_patch"]

MAX_OPERATIONS = 1000
"""Most operations in one PATCH (400 `tooMany` beyond)."""

_PATH = re.compile(
    r"^(?:(?P<urn>urn:[A-Za-z0-9:._-]+):)?(?P<attr>[A-Za-z][\w$-]*)"
    r"(?:\[(?P<filter>.*)\])?(?:\.(?P<sub>[A-Za-z][\w$-]*))?$",
    re.DOTALL,
)
_READ_ONLY = frozenset({"id", "meta", "groups"})


def apply_patch(
    resource: dict[str, Any],
    body: Any,
    *,
    schema: str,
    multi_valued: frozenset[str],
    read_only: frozenset[str] = _READ_ONLY,
) -> dict[str, Any]:
    """The resource after the body's operations; 400 with `invalidSyntax`, `invalidPath`, `noTarget`, `mutability`.

    `multi_valued`: the resource's multi-valued attributes (lower case), `emails`, `members`, ...
    """
    if not isinstance(body, dict):
        raise ScimError("invalidSyntax", "the PATCH body must be a JSON object")
    operations = _member(body, "Operations")
    if not isinstance(operations, list) or not operations:
        raise ScimError("invalidSyntax", "Operations must be a non-empty array")
    if len(operations) > MAX_OPERATIONS:
        raise ScimError("tooMany", f"at most {MAX_OPERATIONS} operations in one PATCH")
    result = copy.deepcopy(resource)
    patcher = _Patcher(result, schema.lower(), multi_valued, read_only)
    for operation in operations:
        if not isinstance(operation, dict):
            raise ScimError("invalidSyntax", "each operation must be an object")
        op = _member(operation, "op")
        if not isinstance(op, str) or op.lower() not in ("add", "replace", "remove"):
            raise ScimError("invalidSyntax", "op must be add, replace or remove")
        path = _member(operation, "path")
        value = _member(operation, "value")
        op = op.lower()
        if path is None or path == "":
            if op == "remove":
                raise ScimError("noTarget", "remove needs a path")
            if not isinstance(value, dict):
                raise ScimError("invalidValue", f"{op} without a path needs an object value")
            for key, member in value.items():
                if key.lower() == "schemas":
                    continue
                patcher.apply(op, key, member)
        else:
            if not isinstance(path, str):
                raise ScimError("invalidPath", "path must be a string")
            if op != "remove" and "value" not in {k.lower() for k in operation}:
                raise ScimError("invalidValue", f"{op} needs a value")
            patcher.apply(op, path, value)
    return result


def _member(obj: dict[str, Any], name: str) -> Any:
    """A member by its case-insensitive name (`Operations`, `op`, `path`, `value`)."""
    for key, value in obj.items():
        if key.lower() == name.lower():
            return value
    return None


def _key(obj: dict[str, Any], name: str) -> str:
    """The key of `obj` spelled as `name` in any case; `name` when absent."""
    for key in obj:
        if key.lower() == name.lower():
            return key
    return name


class _Patcher:
    def __init__(
        self, resource: dict[str, Any], schema: str, multi_valued: frozenset[str], read_only: frozenset[str]
    ) -> None:
        self.resource = resource
        self.schema = schema
        self.multi_valued = multi_valued
        self.read_only = read_only

    def apply(self, op: str, path: str, value: Any) -> None:
        match = _PATH.match(path.strip())
        if match is None:
            raise ScimError("invalidPath", f"{path!r} is not a valid path")
        urn, attr, item_filter, sub = match["urn"], match["attr"], match["filter"], match["sub"]
        if urn is not None and urn.lower() != self.schema:
            raise ScimError("invalidPath", f"the schema of {path!r} is not supported")
        if attr.lower() in self.read_only:
            raise ScimError("mutability", f"{attr} is read-only")
        key = _key(self.resource, attr)
        multi = attr.lower() in self.multi_valued
        if item_filter is not None:
            if not multi:
                raise ScimError("invalidPath", f"{attr} is not multi-valued")
            self.filtered(op, key, item_filter, sub, value)
        elif sub is not None:
            self.sub_attribute(op, key, sub, value, multi)
        elif op == "remove":
            if value is not None and multi and isinstance(value, list):  # Entra: remove members by value
                wanted = {item.get("value") for item in value if isinstance(item, dict)}
                items = self.resource.get(key) or []
                self.resource[key] = [item for item in items if item.get("value") not in wanted]
            else:
                self.resource.pop(key, None)  # an attribute without a value: nothing to remove, 200
        elif multi and op == "add":
            values = value if isinstance(value, list) else [value]
            items = list(self.resource.get(key) or [])
            for item in values:
                if item not in items:
                    items.append(item)
            self.resource[key] = items
        elif op == "add" and isinstance(value, dict) and isinstance(self.resource.get(key), dict):
            self.resource[key] = {**self.resource[key], **value}
        else:
            self.resource[key] = value if not multi or isinstance(value, list) else [value]

    def sub_attribute(self, op: str, key: str, sub: str, value: Any, multi: bool) -> None:
        current = self.resource.get(key)
        if multi:
            items = list(current or [])
            if not items:
                if op == "remove":
                    return
                items = [{}]
            # no filter: the primary value, else the first (each of ours holds one)
            target = next((i for i in items if isinstance(i, dict) and i.get("primary") is True), items[0])
            if op == "remove":
                target.pop(_key(target, sub), None)
            else:
                target[_key(target, sub)] = value
            self.resource[key] = items
            return
        if current is None:
            if op == "remove":
                return
            current = {}
        if not isinstance(current, dict):
            raise ScimError("invalidPath", f"{key} has no sub-attributes")
        if op == "remove":
            current.pop(_key(current, sub), None)
        else:
            current[_key(current, sub)] = value
        self.resource[key] = current

    def filtered(self, op: str, key: str, item_filter: str, sub: str | None, value: Any) -> None:
        condition = _parse_item_filter(item_filter)
        items = [item for item in (self.resource.get(key) or []) if isinstance(item, dict)]
        matched = [item for item in items if _matches(condition, item)]
        if not matched:
            if op == "remove":
                raise ScimError("noTarget", f"no value of {key} matches [{item_filter}]")
            if op == "replace":
                raise ScimError("noTarget", f"no value of {key} matches [{item_filter}]")
            # add: a new value holding what the filter asks for (Entra adds `emails[type eq "work"].value`)
            new = _equalities(condition)
            if sub is not None:
                new[sub] = value
            elif isinstance(value, dict):
                new.update(value)
            items.append(new)
            self.resource[key] = items
            return
        if op == "remove":
            if sub is None:
                self.resource[key] = [item for item in items if item not in matched]
            else:
                for item in matched:
                    item.pop(_key(item, sub), None)
            return
        for item in matched:
            if sub is not None:
                item[_key(item, sub)] = value
            elif isinstance(value, dict):
                item.update(value)
            else:
                raise ScimError("invalidValue", f"a value of {key} is an object")
        self.resource[key] = items


def _parse_item_filter(text: str) -> Any:
    if len(text) > 4096:
        raise ScimError("invalidFilter", "the value filter is too long")
    try:
        tree = SCIMParser().parse(SCIMLexer().tokenize(text))
    except (SCIMParserError, ValueError, TypeError, AttributeError, IndexError) as exc:
        raise ScimError("invalidFilter", f"the value filter is not valid: {exc}") from None
    if tree is None:
        raise ScimError("invalidFilter", "the value filter is not valid")
    return tree


def _matches(node: Any, item: dict[str, Any], depth: int = 0) -> bool:
    """Whether a value of a multi-valued attribute matches a value filter (its sub-attributes, any case)."""
    if depth > 32:
        raise ScimError("invalidFilter", "the value filter nests too deep")
    if isinstance(node, ast.Filter):
        if node.namespace is not None:
            raise ScimError("invalidFilter", "a value filter cannot hold a value path")
        result = _matches(node.expr, item, depth + 1)
        return not result if node.negated else result
    if isinstance(node, ast.LogExpr):
        left = _matches(node.expr1, item, depth + 1)
        right = _matches(node.expr2, item, depth + 1)
        return (left and right) if node.op.lower() == "and" else (left or right)
    if isinstance(node, ast.AttrExpr):
        path = node.attr_path
        if not isinstance(path.attr_name, str) or path.sub_attr is not None:
            raise ScimError("invalidFilter", "a value filter compares sub-attributes")
        actual = item.get(_key(item, path.attr_name))
        op = str(node.value).lower()
        if op == "pr":
            return actual not in (None, "", [])
        wanted = str(node.comp_value.value)
        if isinstance(actual, bool):
            actual = "true" if actual else "false"
        if actual is None:
            return op == "ne"
        text = str(actual)
        exact = path.attr_name.lower() == "value"  # a member's or an id's value is exact; a type is not
        if not exact:
            text, wanted = text.lower(), wanted.lower()
        return {
            "eq": text == wanted,
            "ne": text != wanted,
            "co": wanted in text,
            "sw": text.startswith(wanted),
            "ew": text.endswith(wanted),
            "gt": text > wanted,
            "ge": text >= wanted,
            "lt": text < wanted,
            "le": text <= wanted,
        }[op]
    raise ScimError("invalidFilter", "the value filter is not valid")


def _equalities(node: Any) -> dict[str, Any]:
    """The `sub eq "v"` terms of an `and` filter: what a value added through it holds."""
    out: dict[str, Any] = {}
    if isinstance(node, ast.Filter) and not node.negated:
        return _equalities(node.expr)
    if isinstance(node, ast.LogExpr) and node.op.lower() == "and":
        return {**_equalities(node.expr1), **_equalities(node.expr2)}
    if isinstance(node, ast.AttrExpr) and str(node.value).lower() == "eq" and isinstance(node.attr_path.attr_name, str):
        raw = str(node.comp_value.value)
        out[node.attr_path.attr_name] = {"true": True, "false": False}.get(raw, raw)
    return out
