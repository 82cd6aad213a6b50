"""`--from auth0`: an Auth0 user export (ndjson) as import records.

The choices every converter makes are in `conversion.py`'s docstring (and docs/migration-guide.md).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

from userio_client.sources.conversion import (
    _MFA,
    _NOT_BCRYPT,
    _SOCIAL,
    Source,
    Warnings,
    _drop,
    _drop_unknown,
    _identity,
    _password,
    _string_list,
    _warn,
    hash_type,
)

__all__ = ["SOURCE", "auth0_record"]


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


SOURCE: Final = Source(
    "auth0", "ndjson", auth0_record, ".ndjson", id_attribute="auth0_user_id", id_name="Auth0 user_id"
)
"""`--from auth0`."""
