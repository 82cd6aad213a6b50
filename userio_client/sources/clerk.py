"""`--from clerk`: a Clerk user export (CSV) as import records.

The choices every converter makes are in `conversion.py`'s docstring (and docs/migration-guide.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from userio_client.sources.conversion import (
    _NOT_BCRYPT,
    Source,
    Warnings,
    _drop_unknown,
    _firebase_password,
    _warn,
    hash_type,
)

__all__ = ["CLERK_HEADER", "SOURCE", "clerk_record"]


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


SOURCE: Final = Source("clerk", "csv", clerk_record, ".csv", id_attribute="clerk_user_id", id_name="Clerk id")
"""`--from clerk`."""
