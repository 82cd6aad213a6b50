"""Validation causes in the reference's JSON-schema shapes, and a sentence a person can act on for each.

The reference (Authgear) validates a record or request against a JSON schema and reports every failing
leaf, sorted by location: `required` lists every missing key (`expected`, `actual`, `missing`, sorted); an
unknown key is reported at its own location with an empty kind; `type` names JSON types (`integer` values
also count as `number`). `schema_causes` turns the `jsonschema` library's errors into those shapes;
`describe` writes the message each cause carries (the field, what is expected, an example).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

__all__ = [
    "EXAMPLES",
    "Cause",
    "cause_from_msgspec",
    "describe",
    "field_name",
    "json_types",
    "required_cause",
    "schema_causes",
    "sort_causes",
    "summarize",
]


class Cause(msgspec.Struct, omit_defaults=True):
    """One reason a value failed validation, in the reference's JSON-schema terms."""

    location: str
    """JSON pointer into the checked document (`/email`, `/address/country`)."""
    kind: str
    """`type`, `required`, `format`, `additionalProperties`, `enum`, `minLength`, ..."""
    details: dict[str, Any] = msgspec.field(default_factory=dict)
    message: str = ""
    """What is wrong and what is expected, with an example (filled in by `ValidationFailed` when empty)."""


def json_types(value: Any) -> list[str]:
    """The JSON types of a value, as the reference lists them (an integral number is `integer` and `number`)."""
    if value is None:
        return ["null"]
    if isinstance(value, bool):
        return ["boolean"]
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return ["integer", "number"]
    if isinstance(value, float):
        return ["number"]
    if isinstance(value, str):
        return ["string"]
    if isinstance(value, list):
        return ["array"]
    return ["object"]


def _pointer(path: Iterable[Any]) -> str:
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in path)


def _format_error(error: ValidationError) -> str:
    cause = error.cause
    return str(cause) if cause is not None and str(cause) else "invalid value"


def required_cause(location: str, present: Iterable[str], expected: Iterable[str]) -> Cause:
    """An object at `location` holds `present` keys and lacks some of `expected`; `actual` is null when empty."""
    keys = sorted(present)
    wanted = sorted(expected)
    return Cause(
        location,
        "required",
        {"actual": keys or None, "expected": wanted, "missing": [k for k in wanted if k not in keys]},
    )


def _leaf_causes(error: ValidationError) -> list[Cause]:
    location = _pointer(error.absolute_path)
    kind = str(error.validator)
    instance = error.instance
    value = error.validator_value
    if kind == "type":
        expected = [value] if isinstance(value, str) else list(value)
        return [Cause(location, "type", {"expected": sorted(expected), "actual": json_types(instance)})]
    if kind == "required":
        return [required_cause(location, instance if isinstance(instance, dict) else (), value)]
    if kind == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        return [
            Cause(
                f"{location}/{_pointer([k])[1:]}",
                "",
                message=f"{field_name(f'{location}/{_pointer([k])[1:]}')} is not an accepted key; expected one of"
                f" {', '.join(known)}",
            )
            for k in instance
            if k not in known
        ]
    if kind in {"minLength", "maxLength"}:
        return [Cause(location, kind, {"actual": len(instance), "expected": value})]
    if kind in {"minItems", "maxItems"}:
        return [Cause(location, kind, {"actual": len(instance), "expected": value})]
    if kind == "enum":
        return [Cause(location, "enum", {"actual": instance, "expected": list(value)})]
    if kind == "format":
        return [Cause(location, "format", {"error": _format_error(error), "format": value})]
    if kind == "pattern":
        return [Cause(location, "pattern", {"pattern": value.removeprefix("^").removesuffix("\\Z")})]
    return [Cause(location, kind, {"error": error.message})]


def sort_causes(causes: Iterable[Cause]) -> list[Cause]:
    """By location, as the reference sorts them; a stable sort keeps the order of causes at one location."""
    return sorted(causes, key=lambda c: c.location)


def schema_causes(validator: Validator, instance: Any) -> list[Cause]:
    """Every cause why `instance` fails the validator's schema, merged and sorted the reference's way."""
    causes: list[Cause] = []
    required: dict[str, Cause] = {}
    for error in validator.iter_errors(instance):
        for cause in _leaf_causes(error):
            if cause.kind == "required":  # the library reports one error per missing key: merge them
                if cause.location in required:
                    continue
                required[cause.location] = cause
            causes.append(cause)
    return sort_causes(causes)


EXAMPLES: dict[str, str] = {
    "email": "ada@example.com",
    "phone": "+14155550123",
    "username": "ada_lovelace",
    "birthdate": "1990-12-31",
    "timezone": "Europe/London",
    "bcp47": "en-GB",
    "uri": "https://example.com/ada",
    "date-time": "2006-01-02T03:04:05Z",
    "json-pointer": "/email",
    "iso3166-1-alpha-2": "GB",
    "password_hash": "$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy",
    "secret": "JBSWY3DPEHPK3PXP",
    "type": "bcrypt",
    "pointer": "/email",
    "format": "ndjson",
    "phone_number": "+14155550123",
    "preferred_username": "ada_lovelace",
    "zoneinfo": "Europe/London",
    "locale": "en-GB",
    "profile": "https://example.com/ada",
    "picture": "https://example.com/ada.png",
    "website": "https://example.com",
    "account_valid_from": "2006-01-02T03:04:05Z",
    "account_valid_until": "2007-01-02T03:04:05Z",
    "expire_after": "2006-01-02T03:04:05Z",
}
"""An example of a valid value, by format name or by the last token of the location."""

_FORMATS: dict[str, str] = {
    "email": "an email address",
    "phone": "a phone number in E.164 format (a + and the country code, digits only, no spaces)",
    "username": "1 to 255 characters without spaces, control, format or invisible (default-ignorable) characters",
    "birthdate": "a date YYYY-MM-DD (or 0000-MM-DD, --MM-DD, YYYY)",
    "timezone": "an IANA time zone name",
    "bcp47": "a canonical BCP 47 language tag",
    "uri": "an absolute http(s) URL",
    "date-time": "an RFC 3339 timestamp with a time zone",
    "json-pointer": "an RFC 6901 JSON pointer",
    "iso3166-1-alpha-2": "an ISO 3166-1 alpha-2 country code",
}

_TYPES: dict[str, str] = {
    "string": "a string",
    "boolean": "true or false",
    "object": "an object",
    "array": "an array",
    "integer": "an integer",
    "number": "a number",
    "null": "null",
}


def field_name(location: str) -> str:
    """`/mfa/totp/secret` -> `mfa.totp.secret`, `/roles/0` -> `roles[0]`; the root is `the record`."""
    if not location:
        return "the record"
    name = ""
    for token in location[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        name += f"[{token}]" if token.isdigit() else (f".{token}" if name else token)
    return name


def _example(location: str, format_name: str | None = None) -> str:
    last = location.rsplit("/", 1)[-1]
    example = EXAMPLES.get(format_name or "") or EXAMPLES.get(last)
    return f", e.g. {example}" if example else ""


def _join(items: Iterable[Any]) -> str:
    words = [str(i) for i in items]
    if len(words) < 2:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


_EMAIL_REASON = "invalid email address: "
"""The reference's `error` of an email cause; what follows it is email-validator's own sentence."""
_REFERENCE_EMPTY_EMAIL = "mail: no address"


def _format_reason(format_name: str, details: Mapping[str, Any]) -> str:
    """`. The part after the @-sign is ...`: the validator's reason why an address is refused (issue 28)."""
    error = str(details.get("error", ""))
    if format_name != "email" or not error.startswith(_EMAIL_REASON):
        return ""
    reason = error.removeprefix(_EMAIL_REASON)
    return f". {reason}" if reason and reason != _REFERENCE_EMPTY_EMAIL else ""


def describe(location: str, kind: str, details: Mapping[str, Any]) -> str:
    """One sentence: which field, what is wrong, what is expected, with an example where one helps."""
    try:
        return _describe(location, kind, details)
    except Exception:  # a message must never turn a validation error into a crash
        return f"{field_name(location)} is invalid ({kind or 'unknown key'})"


def _describe(location: str, kind: str, details: Mapping[str, Any]) -> str:
    field = field_name(location)
    if kind == "required":
        missing = [
            f"{m} ({_example(f'{location}/{m}')[2:]})" if _example(f"{location}/{m}") else str(m)
            for m in details.get("missing") or ()
        ]
        return f"{field} is missing {_join(missing)}"
    if kind == "":
        return f"{field} is not an accepted key; remove it or check its spelling"
    if kind == "type":
        expected = [t for t in details.get("expected", ()) if t != "null"] or ["null"]
        actual_types = list(details.get("actual", ()))
        actual = "a number" if "number" in actual_types else _TYPES.get(actual_types[0], "?") if actual_types else "?"
        example = _example(location) if "string" in expected else ""
        nullable = " or null" if "null" in details.get("expected", ()) and expected != ["null"] else ""
        return f"{field} must be {' or '.join(_TYPES.get(t, t) for t in expected)}{nullable}, not {actual}{example}"
    if kind == "format":
        format_name = str(details.get("format", ""))
        wanted = _FORMATS.get(format_name, f"a valid {format_name}")
        return f"{field} must be {wanted}{_example(location, format_name)}{_format_reason(format_name, details)}"
    if kind == "minLength":
        return f"{field} must not be empty{_example(location)}"
    if kind == "minItems":
        return f"{field} must have at least {details.get('expected')} item(s)"
    if kind == "enum" and not details.get("expected"):
        return f"{field}: {details.get('message', 'not one of the allowed values')}"
    if kind == "enum" and not details.get("expected"):
        return f"{field}: {details.get('message', 'not one of the allowed values')}"
    if kind == "enum":
        return f"{field} must be one of {_join(details.get('expected', ()))}, not {details.get('actual')!r}"
    if kind == "pattern":
        return f"{field} must match {details.get('pattern')}, e.g. admin"
    if kind in {"minimum", "maximum"}:
        bound = details.get(kind)
        return f"{field} must be {'at least' if kind == 'minimum' else 'at most'} {bound}"
    if kind == "pointer":
        return f"{field}: {details.get('error', 'unsupported pointer')}"
    if kind == "duplicateKey":
        return f"{field} appears more than once in the body; give {details.get('key', 'it')} once"
    if kind == "json":
        return f"the body is not valid JSON: {details.get('error', '')}"
    error = details.get("error") or details.get("message")
    return f"{field} is invalid{': ' + str(error) if error else ''}"


def summarize(causes: list[Cause]) -> str:
    """The message of a failed record or request: the first cause, and how many more there are."""
    if not causes:
        return "invalid value"
    first = causes[0].message or describe(causes[0].location, causes[0].kind, causes[0].details)
    more = len(causes) - 1
    return first if not more else f"{first} (and {more} more problem{'s' if more > 1 else ''})"


_MSGSPEC_ERROR = re.compile(r"(?P<message>.*?)(?: - at `(?P<path>[^`]*)`)?")
_PATH_TOKEN = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_TYPE_NAMES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "null": "null"}


def _msgspec_pointer(path: str | None) -> str:
    if not path:
        return ""
    tokens = [name or index for name, index in _PATH_TOKEN.findall(path.removeprefix("$"))]
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


def _type_names(text: str) -> list[str]:
    return [_TYPE_NAMES.get(t.strip(), t.strip()) for t in text.split("|")]


def cause_from_msgspec(error: msgspec.ValidationError) -> Cause:
    """Turn msgspec's message (`Expected `str`, got `int` - at `$.email``) into a JSON-schema-like cause."""
    match = _MSGSPEC_ERROR.fullmatch(str(error))
    message, path = (match["message"], match["path"]) if match else (str(error), None)
    location = _msgspec_pointer(path)
    if m := re.fullmatch(r"Expected `([^`]*)`, got `([^`]*)`", message):
        return Cause(location, "type", {"expected": _type_names(m[1]), "actual": _type_names(m[2])})
    if m := re.fullmatch(r"Object contains unknown field `([^`]*)`", message):
        return Cause(location, "additionalProperties", {"actual": [m[1]]})
    if m := re.fullmatch(r"Object missing required field `([^`]*)`", message):
        return Cause(location, "required", {"missing": [m[1]]})
    if m := re.fullmatch(r"Expected `array` of length >= (\d+)", message):
        return Cause(location, "minItems", {"expected": int(m[1])})
    if message.startswith("Invalid enum value"):
        return Cause(location, "enum", {"message": message})
    return Cause(location, "general", {"message": message})
