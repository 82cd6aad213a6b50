"""`--from`: turn another system's user export into SPEC 2.2 records.

Each converter keeps what our API accepts and drops the rest (timestamps, login counters, identities,
provider internals), so a converted record never fails for a key the server refuses. The choices, also in
docs/migration-guide.md:

- The old system's user id is kept in a custom attribute (`auth0_user_id`, `cognito_username`), so
  applications can map their own data to the new user ids.
- `false` for `email_verified`, `phone_number_verified` and `disabled` is sent only with `--upsert`: on an
  insert it is the default already and the server would warn on every record that it has no effect.
- Only bcrypt password hashes are carried over (SPEC 2.3); users with another kind of hash, and every MFA
  enrolment (neither system exports TOTP secrets), have to reset or re-enrol.
- Whatever a converter cannot carry (a non-bcrypt hash, a social identity, MFA, a passkey) is a warning on
  that record (`{"kind", "message"}` in the report, counted in the run's summary), never a silent drop.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

__all__ = [
    "CLERK_HEADER",
    "COGNITO_HEADER",
    "SOURCES",
    "SUPABASE_HEADER",
    "ConversionError",
    "Source",
    "SourceName",
    "Warnings",
    "auth0_record",
    "clerk_record",
    "cognito_record",
    "supabase_record",
    "userio_record",
]

SourceName = Literal["auth0", "cognito-csv", "supabase", "clerk", "userio"]
Warnings = list[dict[str, str]]
"""Where a converter notes what it could not carry: `{"kind": ..., "message": ...}` per item."""

_BCRYPT_PREFIXES: Final = ("$2a$", "$2b$", "$2y$")

_AUTH0_STRINGS: Final = {
    "email": "email",
    "username": "preferred_username",
    "phone_number": "phone_number",
    "name": "name",
    "given_name": "given_name",
    "family_name": "family_name",
    "nickname": "nickname",
    "picture": "picture",
    "locale": "locale",
}

COGNITO_HEADER: Final = (
    "name",
    "given_name",
    "family_name",
    "middle_name",
    "nickname",
    "preferred_username",
    "profile",
    "picture",
    "website",
    "email",
    "email_verified",
    "gender",
    "birthdate",
    "zoneinfo",
    "locale",
    "phone_number",
    "phone_number_verified",
    "address",
    "updated_at",
    "cognito:mfa_enabled",
    "cognito:username",
)
"""The columns of Cognito's user CSV (GetCSVHeader); `custom:*` columns follow."""

_COGNITO_STRINGS: Final = (
    "name",
    "given_name",
    "family_name",
    "middle_name",
    "nickname",
    "preferred_username",
    "profile",
    "picture",
    "website",
    "email",
    "gender",
    "birthdate",
    "zoneinfo",
    "locale",
    "phone_number",
)
_COGNITO_IGNORED: Final = frozenset({"updated_at", "cognito:mfa_enabled"})
"""Cognito's `updated_at` has no counterpart; its MFA enrolments cannot be exported (no TOTP secrets)."""


class ConversionError(ValueError):
    """A source record that cannot be converted (a malformed value); the CLI adds the line number."""


@dataclass(frozen=True, slots=True)
class Source:
    """A `--from` source: how its file is read and how one of its records becomes ours."""

    name: SourceName
    reads: Literal["ndjson", "csv"]
    convert: Callable[..., dict[str, Any]]
    failed_suffix: str
    """The failed file keeps the source's own format, so it can be resubmitted with the same `--from`."""


def _bcrypt(value: Any) -> str | None:
    return value if isinstance(value, str) and value.startswith(_BCRYPT_PREFIXES) else None


def _warn(warnings: Warnings | None, kind: str, message: str) -> None:
    if warnings is not None:
        warnings.append({"kind": kind, "message": message})


_NOT_BCRYPT = "password_not_carried"
_SOCIAL = "social_identity_not_carried"
_MFA = "mfa_not_carried"


def _hash_kind(value: str) -> str:
    if value.startswith("$"):
        return value.split("$")[1] or "unknown"
    return "unknown"


def _auth0_password(user: Mapping[str, Any], warnings: Warnings | None = None) -> str | None:
    """Auth0 hands hashes out in a support export: `passwordHash`, or `custom_password_hash` as in its import."""
    for key in ("password_hash", "passwordHash"):
        value = user.get(key)
        if (found := _bcrypt(value)) is not None:
            return found
        if isinstance(value, str) and value:
            _warn(
                warnings,
                _NOT_BCRYPT,
                f"{key} is a {_hash_kind(value)} hash, not bcrypt: not imported, the user must reset the password",
            )
    custom = user.get("custom_password_hash")
    if isinstance(custom, dict):
        algorithm = custom.get("algorithm")
        hash_value = custom.get("hash")
        if algorithm == "bcrypt" and isinstance(hash_value, dict) and _bcrypt(hash_value.get("value")):
            return _bcrypt(hash_value.get("value"))
        _warn(
            warnings,
            _NOT_BCRYPT,
            f"custom_password_hash uses {algorithm!r}, only bcrypt can be imported: the user must reset the password",
        )
    return None


def _auth0_identities(user: Mapping[str, Any], warnings: Warnings | None) -> None:
    identities = user.get("identities")
    if not isinstance(identities, list):
        return
    for identity in identities:
        if not isinstance(identity, dict):
            continue
        provider = identity.get("provider")
        if provider in (None, "auth0", "email", "sms"):
            continue
        _warn(
            warnings,
            _SOCIAL,
            f"{provider} identity {identity.get('user_id', '')} cannot be imported (social sign-in): "
            "the user signs in by email or phone and sets a password",
        )


def _string_list(value: Any) -> list[str] | None:
    return list(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def auth0_record(user: Mapping[str, Any], *, upsert: bool = False, warnings: Warnings | None = None) -> dict[str, Any]:
    """An Auth0 user (bulk user export ndjson, or the support password export) as an import record.

    `user_metadata` becomes `custom_attributes`; from `app_metadata` only roles are taken (`roles`, or
    `authorization.roles` / `authorization.groups` of the Authorization Extension); `blocked` becomes `disabled`.
    """
    record: dict[str, Any] = {}
    for source, target in _AUTH0_STRINGS.items():
        value = user.get(source)
        if value is not None:
            record[target] = value
    for source, target in (("email_verified", "email_verified"), ("phone_verified", "phone_number_verified")):
        value = user.get(source)
        if isinstance(value, bool) and (value or upsert):
            record[target] = value
    custom: dict[str, Any] = {}
    metadata = user.get("user_metadata")
    if isinstance(metadata, dict):
        custom.update(metadata)
    user_id = user.get("user_id")
    oid = user.get("_id")
    if user_id is None and isinstance(oid, dict) and isinstance(oid.get("$oid"), str):
        user_id = f"auth0|{oid['$oid']}"
    if isinstance(user_id, str):
        custom.setdefault("auth0_user_id", user_id)
    if custom:
        record["custom_attributes"] = custom
    app_metadata = user.get("app_metadata")
    if isinstance(app_metadata, dict):
        authorization = app_metadata.get("authorization")
        roles = _string_list(app_metadata.get("roles"))
        groups = None
        if isinstance(authorization, dict):
            roles = roles if roles is not None else _string_list(authorization.get("roles"))
            groups = _string_list(authorization.get("groups"))
        if roles is not None:
            record["roles"] = roles
        if groups is not None:
            record["groups"] = groups
    blocked = user.get("blocked")
    if isinstance(blocked, bool) and (blocked or upsert):
        record["disabled"] = blocked
    password = _auth0_password(user, warnings)
    if password is not None:
        record["password"] = {"type": "bcrypt", "password_hash": password}
    _auth0_identities(user, warnings)
    if user.get("multifactor"):
        _warn(warnings, _MFA, f"MFA enrolment {user['multifactor']} cannot be exported from Auth0: the user re-enrols")
    return record


def _cognito_boolean(column: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise ConversionError(f"column {column!r} must be TRUE or FALSE, not {value!r}")


def cognito_record(row: Mapping[str, str], *, upsert: bool = False, warnings: Warnings | None = None) -> dict[str, Any]:
    """A row of Cognito's user CSV as an import record; an empty cell means the attribute is absent.

    `address` (one string in Cognito) becomes `address.formatted`; `custom:<name>` (and `dev:custom:<name>`)
    columns become `custom_attributes.<name>` as strings (CSV carries no types); `cognito:username` is kept
    as `custom_attributes.cognito_username`.
    """
    record: dict[str, Any] = {}
    for column in _COGNITO_STRINGS:
        value = row.get(column, "")
        if value != "":
            record[column] = value
    for column in ("email_verified", "phone_number_verified"):
        value = row.get(column, "")
        if value != "":
            verified = _cognito_boolean(column, value)
            if verified or upsert:
                record[column] = verified
    address = row.get("address", "")
    if address != "":
        record["address"] = {"formatted": address}
    custom: dict[str, Any] = {}
    for column, value in row.items():
        if value == "" or column in _COGNITO_IGNORED:
            continue
        for prefix in ("custom:", "dev:custom:"):
            if column.startswith(prefix) and len(column) > len(prefix):
                custom[column[len(prefix) :]] = value
    username = row.get("cognito:username", "")
    if username != "":
        custom.setdefault("cognito_username", username)
    if custom:
        record["custom_attributes"] = custom
    _warn(warnings, _NOT_BCRYPT, "Cognito exports no password hashes: the user must reset the password")
    if row.get("cognito:mfa_enabled", "").strip().lower() == "true":
        _warn(warnings, _MFA, "Cognito exports no MFA secrets: the user re-enrols")
    return record


SUPABASE_HEADER: Final = (
    "instance_id",
    "id",
    "aud",
    "role",
    "email",
    "encrypted_password",
    "email_confirmed_at",
    "invited_at",
    "confirmation_token",
    "confirmation_sent_at",
    "recovery_token",
    "recovery_sent_at",
    "email_change_token_new",
    "email_change",
    "email_change_sent_at",
    "last_sign_in_at",
    "raw_app_meta_data",
    "raw_user_meta_data",
    "is_super_admin",
    "created_at",
    "updated_at",
    "phone",
    "phone_confirmed_at",
    "phone_change",
    "phone_change_token",
    "phone_change_sent_at",
    "confirmed_at",
    "email_change_token_current",
    "email_change_confirm_status",
    "banned_until",
    "reauthentication_token",
    "reauthentication_sent_at",
    "is_sso_user",
    "deleted_at",
    "is_anonymous",
)
"""The columns of `auth.users`, as `\\copy (select * from auth.users) to 'users.csv' csv header` writes them."""

_SUPABASE_META_SKIPPED: Final = frozenset(
    {"iss", "sub", "email", "email_verified", "phone_verified", "provider_id", "name", "full_name", "avatar_url"}
)
"""Keys an OAuth sign-in copies into `raw_user_meta_data`: provider echoes, not the app's data."""


def _json_cell(column: str, value: str) -> Any:
    if value == "":
        return None
    try:
        return json.loads(value)
    except ValueError as exc:
        raise ConversionError(f"column {column!r} must hold JSON, not {value[:40]!r}") from exc


def _postgres_time(value: str) -> datetime | None:
    """A timestamptz as psql writes it (`2024-01-02 03:04:05.123456+00`)."""
    if value == "":
        return None
    text = value.replace(" ", "T", 1)
    if len(text) >= 3 and text[-3] in "+-" and text[-2:].isdigit():
        text += ":00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def supabase_record(
    row: Mapping[str, str], *, upsert: bool = False, warnings: Warnings | None = None
) -> dict[str, Any]:
    """A row of Supabase's `auth.users` (CSV) as an import record.

    `phone` is stored without `+` and gets it back; confirmation times become `*_verified`; `encrypted_password`
    is bcrypt; `raw_user_meta_data` gives `name`/`full_name` and `avatar_url`, the rest (minus what an OAuth
    sign-in copies there) goes to `custom_attributes` with the Supabase user id as `supabase_user_id`; a
    `banned_until` in the future becomes `disabled`.
    """
    record: dict[str, Any] = {}
    if row.get("email"):
        record["email"] = row["email"]
        if row.get("email_confirmed_at") or upsert:
            record["email_verified"] = bool(row.get("email_confirmed_at"))
    phone = row.get("phone", "")
    if phone:
        record["phone_number"] = phone if phone.startswith("+") else f"+{phone}"
        if row.get("phone_confirmed_at") or upsert:
            record["phone_number_verified"] = bool(row.get("phone_confirmed_at"))
    metadata = _json_cell("raw_user_meta_data", row.get("raw_user_meta_data", "")) or {}
    if not isinstance(metadata, dict):
        raise ConversionError("column 'raw_user_meta_data' must hold a JSON object")
    name = metadata.get("full_name") or metadata.get("name")
    if isinstance(name, str) and name:
        record["name"] = name
    picture = metadata.get("avatar_url")
    if isinstance(picture, str) and picture:
        record["picture"] = picture
    custom = {k: v for k, v in metadata.items() if k not in _SUPABASE_META_SKIPPED}
    if row.get("id"):
        custom["supabase_user_id"] = row["id"]
    if custom:
        record["custom_attributes"] = custom
    password = row.get("encrypted_password", "")
    if _bcrypt(password):
        record["password"] = {"type": "bcrypt", "password_hash": password}
    elif password:
        _warn(warnings, _NOT_BCRYPT, f"encrypted_password is a {_hash_kind(password)} hash, not bcrypt: not imported")
    app_metadata = _json_cell("raw_app_meta_data", row.get("raw_app_meta_data", "")) or {}
    providers = app_metadata.get("providers") if isinstance(app_metadata, dict) else None
    for provider in providers if isinstance(providers, list) else []:
        if provider not in ("email", "phone"):
            _warn(
                warnings,
                _SOCIAL,
                f"{provider} identity cannot be imported (social sign-in): the user signs in by email or phone"
                " and sets a password",
            )
    if row.get("is_sso_user", "").lower() == "true":
        _warn(warnings, _SOCIAL, "SSO user: the SAML identity cannot be imported")
    banned = _postgres_time(row.get("banned_until", ""))
    if banned is not None and banned > datetime.now(UTC):
        record["disabled"] = True
    elif upsert:
        record["disabled"] = False
    if row.get("deleted_at"):
        _warn(warnings, "deleted_user", "deleted in Supabase (deleted_at is set): imported anyway, check it")
    return record


CLERK_HEADER: Final = (
    "id",
    "first_name",
    "last_name",
    "username",
    "primary_email_address",
    "primary_phone_number",
    "verified_email_addresses",
    "unverified_email_addresses",
    "verified_phone_numbers",
    "unverified_phone_numbers",
    "totp_secret",
    "password_digest",
    "password_hasher",
)
"""The columns of the CSV the Clerk dashboard exports (Settings -> Export users)."""


def _clerk_list(value: str) -> list[str]:
    return [item.strip() for item in value.replace("|", ",").split(",") if item.strip()]


def clerk_record(row: Mapping[str, str], *, upsert: bool = False, warnings: Warnings | None = None) -> dict[str, Any]:
    """A row of Clerk's user export CSV as an import record.

    The primary email and phone are the login ids (verified when listed among the verified ones); other
    addresses cannot be carried (one email per user here) and are warned about; a `bcrypt` `password_digest`
    is imported, another hasher is warned about; `totp_secret` becomes the TOTP second factor; the Clerk id
    is kept as `custom_attributes.clerk_user_id`.
    """
    record: dict[str, Any] = {}
    if row.get("username"):
        record["preferred_username"] = row["username"]
    email = row.get("primary_email_address", "")
    verified_emails = _clerk_list(row.get("verified_email_addresses", ""))
    if email:
        record["email"] = email
        if email in verified_emails or upsert:
            record["email_verified"] = email in verified_emails
    phone = row.get("primary_phone_number", "")
    verified_phones = _clerk_list(row.get("verified_phone_numbers", ""))
    if phone:
        record["phone_number"] = phone
        if phone in verified_phones or upsert:
            record["phone_number_verified"] = phone in verified_phones
    others = [e for e in verified_emails + _clerk_list(row.get("unverified_email_addresses", "")) if e != email] + [
        p for p in verified_phones + _clerk_list(row.get("unverified_phone_numbers", "")) if p != phone
    ]
    if others:
        _warn(warnings, "extra_login_id_not_carried", f"only the primary email and phone are imported, not {others}")
    first, last = row.get("first_name", ""), row.get("last_name", "")
    if first:
        record["given_name"] = first
    if last:
        record["family_name"] = last
    if first or last:
        record["name"] = f"{first} {last}".strip()
    digest, hasher = row.get("password_digest", ""), row.get("password_hasher", "")
    if digest and hasher == "bcrypt" and _bcrypt(digest):
        record["password"] = {"type": "bcrypt", "password_hash": digest}
    elif digest:
        _warn(warnings, _NOT_BCRYPT, f"password_hasher {hasher or 'unknown'!r} is not bcrypt: not imported")
    if row.get("totp_secret"):
        record["mfa"] = {"totp": {"secret": row["totp_secret"].strip().upper().rstrip("=")}}
    if row.get("id"):
        record["custom_attributes"] = {"clerk_user_id": row["id"]}
    return record


def userio_record(user: Mapping[str, Any], *, upsert: bool = False, warnings: Warnings | None = None) -> dict[str, Any]:
    """A line of our own ndjson export as an import record (users moving between projects or instances).

    Attributes, address, roles, groups, `disabled` and custom attributes are carried; the old user id is kept
    as `custom_attributes.userio_user_id`; the first TOTP, MFA email and MFA phone become the second factors.
    An export holds no password hashes (SPEC 2.6), so every user is warned about: they set a new password.
    """
    from litestar_userio.users.formats import STANDARD_ATTRIBUTES  # its validators cost every run 0.1 s to import

    record: dict[str, Any] = {}
    for name in STANDARD_ATTRIBUTES:
        value = user.get(name)
        if value is None or (value is False and not upsert):
            continue
        record[name] = value
    address = user.get("address")
    if isinstance(address, dict) and address:
        record["address"] = address
    for name in ("roles", "groups"):
        values = _string_list(user.get(name))
        if values:
            record[name] = values
    if user.get("disabled") is True or (upsert and user.get("disabled") is False):
        record["disabled"] = bool(user.get("disabled"))
    custom = dict(user.get("custom_attributes") or {})
    if isinstance(user.get("sub"), str):
        custom.setdefault("userio_user_id", user["sub"])
    if custom:
        record["custom_attributes"] = custom
    found = user.get("mfa")
    mfa_in: dict[str, Any] = found if isinstance(found, dict) else {}
    mfa: dict[str, Any] = {}
    emails, phones, totps = mfa_in.get("emails") or [], mfa_in.get("phone_numbers") or [], mfa_in.get("totps") or []
    if emails:
        mfa["email"] = emails[0]
    if phones:
        mfa["phone_number"] = phones[0]
    if totps and isinstance(totps[0], dict) and totps[0].get("secret"):
        mfa["totp"] = {"secret": totps[0]["secret"]}
    if len(emails) > 1 or len(phones) > 1 or len(totps) > 1:
        _warn(warnings, _MFA, "only the first MFA email, phone and TOTP of each kind are imported")
    if mfa:
        record["mfa"] = mfa
    _warn(warnings, _NOT_BCRYPT, "an export carries no password hashes: the user sets a new password")
    if user.get("passkey_count") or user.get("biometric_count"):
        _warn(warnings, _MFA, "passkeys and biometric enrolments cannot be moved: the user enrols them again")
    return record


SOURCES: Final[dict[str, Source]] = {
    "auth0": Source("auth0", "ndjson", auth0_record, ".ndjson"),
    "cognito-csv": Source("cognito-csv", "csv", cognito_record, ".csv"),
    "supabase": Source("supabase", "csv", supabase_record, ".csv"),
    "clerk": Source("clerk", "csv", clerk_record, ".csv"),
    "userio": Source("userio", "ndjson", userio_record, ".ndjson"),
}
"""The `--from` choices."""
