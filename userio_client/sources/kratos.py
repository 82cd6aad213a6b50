"""`--from kratos`: an Ory Kratos identities export as import records.

The choices every converter makes are in `conversion.py`'s docstring (and docs/migration-guide.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from userio_client.sources.conversion import _MFA, Source, Warnings, _drop, _drop_unknown, _identity, _password, _warn

__all__ = ["SOURCE", "kratos_record"]


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


SOURCE: Final = Source(
    "kratos",
    "ndjson",
    kratos_record,
    ".ndjson",
    members="identities",
    id_attribute="kratos_identity_id",
    id_name="Kratos id",
)
"""`--from kratos`."""
