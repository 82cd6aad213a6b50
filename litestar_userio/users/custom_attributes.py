"""Declared custom attributes: a project may declare names, types and constraints (DECISIONS 3).

Where a project declares none, any JSON value is stored as given.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from litestar_userio.errors import Cause
from litestar_userio.users.formats import is_country_code, is_e164, is_email, is_http_url

__all__ = ["CUSTOM_ATTRIBUTE_TYPES", "CustomAttributeSpec", "check_custom_attribute"]

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
