"""Per-record validation (DECISIONS 3): structure by msgspec, then formats, hashes and secrets.

The POST checks only the request's top level; each record is checked here, in the job, so a bad record
fails alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from litestar_userio.errors import Cause, InvalidBcryptHash, InvalidTOTPSecret, UserIOError, ValidationFailed
from litestar_userio.imports.schemas import AddressInput, UserRecord
from litestar_userio.users.custom_attributes import CustomAttributeSpec, check_custom_attribute
from litestar_userio.users.formats import ATTRIBUTE_FORMATS, is_e164, is_email

__all__ = [
    "REDACTED",
    "STANDARD_STRING_ATTRIBUTES",
    "ParsedRecord",
    "cause_from_msgspec",
    "parse_record",
    "redact",
]

REDACTED = "REDACTED"

STANDARD_STRING_ATTRIBUTES: tuple[str, ...] = (
    "name",
    "given_name",
    "family_name",
    "middle_name",
    "nickname",
    "profile",
    "picture",
    "website",
    "gender",
    "birthdate",
    "zoneinfo",
    "locale",
)
"""Standard attributes other than login ids and address (SPEC 2.2)."""

_BCRYPT = re.compile(r"\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}")
_BASE32 = re.compile(r"[A-Z2-7]+")
_KEY = re.compile(r"[a-zA-Z_][a-zA-Z0-9:_]{0,39}")
_MSGSPEC_ERROR = re.compile(r"(?P<message>.*?)(?: - at `(?P<path>[^`]*)`)?")
_PATH_TOKEN = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_TYPE_NAMES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "null": "null"}


class ParsedRecord(msgspec.Struct):
    """A record after validation: the typed record, or why it failed; plus the redacted echo."""

    echo: Any
    record: UserRecord | None
    error: UserIOError | None
    warnings: list[str]


def redact(raw: Any) -> Any:
    """SPEC 2.1: the echo replaces every secret by `REDACTED` (password hashes, the TOTP secret)."""
    if not isinstance(raw, dict):
        return raw
    echo = dict(raw)
    if isinstance(echo.get("password"), dict) and "password_hash" in echo["password"]:
        echo["password"] = {**echo["password"], "password_hash": REDACTED}
    mfa = echo.get("mfa")
    if isinstance(mfa, dict):
        mfa = dict(mfa)
        if isinstance(mfa.get("password"), dict) and "password_hash" in mfa["password"]:
            mfa["password"] = {**mfa["password"], "password_hash": REDACTED}
        if isinstance(mfa.get("totp"), dict) and "secret" in mfa["totp"]:
            mfa["totp"] = {**mfa["totp"], "secret": REDACTED}
        echo["mfa"] = mfa
    return echo


def _pointer(path: str | None) -> str:
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
    location = _pointer(path)
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


_STRING_CHECKS: tuple[tuple[str, str, str | None, Callable[[str], bool] | None], ...] = tuple(
    (attribute, f"/{attribute}", *ATTRIBUTE_FORMATS.get(attribute, (None, None)))
    for attribute in ("preferred_username", "email", "phone_number", *STANDARD_STRING_ATTRIBUTES)
)
_ADDRESS_CHECKS = tuple((member, f"/address/{member}", None, None) for member in AddressInput.__struct_fields__)


def _string_cause(
    location: str, value: str, format_name: str | None, check: Callable[[str], bool] | None
) -> Cause | None:
    if value == "":
        return Cause(location, "minLength", {"expected": 1, "actual": 0})
    if check is not None and not check(value):
        return Cause(location, "format", {"format": format_name})
    return None


def _format_causes(record: UserRecord, custom_schema: Mapping[str, CustomAttributeSpec] | None) -> list[Cause]:
    causes: list[Cause] = []

    def check_string(location: str, value: Any, format_name: str | None = None, check: Any = None) -> None:
        if isinstance(value, str) and (cause := _string_cause(location, value, format_name, check)):
            causes.append(cause)

    checks = _STRING_CHECKS + (_ADDRESS_CHECKS if isinstance(record.address, AddressInput) else ())
    for attribute, location, format_name, check in checks:
        holder = record.address if location.startswith("/address/") else record
        value = getattr(holder, attribute)
        if value.__class__ is str and (cause := _string_cause(location, value, format_name, check)):
            causes.append(cause)
    for field in ("roles", "groups"):
        for i, key in enumerate(getattr(record, field) or ()):
            if not _KEY.fullmatch(key):
                causes.append(Cause(f"/{field}/{i}", "pattern", {"pattern": _KEY.pattern}))
    if record.password:
        causes.extend(_password_type_causes("/password", record.password.type))
    if record.mfa is not UNSET:
        check_string("/mfa/email", record.mfa.email, "email", is_email)
        check_string("/mfa/phone_number", record.mfa.phone_number, "phone", is_e164)
        if record.mfa.password:
            causes.extend(_password_type_causes("/mfa/password", record.mfa.password.type))
    if custom_schema and record.custom_attributes is not UNSET:
        for name, value in record.custom_attributes.items():
            spec = custom_schema.get(name)
            if spec is not None and value is not None and (cause := check_custom_attribute(spec, value)):
                causes.append(cause)
    return causes


def _password_type_causes(location: str, password_type: str) -> list[Cause]:
    if password_type == "bcrypt":
        return []
    return [Cause(f"{location}/type", "enum", {"expected": ["bcrypt"], "actual": password_type})]


def _secret_error(record: UserRecord, max_bcrypt_cost: int) -> UserIOError | None:
    hashes = [("password", record.password)]
    if record.mfa is not UNSET:
        hashes.append(("mfa.password", record.mfa.password))
    for where, password in hashes:
        if password and not _BCRYPT.fullmatch(password.password_hash):
            return InvalidBcryptHash(
                f"{where}.password_hash is not a bcrypt hash ($2a$, $2b$ or $2y$, cost 4-{max_bcrypt_cost})"
            )
        if password and (cost := int(password.password_hash[4:6])) > max_bcrypt_cost:
            return _costly_hash(where, cost, max_bcrypt_cost)
    if record.mfa is not UNSET and record.mfa.totp:
        secret = record.mfa.totp.secret
        if not _BASE32.fullmatch(secret) or len(secret) % 8 in {1, 3, 6}:
            return InvalidTOTPSecret("mfa.totp.secret must be RFC 4648 base32 without padding")
    return None


def _costly_hash(where: str, cost: int, max_bcrypt_cost: int) -> InvalidBcryptHash:
    """A hash whose cost would let one sign-in attempt pin a thread for seconds (`ImportConfig.max_bcrypt_cost`)."""
    location = "/" + where.replace(".", "/") + "/password_hash"
    return InvalidBcryptHash(
        f"{where}.password_hash has bcrypt cost {cost}, above this server's maximum of {max_bcrypt_cost}",
        info={"location": location, "cost": cost, "maximum": max_bcrypt_cost},
    )


def parse_record(
    raw: bytes, custom_schema: Mapping[str, CustomAttributeSpec] | None, max_bcrypt_cost: int = 14
) -> ParsedRecord:
    """Decode and validate one submitted record; never raises."""
    echo = redact(msgspec.json.decode(raw))
    try:
        record = msgspec.json.decode(raw, type=UserRecord)
    except msgspec.ValidationError as exc:
        return ParsedRecord(echo, None, ValidationFailed([cause_from_msgspec(exc)], "invalid record"), [])
    if causes := _format_causes(record, custom_schema):
        return ParsedRecord(echo, None, ValidationFailed(causes, "invalid record"), [])
    if error := _secret_error(record, max_bcrypt_cost):
        return ParsedRecord(echo, None, error, [])
    warnings: list[str] = []
    if custom_schema and record.custom_attributes is not UNSET:
        for name in record.custom_attributes:
            if name not in custom_schema:
                warnings.append(f"custom_attributes.{name} is not declared in the project, so it is ignored.")
    return ParsedRecord(echo, record, None, warnings)
