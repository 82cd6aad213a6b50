"""Export columns: JSON pointers (RFC 6901), their field names, and which ones are allowed.

See docs/reference.md#export-columns.

A pointer must be one of the supported pointers, a `/custom_attributes/<name>`, one of the few extras we allow, or a
pointer inside one of those (`/roles/0`). Anything else is refused with the pointer named: the reference exports an
empty column instead, which hides typos.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = [
    "EXTRA_POINTERS",
    "SUPPORTED_POINTERS",
    "PointerError",
    "default_pointers",
    "derive_field_name",
    "parse_pointer",
    "resolve",
    "unsupported_reason",
]

SUPPORTED_POINTERS: tuple[str, ...] = (
    "/sub",
    "/preferred_username",
    "/email",
    "/phone_number",
    "/email_verified",
    "/phone_number_verified",
    "/name",
    "/given_name",
    "/middle_name",
    "/nickname",
    "/profile",
    "/picture",
    "/website",
    "/gender",
    "/birthdate",
    "/zoneinfo",
    "/locale",
    "/address/street_address",
    "/address/locality",
    "/address/region",
    "/address/postal_code",
    "/address/country",
    "/roles",
    "/groups",
    "/disabled",
    "/identities",
    "/mfa/emails",
    "/mfa/phone_numbers",
    "/mfa/totps",
    "/biometric_count",
    "/passkey_count",
)
"""The supported pointers in their order (docs/reference.md#export-columns): the default CSV columns."""

EXTRA_POINTERS: tuple[str, ...] = (
    "/family_name",
    "/address/formatted",
    "/created_at",
    "/updated_at",
    "/last_login_at",
    "/account_valid_from",
    "/account_valid_until",
)
"""Allowed beyond the reference's table (docs/reference.md#export-columns); the account valid period as the reference
exports it."""

_ALLOWED = {tuple(p.split("/")[1:]) for p in (*SUPPORTED_POINTERS, *EXTRA_POINTERS)}


class PointerError(ValueError):
    """A pointer that is not RFC 6901."""


def parse_pointer(pointer: str) -> list[str]:
    """The reference tokens of an RFC 6901 pointer (`~1` is `/`, `~0` is `~`)."""
    if not pointer.startswith("/"):
        raise PointerError("a JSON pointer starts with /")
    tokens = pointer[1:].split("/")
    for token in tokens:
        rest = token.replace("~0", "").replace("~1", "")
        if "~" in rest:
            raise PointerError("~ must be followed by 0 or 1")
    return [t.replace("~1", "/").replace("~0", "~") for t in tokens]


def unsupported_reason(tokens: list[str]) -> str | None:
    """Why the pointer's tokens name no exportable value, or None when they do."""
    if tokens[0] == "custom_attributes":
        return None if len(tokens) >= 2 and tokens[1] != "" else "name a custom attribute: /custom_attributes/<name>"
    for length in range(len(tokens), 0, -1):
        if tuple(tokens[:length]) in _ALLOWED:
            return None
    return "not a supported pointer"


def derive_field_name(tokens: list[str]) -> str:
    """The reference tokens joined with `.` (docs/reference.md#export-columns)."""
    return ".".join(tokens)


def default_pointers(custom_attribute_names: Iterable[str]) -> list[str]:
    """Without `csv.fields`: the supported pointers in order, then each declared custom attribute.

    See docs/reference.md#export-columns.
    """
    escaped = (n.replace("~", "~0").replace("/", "~1") for n in custom_attribute_names)
    return [*SUPPORTED_POINTERS, *(f"/custom_attributes/{n}" for n in escaped)]


_MISSING = object()


def resolve(document: Any, tokens: list[str]) -> Any:
    """The value at `tokens` in `document`, or None when any step is missing."""
    value = document
    for token in tokens:
        if isinstance(value, dict):
            value = value.get(token, _MISSING)
        elif isinstance(value, list) and token.isdigit() and (token == "0" or not token.startswith("0")):
            index = int(token)
            value = value[index] if index < len(value) else _MISSING
        else:
            return None
        if value is _MISSING:
            return None
    return value
