"""Declared custom attributes: a project may declare names, types and constraints.

See docs/reference.md#import-records.

Where a project declares none, any JSON value is stored as given.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import msgspec

from litestar_userio.errors import Cause
from userio_core.attribute_formats import STANDARD_ATTRIBUTES, is_country_code, is_e164, is_email, is_http_url

__all__ = ["CUSTOM_ATTRIBUTE_TYPES", "CustomAttributeSpec", "check_custom_attribute", "declaration_problems"]

CustomAttributeType = Literal[
    "string", "number", "integer", "boolean", "enum", "phone_number", "email", "url", "country_code"
]
CUSTOM_ATTRIBUTE_TYPES: tuple[str, ...] = CustomAttributeType.__args__  # type: ignore[attr-defined]


class CustomAttributeSpec(msgspec.Struct, frozen=True):
    """A declared custom attribute."""

    name: str
    type: CustomAttributeType
    minimum: float | None = None
    maximum: float | None = None
    enum: tuple[str, ...] | None = None


_NAME = re.compile(r"[a-zA-Z0-9_]+")
_ENUM_VALUE = re.compile(r"[a-zA-Z0-9_]+")
_TAKEN_NAMES = frozenset(
    {"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "address", "updated_at"} | set(STANDARD_ATTRIBUTES)
)
"""JWT claims and standard attributes: the reference refuses a custom attribute of these names (a token's claims
and the user's attributes would collide)."""


def declaration_problems(spec: CustomAttributeSpec) -> list[str]:
    """What is wrong with a declaration, by the reference's rules (config `CustomAttributesAttributeConfig`)."""
    problems: list[str] = []
    if not _NAME.fullmatch(spec.name):
        problems.append(f"name {spec.name!r}: use letters, digits and '_' only")
    elif spec.name in _TAKEN_NAMES:
        problems.append(f"name {spec.name!r} is a standard attribute or JWT claim")
    if spec.type == "enum":
        values = spec.enum or ()
        if not values:
            problems.append("an enum needs its values (--enum, repeated)")
        bad = [v for v in values if not _ENUM_VALUE.fullmatch(v)]
        if bad:
            problems.append(f"enum values {bad!r}: use letters, digits and '_' only")
        if len(set(values)) != len(values):
            problems.append("enum values must be unique")
    elif spec.enum:
        problems.append(f"--enum applies to type enum, not {spec.type}")
    if spec.type in ("number", "integer"):
        bounds = [b for b in (spec.minimum, spec.maximum) if b is not None]
        if spec.type == "integer" and not all(float(b).is_integer() for b in bounds):
            problems.append("an integer's minimum and maximum must be whole numbers")
        if spec.minimum is not None and spec.maximum is not None and spec.minimum > spec.maximum:
            problems.append(f"minimum {spec.minimum:g} is above maximum {spec.maximum:g}")
    elif spec.minimum is not None or spec.maximum is not None:
        problems.append(f"--minimum and --maximum apply to types number and integer, not {spec.type}")
    return problems


_JSON_TYPE = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object"}
_FORMATS = {"phone_number": ("phone", is_e164), "email": ("email", is_email), "url": ("uri", is_http_url)}


def _json_type(value: Any) -> str:
    return "null" if value is None else _JSON_TYPE.get(type(value), "unknown")


def check_custom_attribute(spec: CustomAttributeSpec, value: Any) -> Cause | None:
    """Why `value` does not fit `spec`, or None when it does. Null is handled by the caller (removal)."""
    location = f"/custom_attributes/{spec.name.replace('~', '~0').replace('/', '~1')}"
    actual = _json_type(value)
    expected = {
        "number": ("integer", "number"),
        "integer": ("integer",),
        "boolean": ("boolean",),
    }.get(spec.type, ("string",))
    if spec.type == "integer" and isinstance(value, float) and value.is_integer():
        actual = "integer"
    if actual not in expected:
        return Cause(location, "type", {"expected": list(expected[-1:]), "actual": [actual]})
    if spec.type in {"number", "integer"}:
        if spec.minimum is not None and value < spec.minimum:
            return Cause(location, "minimum", {"minimum": spec.minimum, "actual": value})
        if spec.maximum is not None and value > spec.maximum:
            return Cause(location, "maximum", {"maximum": spec.maximum, "actual": value})
    elif spec.type == "enum":
        if spec.enum is not None and value not in spec.enum:
            return Cause(location, "enum", {"expected": list(spec.enum), "actual": value})
    elif spec.type == "country_code":
        if not is_country_code(value):
            return Cause(location, "format", {"format": "iso3166-1-alpha-2"})
    elif spec.type in _FORMATS:
        name, check = _FORMATS[spec.type]
        if not check(value):
            return Cause(location, "format", {"format": name})
    return None
