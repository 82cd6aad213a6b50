"""`--from`: turn another system's user export into import records (docs/reference.md#import-records).

Each converter keeps what our API accepts and drops the rest (timestamps, login counters, identities,
provider internals), so a converted record never fails for a key the server refuses. The choices, also in
docs/migration-guide.md:

- The old system's user id is kept as the user's `sub` where it is a valid user id
  (docs/reference.md#import-user-ids: `auth0|...`, Keycloak's UUIDs, Firebase's uids, Django's primary keys), so
  rows of the host's other tables that point at the user still do; one that is not is warned about
  (`id_not_kept`) and the user gets a new id; `--new-ids` gives every user a new id (`keep_old_id`). The id is
  also kept in a custom attribute (`auth0_user_id`, `cognito_username`, ...).
- `false` for `email_verified`, `phone_number_verified` and `disabled` is sent only with `--upsert`: on an
  insert it is the default already and the server would warn on every record that it has no effect.
- Every password hash a source gives is carried in its own format (docs/reference.md#passwords-formats: `bcrypt`,
  `argon2`, `pbkdf2`, `firebase_scrypt`, ...); a hash no format takes, and MFA a source cannot export, means a reset or
  re-enrolment.
- OAuth/OIDC identities (Google, Apple, an OIDC provider) become linked identities
  (docs/reference.md#import-linked-identities).
- Whatever a converter cannot carry (an unknown hash, a SAML identity, MFA, a passkey) is a warning on that
  record (`{"kind", "message"}` in the report, counted in the run's summary), and so is every member of the
  source record that is dropped (`dropped:<member>`, counted by name): never a silent drop.
"""

from __future__ import annotations

import base64
import csv
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final, Literal

from litestar_userio.ids import is_user_id

__all__ = [
    "CLERK_HEADER",
    "COGNITO_HEADER",
    "FIREBASE_CSV_HEADER",
    "SOURCES",
    "SOURCE_TITLES",
    "SUPABASE_HEADER",
    "ConversionError",
    "Source",
    "SourceName",
    "Warnings",
    "auth0_record",
    "clerk_record",
    "cognito_record",
    "django_record",
    "firebase_csv_record",
    "firebase_hash_config",
    "firebase_record",
    "guess_source",
    "hash_type",
    "keep_old_id",
    "keycloak_record",
    "kratos_record",
    "source_with",
    "supabase_record",
    "userio_record",
]

SourceName = Literal["auth0", "cognito-csv", "supabase", "clerk", "userio", "firebase", "keycloak", "django", "kratos"]
Warnings = list[dict[str, str]]
"""Where a converter notes what it could not carry: `{"kind": ..., "message": ...}` per item."""


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
    members: str | None = None
    """JSON sources: the member of a top-level object that holds the records (`{"users": [...]}`), if any; an
    array or ndjson of records is read too (a failed file is ndjson)."""
    csv_header: tuple[str, ...] | None = None
    """A headerless CSV the source also writes (Firebase), read with these columns by `convert_csv`."""
    convert_csv: Callable[..., dict[str, Any]] | None = None
    id_attribute: str | None = None
    """The custom attribute the converter keeps the old system's user id in (`auth0_user_id`): `keep_old_id` makes
    it the record's `sub` too."""
    id_name: str = "old id"
    """What the source calls that id, for messages (`Auth0 user_id`, `Firebase localId`, `Django pk`)."""
    keep_ids: bool = True
    """Whether the old id becomes `sub` (False with `--new-ids`: every user gets a new id)."""


_ID_NOT_KEPT = "id_not_kept"


def keep_old_id(source: Source, record: dict[str, Any], warnings: Warnings | None) -> bool:
    """Give a converted record the old system's id as `sub` where it is a valid user id; True when it did.

    One that is not (docs/reference.md#import-user-ids) is a warning on the record, and the server gives the user
    a new id; the id stays in its custom attribute either way.
    """
    if not source.keep_ids or source.id_attribute is None:
        return False
    custom = record.get("custom_attributes")
    old = custom.get(source.id_attribute) if isinstance(custom, dict) else None
    if old is None or isinstance(old, bool) or not isinstance(old, str | int):
        return False
    text = str(old)
    if not is_user_id(text):
        _warn(
            warnings,
            _ID_NOT_KEPT,
            f"the {source.id_name} {text[:140]!r} is not a valid user id (1-128 of A-Za-z0-9._:|@-, starting with a"
            f" letter or digit): the user gets a new id; the old one stays in custom_attributes.{source.id_attribute}",
        )
        return False
    record["sub"] = text
    return True


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


_AUTH0_DIGESTS: Final = frozenset({"md5", "sha1", "sha256", "sha512"})


def _auth0_salt(salt: Mapping[str, Any]) -> str | None:
    """An Auth0 `salt.value` as the text the import salts with (its UTF-8 bytes), or None when it is not text."""
    value, encoding = salt.get("value"), salt.get("encoding", "utf8")
    if not isinstance(value, str):
        return None
    try:
        if encoding in ("hex", "base64"):
            raw = bytes.fromhex(value) if encoding == "hex" else base64.b64decode(value, validate=True)
            return raw.decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return value if encoding == "utf8" else None


def _auth0_custom_hash(custom: Mapping[str, Any]) -> dict[str, Any] | str:
    """Auth0's `custom_password_hash` (its import shape) as a password object, or why it cannot be carried."""
    algorithm = custom.get("algorithm")
    hash_object = custom.get("hash") if isinstance(custom.get("hash"), dict) else {}
    assert isinstance(hash_object, dict)
    value = hash_object.get("value")
    if not isinstance(value, str) or not value:
        return "it has no hash.value"
    password_object = custom.get("password")
    if isinstance(password_object, dict) and password_object.get("encoding", "utf8") != "utf8":
        return f"password.encoding {password_object['encoding']!r}: only UTF-8 passwords are verified here"
    if algorithm in ("bcrypt", "argon2", "pbkdf2", "ldap"):
        type_ = hash_type(value)
        if type_ == algorithm:
            return {"type": type_, "password_hash": value}
        return f"hash.value is not a {algorithm} string"
    if algorithm in _AUTH0_DIGESTS:
        if hash_object.get("encoding", "hex") not in ("hex", "base64"):
            return f"hash.encoding {hash_object.get('encoding')!r} is neither hex nor base64"
        password: dict[str, Any] = {"type": algorithm, "password_hash": value}
        salt = custom.get("salt")
        if isinstance(salt, dict):
            text = _auth0_salt(salt)
            if text is None:
                return f"salt.encoding {salt.get('encoding')!r}: the salt is not UTF-8 text, which the import uses"
            password["salt"] = text
            password["salt_position"] = "prefix" if salt.get("position") == "prefix" else "suffix"
        return password
    if algorithm == "hmac":
        return "an HMAC keyed hash has no import format (the key would have to be kept to verify it)"
    return f"its algorithm {algorithm!r} has no import format"


def _auth0_password(user: Mapping[str, Any], warnings: Warnings | None = None) -> dict[str, Any] | None:
    """Auth0 hands hashes out in a support export: `passwordHash`, or `custom_password_hash` as in its import."""
    for key in ("password_hash", "passwordHash"):
        if (password := _password(user.get(key), warnings, key)) is not None:
            return password
    custom = user.get("custom_password_hash")
    if isinstance(custom, dict):
        converted = _auth0_custom_hash(custom)
        if isinstance(converted, dict):
            return converted
        algorithm = custom.get("algorithm")
        _warn(
            warnings,
            f"{_NOT_BCRYPT}:{algorithm if isinstance(algorithm, str) else 'unknown'}",
            f"custom_password_hash not imported ({converted}): the user must reset it",
        )
    return None


_AUTH0_ALIASES: Final = {"google-oauth2": "google", "windowslive": "microsoft"}
_AUTH0_NOT_OAUTH: Final = frozenset({"samlp", "adfs", "pingfederate", "ad", "auth0-adldap"})
_AUTH0_KNOWN: Final = frozenset(
    {
        *_AUTH0_STRINGS,
        "email_verified",
        "phone_verified",
        "user_metadata",
        "app_metadata",
        "user_id",
        "_id",
        "blocked",
        "password_hash",
        "passwordHash",
        "custom_password_hash",
        "identities",
        "multifactor",
    }
)


def _auth0_identities(user: Mapping[str, Any], warnings: Warnings | None) -> list[dict[str, Any]]:
    """Social and enterprise OAuth identities as linked identities (alias: `google-oauth2` -> `google`)."""
    identities = user.get("identities")
    carried: list[dict[str, Any]] = []
    if not isinstance(identities, list):
        return carried
    for identity in identities:
        if not isinstance(identity, dict):
            continue
        provider = identity.get("provider")
        if provider in (None, "auth0", "email", "sms"):
            continue
        if provider in _AUTH0_NOT_OAUTH or not identity.get("user_id"):
            _warn(
                warnings,
                _SOCIAL,
                f"{provider} identity {identity.get('user_id', '')} is not OAuth/OIDC: the user signs in by email or"
                " phone and sets a password",
            )
            continue
        profile = identity.get("profileData") if isinstance(identity.get("profileData"), dict) else {}
        assert isinstance(profile, dict)
        alias = _AUTH0_ALIASES.get(str(provider), str(provider))
        claims = {k: profile.get(k) for k in ("email", "name", "picture")}
        carried.append(_identity(alias, identity["user_id"], claims))
    return carried


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
        record["password"] = password
    if identities := _auth0_identities(user, warnings):
        record["identities"] = identities
    if user.get("multifactor"):
        _warn(warnings, _MFA, f"MFA enrolment {user['multifactor']} cannot be exported from Auth0: the user re-enrols")
    if isinstance(app_metadata, dict):
        for member in sorted(set(app_metadata) - {"roles", "authorization"}):
            _drop(warnings, f"app_metadata.{member}", "only roles are taken from app_metadata")
    _drop_unknown(user, _AUTH0_KNOWN, warnings)
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
    as `custom_attributes.cognito_username`, a `sub` column (a ListUsers export's) as `cognito_sub`.
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
    if row.get("sub", "") != "":  # not in GetCSVHeader's columns; exports made with ListUsers carry it
        custom.setdefault("cognito_sub", row["sub"])
    if custom:
        record["custom_attributes"] = custom
    # Cognito exports no password hashes: the user waits for lazy migration (docs/reference.md#hooks-lazy-migration),
    # and its first sign-in asks the project's `user.password_migration` hooks, which check the password with Cognito.
    record["password"] = {"type": "migrate_on_sign_in"}  # a literal: the client package has no server code
    if row.get("updated_at"):
        _drop(warnings, "updated_at")
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
    if (password := _password(row.get("encrypted_password", ""), warnings, "encrypted_password")) is not None:
        record["password"] = password
    app_metadata = _json_cell("raw_app_meta_data", row.get("raw_app_meta_data", "")) or {}
    providers = app_metadata.get("providers") if isinstance(app_metadata, dict) else None
    identities = []
    for provider in providers if isinstance(providers, list) else []:
        if provider in ("email", "phone"):
            continue
        # An OAuth sign-in copies the provider's subject into raw_user_meta_data; it holds the latest one's only.
        subject = metadata.get("provider_id") or metadata.get("sub")
        if provider == app_metadata.get("provider") and subject:
            claims = {"email": metadata.get("email"), "name": name, "picture": picture}
            identities.append(_identity(str(provider), subject, claims))
            continue
        _warn(
            warnings,
            _SOCIAL,
            f"{provider} identity cannot be imported: its subject is in auth.identities, which users.csv does not"
            " hold; the user signs in by email or phone and sets a password",
        )
    if identities:
        record["identities"] = identities
    if row.get("is_sso_user", "").lower() == "true":
        _warn(warnings, _SOCIAL, "SSO user: the SAML identity cannot be imported")
    banned = _postgres_time(row.get("banned_until", ""))
    if banned is not None and banned > datetime.now(UTC):
        record["disabled"] = True
    elif upsert:
        record["disabled"] = False
    if row.get("deleted_at"):
        _warn(warnings, "deleted_user", "deleted in Supabase (deleted_at is set): imported anyway, check it")
    for column in ("created_at", "last_sign_in_at", "invited_at"):
        if row.get(column):
            _drop(warnings, column, "sign-up and sign-in history is not imported")
    if row.get("is_super_admin", "").lower() == "true":
        _drop(warnings, "is_super_admin")
    _drop_unknown(row, frozenset(SUPABASE_HEADER), warnings)
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


_CLERK_SELF_DESCRIBING: Final = frozenset(
    {"bcrypt", "argon2i", "argon2id", "pbkdf2_sha256", "pbkdf2_sha256_django", "pbkdf2_sha1", "phpass", "scrypt"}
)
_CLERK_DIGESTS: Final = {"md5": "md5", "sha256": "sha256", "sha1": "sha1", "sha512": "sha512"}


def _clerk_password(hasher: str, digest: str) -> dict[str, Any] | str:
    """A Clerk `password_digest` as a password object, or why it cannot be carried.

    See docs/reference.md#passwords-formats.
    """
    if hasher in _CLERK_SELF_DESCRIBING:
        type_ = hash_type(digest)
        return {"type": type_, "password_hash": digest} if type_ is not None else "the digest is not in its format"
    if hasher in _CLERK_DIGESTS:
        return {"type": _CLERK_DIGESTS[hasher], "password_hash": digest}
    if hasher == "scrypt_firebase":
        # Clerk's form: <hash>$<salt>$<signer key>$<salt separator>$<rounds>$<memory cost>.
        parts = digest.split("$")
        if len(parts) == 6 and parts[4].isdigit() and parts[5].isdigit():
            hash_config = {
                "signer_key": parts[2],
                "salt_separator": parts[3],
                "rounds": int(parts[4]),
                "mem_cost": int(parts[5]),
            }
            password = _firebase_password(parts[0], parts[1], hash_config)
            return password if password is not None else "the digest is empty"
        return "the digest is not hash$salt$signer_key$salt_separator$rounds$mem_cost"
    return "no import format takes it"


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
    if digest:
        converted = _clerk_password(hasher, digest)
        if isinstance(converted, dict):
            record["password"] = converted
        else:
            _warn(warnings, _NOT_BCRYPT, f"password_hasher {hasher or 'unknown'!r}: {converted}; not imported")
    if row.get("totp_secret"):
        record["mfa"] = {"totp": {"secret": row["totp_secret"].strip().upper().rstrip("=")}}
    if row.get("id"):
        record["custom_attributes"] = {"clerk_user_id": row["id"]}
    _drop_unknown(row, frozenset(CLERK_HEADER), warnings)
    return record


def userio_record(user: Mapping[str, Any], *, upsert: bool = False, warnings: Warnings | None = None) -> dict[str, Any]:
    """A line of our own ndjson export as an import record (users moving between projects or instances).

    Attributes, address, roles, groups, `disabled` and custom attributes are carried; the old user id is kept
    as `custom_attributes.userio_user_id`; the first TOTP, MFA email and MFA phone become the second factors.
    An export holds no password hashes (docs/reference.md#export-file-format), so every user is warned about: they set a
    new password.
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


# Password hashes in the shapes of docs/reference.md#passwords-formats: what a converter sends for each hash its source
# gives.

_PREFIXED_TYPES: Final = (
    (("$2a$", "$2b$", "$2y$", "bcrypt_sha256$$2"), "bcrypt"),
    (("$argon2id$", "$argon2i$", "$argon2d$"), "argon2"),
    (("$scrypt$",), "scrypt"),
    (("$pbkdf2-sha1$", "$pbkdf2-sha256$", "$pbkdf2-sha512$", "$pbkdf2$", "pbkdf2_sha256$", "pbkdf2_sha1$"), "pbkdf2"),
    (("$6$",), "sha512_crypt"),
    (("$5$",), "sha256_crypt"),
    (("$1$",), "md5_crypt"),
    (("$P$", "$H$"), "phpass"),
    (("{SSHA}", "{SSHA256}", "{SSHA512}", "{SHA}", "{ssha}", "{sha}"), "ldap"),
)


def hash_type(value: str) -> str | None:
    """The `password.type` of a self-describing hash string (PHC, crypt, LDAP, Django), or None.

    See docs/reference.md#passwords-formats.
    """
    for prefixes, type_ in _PREFIXED_TYPES:
        if value.startswith(prefixes):
            return type_
    return None


def _password(value: Any, warnings: Warnings | None, where: str) -> dict[str, Any] | None:
    """A self-describing hash as a password object; another (or an unusable one) is a warning."""
    if not isinstance(value, str) or not value:
        return None
    type_ = hash_type(value)
    if type_ is None:
        _warn(
            warnings,
            _NOT_BCRYPT,
            f"{where} is a {_hash_kind(value)} hash no import format takes: not imported, the user must reset the"
            " password",
        )
        return None
    return {"type": type_, "password_hash": value}


def _b64_phc(data: bytes) -> str:
    """The PHC string format's base64: standard alphabet, no padding."""
    return base64.b64encode(data).decode().rstrip("=")


def _drop(warnings: Warnings | None, member: str, why: str = "no import record member holds it") -> None:
    """A source member that is not carried: one warning kind per member, so the summary counts each by name."""
    _warn(warnings, f"dropped:{member}", f"{member} is not carried: {why}")


def _drop_unknown(user: Mapping[str, Any], known: frozenset[str], warnings: Warnings | None) -> None:
    for member, value in user.items():
        if member not in known and value not in (None, "", [], {}, False):
            _drop(warnings, member)


def _identity(alias: str, subject: Any, claims: Mapping[str, Any], provider_type: str | None = None) -> dict[str, Any]:
    identity: dict[str, Any] = {"type": "oauth", "provider_alias": alias, "subject": str(subject)}
    if provider_type is not None and provider_type != alias:
        identity["provider_type"] = provider_type
    kept = {k: v for k, v in claims.items() if v not in (None, "")}
    if kept:
        identity["claims"] = kept
    return identity


# Firebase (`firebase auth:export users.json` or `users.csv`).

_FIREBASE_KNOWN: Final = frozenset(
    {
        "localId",
        "email",
        "emailVerified",
        "phoneNumber",
        "displayName",
        "photoUrl",
        "disabled",
        "passwordHash",
        "salt",
        "customAttributes",
        "providerUserInfo",
        "mfaInfo",
    }
)

FIREBASE_CSV_HEADER: Final = (
    "UID",
    "Email",
    "Email Verified",
    "Password Hash",
    "Password Salt",
    "Name",
    "Photo URL",
    "Google ID",
    "Google Email",
    "Google Display Name",
    "Google Photo URL",
    "Facebook ID",
    "Facebook Email",
    "Facebook Display Name",
    "Facebook Photo URL",
    "Twitter ID",
    "Twitter Email",
    "Twitter Display Name",
    "Twitter Photo URL",
    "GitHub ID",
    "GitHub Email",
    "GitHub Display Name",
    "GitHub Photo URL",
    "User Creation Time",
    "Last Sign-In Time",
    "Phone Number",
)
"""The columns of `firebase auth:export users.csv`, which writes no header row."""

_FIREBASE_CSV_PROVIDERS: Final = (
    ("Google", "google"),
    ("Facebook", "facebook"),
    ("Twitter", "twitter"),
    ("GitHub", "github"),
)

_FIREBASE_HASH_KEYS: Final = {
    "signer_key": ("signer_key", "base64_signer_key", "signerKey"),
    "salt_separator": ("salt_separator", "base64_salt_separator", "saltSeparator"),
    "rounds": ("rounds",),
    "mem_cost": ("mem_cost", "memCost", "memoryCost"),
}
_HASH_CONFIG_LINE = re.compile(r"^\s*([A-Za-z0-9_]+)\s*:\s*(.*?)\s*,?\s*$")


def firebase_hash_config(text: str) -> dict[str, Any]:
    """Firebase's hash config, as the console shows it (`hash_config { ... }`) or as JSON, in our members.

    The members are those of a `firebase_scrypt` password object (docs/reference.md#passwords-formats).
    """
    try:
        found = json.loads(text)
    except ValueError:
        found = {m[1]: m[2] for line in text.splitlines() if (m := _HASH_CONFIG_LINE.match(line))}
    if isinstance(found, dict) and isinstance(found.get("hash_config"), dict):
        found = found["hash_config"]
    if not isinstance(found, dict):
        raise ConversionError("the Firebase hash config must be a JSON object or the console's hash_config block")
    config: dict[str, Any] = {}
    for member, names in _FIREBASE_HASH_KEYS.items():
        value = next((found[n] for n in names if found.get(n) not in (None, "")), None)
        if value is None:
            raise ConversionError(f"the Firebase hash config has no {names[-1] if member == 'mem_cost' else names[1]}")
        if member in ("rounds", "mem_cost"):
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise ConversionError(f"the Firebase hash config's {member} must be a number") from None
        config[member] = value
    algorithm = found.get("algorithm")
    if algorithm not in (None, "SCRYPT"):
        raise ConversionError(f"the Firebase hash config's algorithm is {algorithm}, not SCRYPT")
    return config


def _firebase_password(hash_value: str, salt: str, hash_config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not hash_value:
        return None
    password: dict[str, Any] = {"type": "firebase_scrypt", "password_hash": hash_value, "salt": salt}
    password.update(hash_config or {})
    return password


_FIREBASE_ALIASES: Final = {
    "google.com": "google",
    "apple.com": "apple",
    "facebook.com": "facebook",
    "twitter.com": "twitter",
    "github.com": "github",
    "microsoft.com": "microsoft",
    "yahoo.com": "yahoo",
    "playgames.google.com": "playgames",
}


def firebase_record(
    user: Mapping[str, Any],
    *,
    upsert: bool = False,
    warnings: Warnings | None = None,
    hash_config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A user of Firebase's `auth:export` JSON as an import record.

    The password is a `firebase_scrypt` object (hash and salt as exported; the project's signer key, salt
    separator, rounds and memory cost from `--firebase-hash-config`, else the server's project setting); each
    `providerUserInfo` of an OAuth provider becomes a linked identity (`google.com` -> `google`, `oidc.*` and
    other ids as they are); a phone second factor becomes `mfa.phone_number`; `customAttributes` (the custom
    claims, a JSON string) and the uid (`firebase_uid`) go to `custom_attributes`.
    """
    record: dict[str, Any] = {}
    for source, target in (
        ("email", "email"),
        ("phoneNumber", "phone_number"),
        ("displayName", "name"),
        ("photoUrl", "picture"),
    ):
        value = user.get(source)
        if isinstance(value, str) and value:
            record[target] = value
    verified = user.get("emailVerified")
    if "email" in record and isinstance(verified, bool) and (verified or upsert):
        record["email_verified"] = verified
    if "phone_number" in record:
        record["phone_number_verified"] = True  # Firebase links a phone only once it signed in with a code
    disabled = user.get("disabled")
    if isinstance(disabled, bool) and (disabled or upsert):
        record["disabled"] = disabled
    custom: dict[str, Any] = {}
    claims = user.get("customAttributes")
    if isinstance(claims, str) and claims:
        try:
            decoded = json.loads(claims)
        except ValueError as exc:
            raise ConversionError("customAttributes must hold a JSON object") from exc
        if isinstance(decoded, dict):
            custom.update(decoded)
    if isinstance(user.get("localId"), str):
        custom["firebase_uid"] = user["localId"]
    if custom:
        record["custom_attributes"] = custom
    password = _firebase_password(str(user.get("passwordHash") or ""), str(user.get("salt") or ""), hash_config)
    if password is not None:
        record["password"] = password
    identities = []
    for info in user.get("providerUserInfo") or []:
        if not isinstance(info, dict):
            continue
        provider = str(info.get("providerId") or "")
        if provider in ("password", "phone", ""):
            continue
        if provider.startswith("saml."):
            _warn(warnings, _SOCIAL, f"{provider} is a SAML provider, not OAuth: the user signs in another way")
            continue
        subject = info.get("rawId") or info.get("federatedId")
        if not subject:
            _warn(warnings, _SOCIAL, f"{provider} identity has no rawId: not carried")
            continue
        alias = _FIREBASE_ALIASES.get(provider, provider)
        provider_type = "oidc" if provider.startswith("oidc.") else None
        identities.append(
            _identity(
                alias,
                subject,
                {"email": info.get("email"), "name": info.get("displayName"), "picture": info.get("photoUrl")},
                provider_type,
            )
        )
    if identities:
        record["identities"] = identities
    phones = [f["phoneInfo"] for f in user.get("mfaInfo") or [] if isinstance(f, dict) and f.get("phoneInfo")]
    if phones:
        record["mfa"] = {"phone_number": phones[0]}
    if any(isinstance(f, dict) and not f.get("phoneInfo") for f in user.get("mfaInfo") or []) or len(phones) > 1:
        _warn(warnings, _MFA, "only the first phone second factor is carried; Firebase exports no TOTP secrets")
    _drop_unknown(user, _FIREBASE_KNOWN, warnings)
    return record


def firebase_csv_record(
    row: Mapping[str, str],
    *,
    upsert: bool = False,
    warnings: Warnings | None = None,
    hash_config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A row of Firebase's `auth:export` CSV as an import record, as `firebase_record` converts the JSON form."""
    user: dict[str, Any] = {
        "localId": row.get("UID") or None,
        "email": row.get("Email"),
        "emailVerified": row.get("Email Verified", "").lower() == "true",
        "passwordHash": row.get("Password Hash"),
        "salt": row.get("Password Salt"),
        "displayName": row.get("Name"),
        "photoUrl": row.get("Photo URL"),
        "phoneNumber": row.get("Phone Number"),
        "providerUserInfo": [
            {
                "providerId": f"{alias}.com",
                "rawId": row.get(f"{column} ID"),
                "email": row.get(f"{column} Email"),
                "displayName": row.get(f"{column} Display Name"),
                "photoUrl": row.get(f"{column} Photo URL"),
            }
            for column, alias in _FIREBASE_CSV_PROVIDERS
            if row.get(f"{column} ID")
        ],
    }
    record = firebase_record(user, upsert=upsert, warnings=warnings, hash_config=hash_config)
    for column in ("User Creation Time", "Last Sign-In Time"):
        if row.get(column):
            _drop(warnings, column, "sign-in history is not imported")
    return record


# Keycloak (realm export with users: `kc.sh export --users realm_file`, or the `<realm>-users-N.json` files).

_KEYCLOAK_KNOWN: Final = frozenset(
    {
        "id",
        "username",
        "email",
        "emailVerified",
        "firstName",
        "lastName",
        "enabled",
        "attributes",
        "credentials",
        "federatedIdentities",
        "realmRoles",
        "groups",
        "totp",
        "disableableCredentialTypes",
        "notBefore",
        "self",
    }
)
_KEYCLOAK_BUILTIN_ROLES: Final = ("default-roles-", "offline_access", "uma_authorization")
_KEY = re.compile(r"[a-zA-Z_][a-zA-Z0-9:_]{0,39}")
"""A role or group key the server takes (`users/formats.KEY_PATTERN`; not imported: its validators cost 0.1 s)."""


def _json_member(credential: Mapping[str, Any], member: str) -> dict[str, Any]:
    value = credential.get(member)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ConversionError(f"credentials[].{member} must hold JSON") from exc
    return value if isinstance(value, dict) else {}


def _parameter(parameters: Mapping[str, Any], name: str, default: str) -> str:
    value = parameters.get(name, default)
    return str(value[0] if isinstance(value, list) and value else value)


def _keycloak_password(credential: Mapping[str, Any]) -> dict[str, Any] | str:
    """A Keycloak password credential as a password object, or why it cannot be carried."""
    secret = _json_member(credential, "secretData")
    data = _json_member(credential, "credentialData")
    algorithm = str(data.get("algorithm") or "pbkdf2-sha256")
    iterations = data.get("hashIterations")
    value, salt = secret.get("value"), secret.get("salt")
    if not isinstance(value, str) or not isinstance(iterations, int):
        return "the credential has no hash value or iteration count"
    salt_bytes = base64.b64decode(salt) if isinstance(salt, str) and salt else b""
    hash_bytes = base64.b64decode(value)
    if algorithm in ("pbkdf2", "pbkdf2-sha256", "pbkdf2-sha512"):
        digest = {"pbkdf2": "sha1"}.get(algorithm, algorithm.removeprefix("pbkdf2-"))
        phc = f"$pbkdf2-{digest}$i={iterations}${_b64_phc(salt_bytes)}${_b64_phc(hash_bytes)}"
        return {"type": "pbkdf2", "password_hash": phc}
    if algorithm == "argon2":
        parameters = data.get("additionalParameters") or {}
        variant = _parameter(parameters, "type", "id")
        version = {"1.3": 19, "1.0": 16}.get(_parameter(parameters, "version", "1.3"), 19)
        memory, parallelism = _parameter(parameters, "memory", "7168"), _parameter(parameters, "parallelism", "1")
        phc = (
            f"$argon2{variant}$v={version}$m={memory},t={iterations},p={parallelism}"
            f"${_b64_phc(salt_bytes)}${_b64_phc(hash_bytes)}"
        )
        return {"type": "argon2", "password_hash": phc}
    if algorithm == "bcrypt" and hash_type(value) == "bcrypt":
        return {"type": "bcrypt", "password_hash": value}
    return f"the credential's algorithm {algorithm!r} has no import format"


def _keycloak_totp(credential: Mapping[str, Any]) -> str | None:
    """A Keycloak OTP credential's secret in base32, when it is a TOTP of the usual parameters (SHA1, 6, 30 s)."""
    data = _json_member(credential, "credentialData")
    secret = _json_member(credential, "secretData").get("value")
    if (
        data.get("subType", "totp") != "totp"
        or str(data.get("algorithm", "HmacSHA1")) != "HmacSHA1"
        or int(data.get("digits", 6)) != 6
        or int(data.get("period", 30)) != 30
        or not isinstance(secret, str)
        or not secret
    ):
        return None
    return base64.b32encode(secret.encode()).decode().rstrip("=")


def keycloak_record(
    user: Mapping[str, Any], *, upsert: bool = False, warnings: Warnings | None = None
) -> dict[str, Any]:
    """A user of a Keycloak realm export (with `credentials`) as an import record.

    A pbkdf2 (sha1/256/512) or argon2 password becomes a PHC string (`pbkdf2`, `argon2`); an OTP credential of
    the default parameters becomes the TOTP second factor; `federatedIdentities` become linked identities
    (alias = the identity provider's alias, subject = its user id); realm roles (but Keycloak's built-in ones)
    become roles and groups (their last path segment) groups; single-valued `attributes` go to
    `custom_attributes` with the Keycloak id as `keycloak_user_id`.
    """
    record: dict[str, Any] = {}
    for source, target in (
        ("username", "preferred_username"),
        ("email", "email"),
        ("firstName", "given_name"),
        ("lastName", "family_name"),
    ):
        value = user.get(source)
        if isinstance(value, str) and value:
            record[target] = value
    if "given_name" in record or "family_name" in record:
        record["name"] = f"{record.get('given_name', '')} {record.get('family_name', '')}".strip()
    verified = user.get("emailVerified")
    if "email" in record and isinstance(verified, bool) and (verified or upsert):
        record["email_verified"] = verified
    enabled = user.get("enabled")
    if enabled is False or (upsert and enabled is True):
        record["disabled"] = enabled is False
    custom: dict[str, Any] = {}
    for name, values in (user.get("attributes") or {}).items():
        if isinstance(values, list) and len(values) == 1:
            custom[name] = values[0]
        elif values not in (None, []):
            custom[name] = values
    if isinstance(user.get("id"), str):
        custom["keycloak_user_id"] = user["id"]
    if custom:
        record["custom_attributes"] = custom
    for credential in user.get("credentials") or []:
        if not isinstance(credential, dict):
            continue
        kind = credential.get("type")
        if kind == "password" and "password" not in record:
            converted = _keycloak_password(credential)
            if isinstance(converted, dict):
                record["password"] = converted
            else:
                _warn(warnings, _NOT_BCRYPT, f"password not imported ({converted}): the user must reset it")
        elif kind == "otp" and (secret := _keycloak_totp(credential)) is not None:
            record.setdefault("mfa", {})["totp"] = {"secret": secret}
        else:
            _warn(warnings, _MFA, f"a {kind} credential cannot be carried: the user enrols it again")
    identities = [
        _identity(str(f.get("identityProvider")), f.get("userId"), {"preferred_username": f.get("userName")})
        for f in user.get("federatedIdentities") or []
        if isinstance(f, dict) and f.get("identityProvider") and f.get("userId")
    ]
    if identities:
        record["identities"] = identities
    roles = [
        r for r in user.get("realmRoles") or [] if isinstance(r, str) and not r.startswith(_KEYCLOAK_BUILTIN_ROLES)
    ]
    groups = [g.rstrip("/").rsplit("/", 1)[-1] for g in user.get("groups") or [] if isinstance(g, str)]
    for name, keys in (("roles", roles), ("groups", groups)):
        valid = [k for k in keys if _KEY.fullmatch(k)]
        if valid:
            record[name] = valid
        if len(valid) < len(keys):
            _warn(warnings, f"dropped:{name}", f"{name} {sorted(set(keys) - set(valid))} are not valid keys here")
    if user.get("clientRoles"):
        _drop(warnings, "clientRoles", "client roles have no counterpart; define them as realm roles")
    for member in ("createdTimestamp", "requiredActions"):
        if user.get(member):
            _drop(warnings, member)
    _drop_unknown(user, _KEYCLOAK_KNOWN | {"clientRoles", "createdTimestamp", "requiredActions"}, warnings)
    return record


# Django (`manage.py dumpdata auth.user`; `--natural-foreign` writes group names instead of ids).

_DJANGO_FIELDS: Final = frozenset(
    {"password", "username", "first_name", "last_name", "email", "is_active", "is_staff", "is_superuser", "groups"}
)


def _django_password(value: str, warnings: Warnings | None) -> dict[str, Any] | None:
    """Django's `<algorithm>$...` as a password object; an unusable password (`!...`) is none.

    See docs/reference.md#passwords-formats.
    """
    if not value or value.startswith("!"):
        if value:
            _warn(warnings, _NOT_BCRYPT, "the Django password is unusable (set_unusable_password): not imported")
        return None
    if len(value) == 32 and all(c in "0123456789abcdef" for c in value):  # UnsaltedMD5PasswordHasher's bare form
        return {"type": "md5", "password_hash": value}
    algorithm, _, rest = value.partition("$")
    if algorithm in ("pbkdf2_sha256", "pbkdf2_sha1"):
        return {"type": "pbkdf2", "password_hash": value}
    if algorithm == "argon2" and hash_type("$" + rest) == "argon2":  # argon2$argon2id$v=19$...: PHC less its `$`
        return {"type": "argon2", "password_hash": "$" + rest}
    if algorithm == "bcrypt" and hash_type(rest) == "bcrypt":
        return {"type": "bcrypt", "password_hash": rest}
    # bcrypt takes Django's form (docs/reference.md#passwords-formats)
    if algorithm == "bcrypt_sha256" and hash_type(rest) == "bcrypt":
        return {"type": "bcrypt", "password_hash": value}
    if algorithm == "scrypt":
        salt, n, r, p, digest = rest.split("$") if rest.count("$") == 4 else ("", "0", "", "", "")
        if salt and n.isdigit() and int(n) > 1 and int(n) & (int(n) - 1) == 0:
            ln = int(n).bit_length() - 1
            phc = f"$scrypt$ln={ln},r={r},p={p}${_b64_phc(salt.encode())}${digest.rstrip('=')}"
            return {"type": "scrypt", "password_hash": phc}
    if algorithm in ("md5", "sha1") and rest.count("$") == 1:
        salt, digest = rest.split("$")
        return {"type": algorithm, "password_hash": digest, "salt": salt, "salt_position": "prefix"}
    _warn(
        warnings,
        f"{_NOT_BCRYPT}:django_{algorithm}",
        f"Django's {algorithm} hasher has no import format: the user must reset the password",
    )
    return None


def django_record(row: Mapping[str, Any], *, upsert: bool = False, warnings: Warnings | None = None) -> dict[str, Any]:
    """An object of `dumpdata auth.user` (`{"model", "pk", "fields"}`) as an import record.

    `pbkdf2_sha256`/`pbkdf2_sha1` hashes are sent as Django writes them (`pbkdf2`), `argon2`, `bcrypt` and
    `scrypt` as PHC strings, `md5`/`sha1` as salted digests (the project must allow weak hashes); `is_active`
    false becomes `disabled`; `is_staff`/`is_superuser` (when true) and the primary key go to
    `custom_attributes` (`django_user_id`); groups by natural key (`--natural-foreign`) become groups.
    """
    fields = row.get("fields")
    if not isinstance(fields, dict):
        raise ConversionError("a dumpdata object has `fields`")
    record: dict[str, Any] = {}
    for source, target in (
        ("username", "preferred_username"),
        ("email", "email"),
        ("first_name", "given_name"),
        ("last_name", "family_name"),
    ):
        value = fields.get(source)
        if isinstance(value, str) and value:
            record[target] = value
    if "given_name" in record or "family_name" in record:
        record["name"] = f"{record.get('given_name', '')} {record.get('family_name', '')}".strip()
    active = fields.get("is_active")
    if active is False or (upsert and active is True):
        record["disabled"] = active is False
    custom: dict[str, Any] = {k: True for k in ("is_staff", "is_superuser") if fields.get(k) is True}
    if row.get("pk") is not None:
        custom["django_user_id"] = row["pk"]
    if custom:
        record["custom_attributes"] = custom
    if (password := _django_password(str(fields.get("password") or ""), warnings)) is not None:
        record["password"] = password
    groups = fields.get("groups") or []
    names = [g[0] for g in groups if isinstance(g, list) and g and isinstance(g[0], str)]
    if names:
        valid = [n for n in names if _KEY.fullmatch(n)]
        if valid:
            record["groups"] = valid
        if len(valid) < len(names):
            _warn(warnings, "dropped:groups", f"groups {sorted(set(names) - set(valid))} are not valid keys here")
    elif groups:
        _drop(warnings, "groups", "dumped as ids: run dumpdata with --natural-foreign to carry them by name")
    for member in ("last_login", "date_joined", "user_permissions"):
        if fields.get(member):
            _drop(warnings, member)
    _drop_unknown(fields, _DJANGO_FIELDS | {"last_login", "date_joined", "user_permissions"}, warnings)
    if row.get("model") not in (None, "auth.user"):
        _warn(warnings, "not_a_user", f"a {row.get('model')} object, not auth.user: converted as a user anyway")
    return record


# Ory Kratos (`kratos list identities --format json`, or GET /admin/identities?include_credential=password).

_KRATOS_KNOWN: Final = frozenset(
    {"id", "traits", "state", "credentials", "verifiable_addresses", "metadata_public", "schema_id", "schema_url"}
)
_KRATOS_TRAITS: Final = {
    "email": "email",
    "phone": "phone_number",
    "phone_number": "phone_number",
    "username": "preferred_username",
}


def kratos_record(
    identity: Mapping[str, Any], *, upsert: bool = False, warnings: Warnings | None = None
) -> dict[str, Any]:
    """An Ory Kratos identity as an import record.

    Traits `email`, `phone` and `username` are the login ids (verified as `verifiable_addresses` say), `name`
    (a string, or `{first, last}`) the name; the password's `hashed_password` is sent in its own format
    (argon2, bcrypt, pbkdf2, scrypt, crypt, LDAP: docs/reference.md#passwords-formats); each `oidc` provider becomes a
    linked identity; `metadata_public` and the Kratos id (`kratos_identity_id`) go to `custom_attributes`; `state:
    inactive` becomes `disabled`.
    """
    record: dict[str, Any] = {}
    traits = identity.get("traits") if isinstance(identity.get("traits"), dict) else {}
    assert isinstance(traits, dict)
    for trait, value in traits.items():
        target = _KRATOS_TRAITS.get(trait)
        if target is not None and isinstance(value, str) and value:
            record[target] = value
        elif trait == "name" and isinstance(value, str) and value:
            record["name"] = value
        elif trait == "name" and isinstance(value, dict):
            first, last = value.get("first") or "", value.get("last") or ""
            if first:
                record["given_name"] = first
            if last:
                record["family_name"] = last
            if first or last:
                record["name"] = f"{first} {last}".strip()
        elif value not in (None, "", [], {}):
            _drop(warnings, f"traits.{trait}", "only email, phone, username and name traits are carried")
    verified = {
        str(a.get("value")).lower()
        for a in identity.get("verifiable_addresses") or []
        if isinstance(a, dict) and a.get("verified") is True
    }
    for attribute in ("email", "phone_number"):
        if attribute in record:
            is_verified = record[attribute].lower() in verified
            if is_verified or upsert:
                record[f"{attribute}_verified"] = is_verified
    state = identity.get("state")
    if state == "inactive" or (upsert and state == "active"):
        record["disabled"] = state == "inactive"
    custom: dict[str, Any] = dict(identity.get("metadata_public") or {})
    if isinstance(identity.get("id"), str):
        custom["kratos_identity_id"] = identity["id"]
    if custom:
        record["custom_attributes"] = custom
    credentials = identity.get("credentials") if isinstance(identity.get("credentials"), dict) else {}
    assert isinstance(credentials, dict)
    for kind, credential in credentials.items():
        config = credential.get("config") if isinstance(credential, dict) else None
        config = config if isinstance(config, dict) else {}
        if kind == "password":
            if (password := _password(config.get("hashed_password"), warnings, "hashed_password")) is not None:
                record["password"] = password
        elif kind == "oidc":
            identities = [
                _identity(str(p.get("provider")), p.get("subject"), {})
                for p in config.get("providers") or []
                if isinstance(p, dict) and p.get("provider") and p.get("subject")
            ]
            if identities:
                record["identities"] = identities
        elif kind not in ("code", "link"):
            _warn(warnings, _MFA, f"the {kind} credential cannot be carried: the user enrols it again")
    _drop_unknown(
        identity,
        _KRATOS_KNOWN
        | {"created_at", "updated_at", "state_changed_at", "recovery_addresses", "metadata_admin", "organization_id"},
        warnings,
    )
    for member in ("created_at", "metadata_admin"):
        if identity.get(member):
            _drop(warnings, member)
    return record


SOURCES: Final[dict[str, Source]] = {
    "auth0": Source("auth0", "ndjson", auth0_record, ".ndjson", id_attribute="auth0_user_id", id_name="Auth0 user_id"),
    "cognito-csv": Source(
        "cognito-csv", "csv", cognito_record, ".csv", id_attribute="cognito_sub", id_name="Cognito sub"
    ),
    "supabase": Source(
        "supabase", "csv", supabase_record, ".csv", id_attribute="supabase_user_id", id_name="Supabase id"
    ),
    "clerk": Source("clerk", "csv", clerk_record, ".csv", id_attribute="clerk_user_id", id_name="Clerk id"),
    # Our own export keeps its `sub` in `userio_user_id` only: ids are unique in a deployment, and moving users
    # between two projects of one deployment is what `--from userio` is mostly for.
    "userio": Source("userio", "ndjson", userio_record, ".ndjson"),
    "firebase": Source(
        "firebase",
        "ndjson",
        firebase_record,
        ".ndjson",
        members="users",
        csv_header=FIREBASE_CSV_HEADER,
        convert_csv=firebase_csv_record,
        id_attribute="firebase_uid",
        id_name="Firebase localId",
    ),
    "keycloak": Source(
        "keycloak",
        "ndjson",
        keycloak_record,
        ".ndjson",
        members="users",
        id_attribute="keycloak_user_id",
        id_name="Keycloak id",
    ),
    "django": Source("django", "ndjson", django_record, ".ndjson", id_attribute="django_user_id", id_name="Django pk"),
    "kratos": Source(
        "kratos",
        "ndjson",
        kratos_record,
        ".ndjson",
        members="identities",
        id_attribute="kratos_identity_id",
        id_name="Kratos id",
    ),
}
"""The `--from` choices."""


def source_with(name: str, *, firebase_hash_config: Mapping[str, Any] | None = None, new_ids: bool = False) -> Source:
    """The `--from` source `name` as a run uses it.

    The run's Firebase hash config goes into every password it converts; with `new_ids` (`--new-ids`) the old ids
    are not kept as `sub`.
    """
    source = SOURCES[name]
    if new_ids:
        source = replace(source, keep_ids=False)
    if firebase_hash_config is None or source.name != "firebase":
        return source
    convert, convert_csv = source.convert, source.convert_csv
    assert convert_csv is not None
    return replace(
        source,
        convert=lambda user, **kw: convert(user, hash_config=firebase_hash_config, **kw),
        convert_csv=lambda row, **kw: convert_csv(row, hash_config=firebase_hash_config, **kw),
    )


SOURCE_TITLES: Final = {
    "auth0": "an Auth0 user export",
    "cognito-csv": "a Cognito user CSV",
    "supabase": "a Supabase auth.users CSV",
    "clerk": "a Clerk user export",
    "userio": "our own ndjson export",
    "firebase": "a Firebase auth:export file",
    "keycloak": "a Keycloak realm export",
    "django": "a Django dumpdata auth.user file",
    "kratos": "an Ory Kratos identities export",
}

_JSON_MARKS: Final = (
    ("django", (b'"model": "auth.user"', b'"model":"auth.user"')),
    ("firebase", (b'"localId"',)),
    ("kratos", (b'"schema_id"',)),
    ("keycloak", (b'"createdTimestamp"', b'"federatedIdentities"', b'"realmRoles"', b'"realm"')),
    ("userio", (b'"biometric_count"', b'"passkey_count"')),
    ("auth0", (b'"auth0|', b'"logins_count"', b'"user_metadata"', b'"app_metadata"')),
)
_CSV_HEADERS: Final = (
    ("cognito-csv", COGNITO_HEADER[:3]),
    ("supabase", SUPABASE_HEADER[:3]),
    ("clerk", CLERK_HEADER[:3]),
)


def guess_source(head: bytes) -> str | None:
    """The `--from` source whose export a file starting with `head` looks like, if any (a hint, not a decision)."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text:
        return None
    if text[:1] in (b"{", b"["):
        return next((name for name, marks in _JSON_MARKS if any(mark in head for mark in marks)), None)
    first = text.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
    cells = tuple(next(csv.reader([first]), []))
    for name, header in _CSV_HEADERS:
        if cells[: len(header)] == header:
            return name
    return "firebase" if len(cells) == len(FIREBASE_CSV_HEADER) else None
