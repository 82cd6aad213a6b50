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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "COGNITO_HEADER",
    "SOURCES",
    "ConversionError",
    "Source",
    "SourceName",
    "auth0_record",
    "cognito_record",
]

SourceName = Literal["auth0", "cognito-csv"]

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


def _auth0_password(user: Mapping[str, Any]) -> str | None:
    """Auth0 hands hashes out in a support export: `passwordHash`, or `custom_password_hash` as in its import."""
    for key in ("password_hash", "passwordHash"):
        if (found := _bcrypt(user.get(key))) is not None:
            return found
    custom = user.get("custom_password_hash")
    if isinstance(custom, dict) and custom.get("algorithm") == "bcrypt":
        hash_value = custom.get("hash")
        if isinstance(hash_value, dict):
            return _bcrypt(hash_value.get("value"))
    return None


def _string_list(value: Any) -> list[str] | None:
    return list(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def auth0_record(user: Mapping[str, Any], *, upsert: bool = False) -> dict[str, Any]:
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
    password = _auth0_password(user)
    if password is not None:
        record["password"] = {"type": "bcrypt", "password_hash": password}
    return record


def _cognito_boolean(column: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise ConversionError(f"column {column!r} must be TRUE or FALSE, not {value!r}")


def cognito_record(row: Mapping[str, str], *, upsert: bool = False) -> dict[str, Any]:
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
    return record


SOURCES: Final[dict[str, Source]] = {
    "auth0": Source("auth0", "ndjson", auth0_record, ".ndjson"),
    "cognito-csv": Source("cognito-csv", "csv", cognito_record, ".csv"),
}
"""The `--from` choices."""
