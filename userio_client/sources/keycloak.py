"""`--from keycloak`: a Keycloak realm export as import records.

The choices every converter makes are in `conversion.py`'s docstring (and docs/migration-guide.md).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any, Final

from userio_client.sources.conversion import (
    _KEY,
    _MFA,
    _NOT_BCRYPT,
    ConversionError,
    Source,
    Warnings,
    _b64_phc,
    _drop,
    _drop_unknown,
    _identity,
    _warn,
    hash_type,
)

__all__ = ["SOURCE", "keycloak_record"]


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


SOURCE: Final = Source(
    "keycloak",
    "ndjson",
    keycloak_record,
    ".ndjson",
    members="users",
    id_attribute="keycloak_user_id",
    id_name="Keycloak id",
)
"""`--from keycloak`."""
