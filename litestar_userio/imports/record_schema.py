"""The JSON schema of one import record, per identifier, as the reference defines it (`userimport/model.go`).

`UserRecord` (msgspec) is the fast path that accepts exactly what this schema accepts; this schema runs
only for a record that failed, to report every cause at once (the reference's shapes, sorted by location)
instead of msgspec's first one. The identifier is required and may not be null; the other login ids and
the standard attributes may be null (removal on upsert, docs/reference.md#import-updates).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from litestar_userio.passwords.formats import MIGRATE_ON_SIGN_IN, PASSWORD_TYPES
from userio_core.attribute_formats import (
    ATTRIBUTE_FORMATS,
    KEY_PATTERN,
    STANDARD_STRING_ATTRIBUTES,
    describe_invisible,
    email_refusal,
    invisible_character,
)
from userio_core.ids import USER_ID_PATTERN

__all__ = ["FORMAT_CHECKS", "KEY_PATTERN", "format_error", "is_rfc3339", "parse_rfc3339", "record_validator"]

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def parse_rfc3339(value: str) -> datetime | None:
    """The instant of an RFC 3339 timestamp with a time zone, in UTC; None when it is none.

    The one parser of every timestamp a client gives (an import record, the admin API's create, PATCH and disable
    window). A timestamp whose instant lies outside what Python holds (`0001-01-01T00:00:00+01:00` is in year 0
    in UTC) is none: it cannot be compared or stored, and was a 500 where it was parsed without this.
    """
    if not _RFC3339.fullmatch(value):
        return None
    try:
        return datetime.fromisoformat(value.upper().replace("Z", "+00:00")).astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def is_rfc3339(value: str) -> bool:
    """An RFC 3339 timestamp with a time zone (`2006-01-02T03:04:05Z`, `...+08:00`) whose instant Python holds."""
    return parse_rfc3339(value) is not None


def _is_username_or_empty(value: str) -> bool:
    # An empty username is reported as minLength, as the reference does; not twice.
    return value == "" or ATTRIBUTE_FORMATS["preferred_username"][1](value)


FORMAT_CHECKS = {
    **{name: check for name, check in ATTRIBUTE_FORMATS.values()},
    "username": _is_username_or_empty,
    "date-time": is_rfc3339,
}
"""Format name -> check, for the formats a record uses."""

_FORMAT_ERRORS = {
    "email": "invalid email address",
    "phone": "not in E.164 format",
    "date-time": "date-time must be in rfc3339 format",
}


def format_error(format_name: str, value: str) -> str:
    """The `error` detail of a format cause (the reference's text where it has one)."""
    if format_name == "email" and value == "":
        return "invalid email address: mail: no address"
    if format_name == "email" and (reason := email_refusal(value)) is not None:
        # The reference says only "invalid email address"; the validator's sentence says why (issue 28).
        return reason if invisible_character(value) is not None else f"invalid email address: {reason}"
    if format_name == "username" and (char := invisible_character(value)) is not None:
        return f"contains {describe_invisible(char)}, a character that cannot be seen or typed"
    return _FORMAT_ERRORS.get(format_name, f"not a valid {format_name}")


def _checker() -> FormatChecker:
    checker = FormatChecker(formats=())
    for name, check in FORMAT_CHECKS.items():

        def run(value: object, name: str = name, check: Any = check) -> bool:
            if isinstance(value, str) and not check(value):
                raise ValueError(format_error(name, value))
            return True

        checker.checks(name, raises=ValueError)(run)
    return checker


_MIN_LENGTH = {"type": "string", "minLength": 1}
_NULLABLE_NON_EMPTY = {"type": ["string", "null"], "minLength": 1}


def _nullable(attribute: str) -> dict[str, Any]:
    if attribute in ATTRIBUTE_FORMATS:
        format_name = ATTRIBUTE_FORMATS[attribute][0]
        schema: dict[str, Any] = {"type": ["string", "null"], "format": format_name}
        if format_name == "username":
            schema["minLength"] = 1
        return schema
    return dict(_NULLABLE_NON_EMPTY)


def _password() -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        # `{"type": "migrate_on_sign_in"}` has no other member; every other type has a hash
        # (docs/reference.md#hooks-lazy-migration).
        "if": {"required": ["type"], "properties": {"type": {"const": MIGRATE_ON_SIGN_IN}}},
        "then": {"additionalProperties": False, "properties": {"type": True}},
        "else": {"required": ["type", "password_hash"]},
        "properties": {
            "type": {"type": "string", "enum": list(PASSWORD_TYPES)},
            "password_hash": _MIN_LENGTH,
            "expire_after": {"type": "string", "format": "date-time"},
            "salt": {"type": "string"},
            "salt_position": {"type": "string", "enum": ["prefix", "suffix"]},
            "signer_key": {"type": "string"},
            "salt_separator": {"type": "string"},
            "rounds": {"type": "integer"},
            "mem_cost": {"type": "integer"},
        },
    }


def _schema(identifier: str | None) -> dict[str, Any]:
    standard = STANDARD_STRING_ATTRIBUTES
    keys = {"type": "array", "items": {"type": "string", "pattern": f"^{KEY_PATTERN}\\Z"}}
    properties: dict[str, Any] = {
        "sub": {"type": "string", "pattern": USER_ID_PATTERN},
        "disabled": {"type": "boolean"},
        "account_valid_from": {"type": "string", "format": "date-time"},
        "account_valid_until": {"type": "string", "format": "date-time"},
        "temporarily_disabled_from": {"type": "string", "format": "date-time"},
        "temporarily_disabled_until": {"type": "string", "format": "date-time"},
        "email_verified": {"type": "boolean"},
        "phone_number_verified": {"type": "boolean"},
        **{attribute: _nullable(attribute) for attribute in standard},
        "address": {
            "type": ["object", "null"],
            "additionalProperties": False,
            "properties": {
                member: _NULLABLE_NON_EMPTY
                for member in ("formatted", "street_address", "locality", "region", "postal_code", "country")
            },
        },
        "custom_attributes": {"type": "object"},
        "roles": keys,
        "groups": keys,
        "password": _password(),
        "identities": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "provider_alias", "subject"],
                "properties": {
                    "type": {"type": "string", "enum": ["oauth"]},
                    "provider_alias": {"type": "string", "minLength": 1, "maxLength": 128},
                    "provider_type": {"type": "string", "minLength": 1, "maxLength": 128},
                    "subject": _MIN_LENGTH,
                    "claims": {"type": "object"},
                },
            },
        },
        "mfa": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "email": _nullable("email"),
                "phone_number": _nullable("phone_number"),
                "password": _password(),
                "totp": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["secret"],
                    "properties": {"secret": _MIN_LENGTH},
                },
            },
        },
    }
    for login_id in ("preferred_username", "email", "phone_number"):
        schema = _nullable(login_id)
        if login_id == identifier:
            schema["type"] = "string"
        properties[login_id] = schema
    required = [identifier] if identifier is not None else []
    return {"type": "object", "additionalProperties": False, "required": required, "properties": properties}


@cache
def record_validator(identifier: str | None) -> Draft202012Validator:
    """The validator of a record of an import whose identifier is `identifier`."""
    return Draft202012Validator(_schema(identifier), format_checker=_checker())
