"""Per-record validation: structure by msgspec, then formats, hashes and secrets.

See docs/reference.md#import-records and docs/reference.md#errors-import-records.

The POST checks only the request's top level; each record is checked here, in the job, so a bad record
fails alone. A failed record reports every cause, sorted by location, in the reference's shapes; its
message is the first cause's. Checks that are not about shape (a well-formed bcrypt hash, a TOTP secret in
base32, a cost limit) run after the causes and fail the record with their own reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from litestar_userio.causes import EXAMPLES, cause_from_msgspec, required_cause, schema_causes, sort_causes
from litestar_userio.config import PasswordHashBounds
from litestar_userio.errors import (
    Cause,
    InvalidBcryptHash,
    InvalidPasswordHash,
    InvalidTOTPSecret,
    UserIOError,
    ValidationFailed,
)
from litestar_userio.imports.import_schemas import (
    AddressInput,
    OAuthIdentityInput,
    PasswordInput,
    TOTPInput,
    UserRecord,
)
from litestar_userio.imports.record_schema import KEY_PATTERN, format_error, is_rfc3339, record_validator
from litestar_userio.passwords.formats import (
    DJANGO_BCRYPT_SHA256,
    MIGRATE_ON_SIGN_IN,
    PASSWORD_TYPES,
    HashError,
    HashPolicy,
    parse_password,
)
from litestar_userio.users.custom_attributes import CustomAttributeSpec, check_custom_attribute
from userio_core.attribute_formats import ATTRIBUTE_FORMATS, STANDARD_STRING_ATTRIBUTES, email_refusal
from userio_core.ids import RESERVED_USER_IDS, USER_ID_PATTERN, is_user_id

__all__ = [
    "REDACTED",
    "STANDARD_STRING_ATTRIBUTES",
    "ParsedRecord",
    "parse_record",
    "record_causes",
    "redact",
    "timestamp_causes",
]

REDACTED = "REDACTED"
_DEFAULT_BOUNDS = PasswordHashBounds()


_BCRYPT = re.compile(r"\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}")
_BASE32 = re.compile(r"[A-Z2-7]+")


class ParsedRecord(msgspec.Struct):
    """A record after validation: the typed record, or why it failed; plus the redacted echo."""

    echo: Any
    record: UserRecord | None
    error: UserIOError | None
    warnings: list[str]


def _redact_password(password: dict[str, Any]) -> dict[str, Any]:
    """Every member of a password object but `type` and `expire_after` (salts and Firebase's keys are secrets too)."""
    return {k: v if k in ("type", "expire_after") else REDACTED for k, v in password.items()}


def redact(raw: Any) -> Any:
    """The echo replaces every secret by `REDACTED` (password objects but their type, the TOTP secret).

    See docs/reference.md#import-outcomes-and-details.
    """
    if not isinstance(raw, dict):
        return raw
    echo = dict(raw)
    if isinstance(echo.get("password"), dict):
        echo["password"] = _redact_password(echo["password"])
    mfa = echo.get("mfa")
    if isinstance(mfa, dict):
        mfa = dict(mfa)
        if isinstance(mfa.get("password"), dict):
            mfa["password"] = _redact_password(mfa["password"])
        if isinstance(mfa.get("totp"), dict) and "secret" in mfa["totp"]:
            mfa["totp"] = {**mfa["totp"], "secret": REDACTED}
        echo["mfa"] = mfa
    return echo


_StringCheck = tuple[str, str, str | None, Callable[[str], bool] | None]
"""(attribute, location, format name, check)."""
_STRING_CHECKS: tuple[_StringCheck, ...] = tuple(
    (attribute, f"/{attribute}", *ATTRIBUTE_FORMATS.get(attribute, (None, None)))
    for attribute in ("preferred_username", "email", "phone_number", *STANDARD_STRING_ATTRIBUTES)
)
_ADDRESS_CHECKS: tuple[_StringCheck, ...] = tuple(
    (member, f"/address/{member}", None, None) for member in AddressInput.__struct_fields__
)
_KEY = re.compile(KEY_PATTERN)


def _string_cause(
    location: str, value: str, format_name: str | None, check: Callable[[str], bool] | None
) -> Cause | None:
    """The reference's rule: an empty value is `format` where the attribute has a format, else `minLength`."""
    if value == "" and (format_name is None or format_name == "username"):
        return Cause(location, "minLength", {"actual": 0, "expected": 1})
    if check is not None and not check(value):
        return Cause(location, "format", {"error": format_error(format_name or "", value), "format": format_name})
    return None


def timestamp_causes(location: str, value: str | UnsetType) -> list[Cause]:
    """The cause of a timestamp that `record_schema.parse_rfc3339` refuses (the one rule for every path)."""
    if isinstance(value, str) and not is_rfc3339(value):
        return [Cause(location, "format", {"error": format_error("date-time", value), "format": "date-time"})]
    return []


def _password_causes(location: str, password: PasswordInput | UnsetType) -> list[Cause]:
    if not isinstance(password, PasswordInput):
        return []
    causes = []
    if password.password_hash is UNSET and password.type != MIGRATE_ON_SIGN_IN:
        present = (f for f in password.__struct_fields__ if getattr(password, f) is not UNSET)
        causes.append(required_cause(location, present, ["password_hash", "type"]))
    if password.password_hash == "":
        causes.append(Cause(f"{location}/password_hash", "minLength", {"actual": 0, "expected": 1}))
    if password.type not in PASSWORD_TYPES:
        causes.append(Cause(f"{location}/type", "enum", {"actual": password.type, "expected": list(PASSWORD_TYPES)}))
    return causes + timestamp_causes(f"{location}/expire_after", password.expire_after)


_PROVIDER_MAX_LENGTH = 128
"""The longest provider alias or type (the column's length, as the record's JSON schema says)."""


def _identity_causes(identities: list[OAuthIdentityInput] | UnsetType) -> list[Cause]:
    """What the JSON schema refuses in `identities` that msgspec's types let through.

    See docs/reference.md#import-linked-identities.
    """
    causes: list[Cause] = []
    for i, identity in enumerate(identities or ()):
        location = f"/identities/{i}"
        if identity.type != "oauth":
            causes.append(Cause(f"{location}/type", "enum", {"actual": identity.type, "expected": ["oauth"]}))
        for member in ("provider_alias", "provider_type", "subject"):
            value = getattr(identity, member)
            if value == "":
                causes.append(Cause(f"{location}/{member}", "minLength", {"actual": 0, "expected": 1}))
            elif member != "subject" and isinstance(value, str) and len(value) > _PROVIDER_MAX_LENGTH:
                causes.append(
                    Cause(f"{location}/{member}", "maxLength", {"actual": len(value), "expected": _PROVIDER_MAX_LENGTH})
                )
    return causes


def _format_causes(record: UserRecord, identifier: str | None) -> list[Cause]:
    """Every cause of a record that decoded: formats, empty values, enums (structure is already right).

    `identifier` None: no member is required (an update of a user named otherwise, the admin API's PATCH).
    """
    causes: list[Cause] = []
    value = getattr(record, identifier) if identifier is not None else ""
    if value is UNSET:
        keys = sorted(f for f in record.__struct_fields__ if getattr(record, f) is not UNSET) or None
        causes.append(Cause("", "required", {"actual": keys, "expected": [identifier], "missing": [identifier]}))
    elif value is None:
        causes.append(Cause(f"/{identifier}", "type", {"actual": ["null"], "expected": ["string"]}))
    holders: list[tuple[object, tuple[_StringCheck, ...]]] = [(record, _STRING_CHECKS)]
    if isinstance(record.address, AddressInput):
        holders.append((record.address, _ADDRESS_CHECKS))
    for holder, checks in holders:
        for attribute, location, format_name, check in checks:
            value = getattr(holder, attribute)
            # Most values pass: only an empty or refused one pays for building its cause.
            if (
                value.__class__ is str
                and (value == "" or (check is not None and not check(value)))
                and (cause := _string_cause(location, value, format_name, check))
            ):
                causes.append(cause)
    if isinstance(record.sub, str) and not is_user_id(record.sub):
        causes.append(_sub_cause(record.sub))
    for field in ("roles", "groups"):
        for i, key in enumerate(getattr(record, field) or ()):
            if not _KEY.fullmatch(key):
                causes.append(Cause(f"/{field}/{i}", "pattern", {"pattern": KEY_PATTERN}))
    causes += timestamp_causes("/account_valid_from", record.account_valid_from)
    causes += timestamp_causes("/account_valid_until", record.account_valid_until)
    causes += timestamp_causes("/temporarily_disabled_from", record.temporarily_disabled_from)
    causes += timestamp_causes("/temporarily_disabled_until", record.temporarily_disabled_until)
    causes += _password_causes("/password", record.password)
    if record.identities is not UNSET:
        causes += _identity_causes(record.identities)
    if record.mfa is not UNSET:
        for attribute, location in (("email", "/mfa/email"), ("phone_number", "/mfa/phone_number")):
            value = getattr(record.mfa, attribute)
            if isinstance(value, str) and (cause := _string_cause(location, value, *ATTRIBUTE_FORMATS[attribute])):
                causes.append(cause)
        causes += _password_causes("/mfa/password", record.mfa.password)
        if isinstance(record.mfa.totp, TOTPInput) and record.mfa.totp.secret == "":
            causes.append(Cause("/mfa/totp/secret", "minLength", {"actual": 0, "expected": 1}))
    return causes


def _custom_attribute_causes(
    custom_attributes: Any, custom_schema: Mapping[str, CustomAttributeSpec] | None
) -> list[Cause]:
    causes: list[Cause] = []
    if custom_schema and isinstance(custom_attributes, dict):
        for name, value in custom_attributes.items():
            spec = custom_schema.get(name)
            if spec is not None and value is not None and (cause := check_custom_attribute(spec, value)):
                causes.append(cause)
    return causes


def record_causes(
    raw: Any, identifier: str | None, custom_schema: Mapping[str, CustomAttributeSpec] | None = None
) -> list[Cause]:
    """Every cause why a decoded JSON record is invalid, sorted by location (the slow, complete path)."""
    try:
        causes = schema_causes(record_validator(identifier), raw)
    except RecursionError:  # deeper than the schema walk can go: the caller reports msgspec's cause
        return []
    if isinstance(raw, dict):
        causes += _custom_attribute_causes(raw.get("custom_attributes"), custom_schema)
    return sort_causes(causes)


def _secret_error(record: UserRecord, policy: HashPolicy) -> UserIOError | None:
    """A non-empty hash or secret that is malformed or too costly (an empty one is a `minLength` cause).

    A hash of another format than bcrypt is replaced by its stored form (`passwords/formats.py`).
    """
    max_bcrypt_cost = policy.max_bcrypt_cost
    hashes = [("password", record.password)]
    if record.mfa is not UNSET:
        hashes.append(("mfa.password", record.mfa.password))
    for where, password in hashes:
        if not isinstance(password, PasswordInput):
            continue
        if password.type == MIGRATE_ON_SIGN_IN and where != "password":
            return InvalidPasswordHash(
                f"{where}.type {MIGRATE_ON_SIGN_IN} is for the primary password only (lazy migration at sign-in)",
                info={"location": "/" + where.replace(".", "/") + "/type"},
            )
        if not isinstance(password.password_hash, str) or password.type != "bcrypt":
            if error := _other_format(where, password, policy):
                return error
            continue
        if password.password_hash.startswith(DJANGO_BCRYPT_SHA256):
            if error := _other_format(where, password, policy):
                return error
            continue
        if not _BCRYPT.fullmatch(password.password_hash):
            return InvalidBcryptHash(
                f"{where}.password_hash is not a bcrypt hash: expected $2a$, $2b$ or $2y$, a cost from 04 to"
                f" {max_bcrypt_cost:02d} and 53 characters of the bcrypt alphabet, e.g. {EXAMPLES['password_hash']}"
            )
        if (cost := int(password.password_hash[4:6])) > max_bcrypt_cost:
            return _costly_hash(where, cost, max_bcrypt_cost)
    if record.mfa is not UNSET and isinstance(record.mfa.totp, TOTPInput):
        secret = record.mfa.totp.secret
        if not _BASE32.fullmatch(secret) or len(secret) % 8 in {1, 3, 6}:
            return InvalidTOTPSecret(
                f"mfa.totp.secret must be RFC 4648 base32 without padding (A-Z and 2-7), e.g. {EXAMPLES['secret']}"
            )
    return None


def _other_format(where: str, password: PasswordInput, policy: HashPolicy) -> InvalidPasswordHash | None:
    """Parse and bound the hash, naming the format expected or the bound; store its stored form.

    See docs/reference.md#passwords-formats.
    """
    obj = {f: v for f in password.__struct_fields__ if (v := getattr(password, f)) is not UNSET}
    try:
        parsed = parse_password(obj, policy)
    except HashError as exc:
        field = f"{where}.{exc.info.get('member', 'password_hash')}"
        location = "/" + field.replace(".", "/")
        return InvalidPasswordHash(f"{field} {exc.message}", info={"location": location, **exc.info})
    password.password_hash = parsed.stored
    return None


def _costly_hash(where: str, cost: int, max_bcrypt_cost: int) -> InvalidBcryptHash:
    """A hash whose cost would let one sign-in attempt pin a thread for seconds (`ImportConfig.max_bcrypt_cost`)."""
    location = "/" + where.replace(".", "/") + "/password_hash"
    return InvalidBcryptHash(
        f"{where}.password_hash has bcrypt cost {cost}, above this server's maximum of {max_bcrypt_cost}",
        info={"location": location, "cost": cost, "maximum": max_bcrypt_cost},
    )


_EMAIL_LOCATIONS = {"/email": ("email",), "/mfa/email": ("mfa", "email")}


def _without_special_use_refusals(causes: list[Cause], decoded: Any) -> list[Cause]:
    """The causes less an email's format cause that only its special-use domain gave (the project allows them)."""

    def value_at(path: tuple[str, ...]) -> Any:
        value = decoded
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return value

    def accepted(cause: Cause) -> bool:
        path = _EMAIL_LOCATIONS.get(cause.location)
        value = value_at(path) if path is not None and cause.kind == "format" else None
        return isinstance(value, str) and email_refusal(value, special_use_allowed=True) is None

    return [cause for cause in causes if not accepted(cause)]


def parse_record(
    raw: bytes,
    custom_schema: Mapping[str, CustomAttributeSpec] | None,
    passwords: HashPolicy | int = 14,
    identifier: str | None = "email",
    *,
    special_use_emails: bool = False,
) -> ParsedRecord:
    """Decode and validate one submitted record; never raises.

    msgspec decodes a good record fast; a record it refuses (it stops at the first problem) is checked again
    against the record's JSON schema, so its error lists every cause, sorted by location, as the reference
    reports them. A record that decodes has every format cause collected by `_format_causes`. `passwords` is the
    project's hash policy (an int: the bcrypt maximum, with the default bounds of the other formats).
    `special_use_emails` is the project's `allow_special_use_email_domains`: an email refused only for a
    special-use domain (`.test`, `.local`, ...) is accepted, on both paths.
    """
    policy = passwords if isinstance(passwords, HashPolicy) else HashPolicy(_DEFAULT_BOUNDS, passwords)
    decoded = msgspec.json.decode(raw)
    echo = redact(decoded)
    try:
        record = msgspec.json.decode(raw, type=UserRecord)
    except msgspec.ValidationError as exc:
        causes = record_causes(decoded, identifier, custom_schema) or [cause_from_msgspec(exc)]
        if special_use_emails:  # msgspec refused the structure, so a cause stays
            causes = _without_special_use_refusals(causes, decoded) or [cause_from_msgspec(exc)]
        return ParsedRecord(echo, None, ValidationFailed(causes), [])
    causes = _format_causes(record, identifier)
    if special_use_emails and causes:
        causes = _without_special_use_refusals(causes, decoded)
    if record.custom_attributes is not UNSET:
        causes += _custom_attribute_causes(record.custom_attributes, custom_schema)
    if causes:
        return ParsedRecord(echo, None, ValidationFailed(sort_causes(causes)), [])
    if error := _secret_error(record, policy):
        return ParsedRecord(echo, None, error, [])
    warnings: list[str] = []
    if custom_schema and record.custom_attributes is not UNSET:
        for name in record.custom_attributes:
            if name not in custom_schema:
                warnings.append(f"custom_attributes.{name} is not declared in the project, so it is ignored.")
    return ParsedRecord(echo, record, None, warnings)


def _sub_cause(sub: str) -> Cause:
    """Why `sub` is no user id: outside the grammar, or a word of the admin API's paths (`RESERVED_USER_IDS`)."""
    if sub in RESERVED_USER_IDS:
        return Cause(
            "/sub",
            "not",
            {"reserved": list(RESERVED_USER_IDS)},
            message=f"sub {sub!r} is a fixed path segment of the admin API (/users/{sub}), so it cannot be a user id:"
            f" choose another (reserved: {', '.join(RESERVED_USER_IDS)})",
        )
    return Cause("/sub", "pattern", {"pattern": USER_ID_PATTERN})
