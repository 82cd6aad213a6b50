"""The lossless export's records: each user as the import record that recreates it (docs/reference.md#export-lossless).

`format: "userio"` writes one import record per line (`imports/import_schemas.py`'s `UserRecord`, nothing it would
refuse) from a row of `UserRepository.lossless_pages`: `sub`, the login ids as originally given with their verification,
every standard and custom attribute, roles, groups, the stored `disabled` flag with the temporary disable window
and the account valid period, linked identities in the import's shape, the primary password as the import password
object it is stored as, and the second factors with their secrets. Members that would only warn on an insert
(`disabled: false`, `email_verified: false`, nulls) are left out. The bytes are encrypted before they are stored
(`exports/encryption.py`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from litestar_userio.db.engine import Row
from litestar_userio.passwords.formats import load_stored
from userio_core.attribute_formats import LOGIN_ID_ATTRIBUTES, STANDARD_STRING_ATTRIBUTES

__all__ = ["CONTENT_TYPE", "EXTENSION", "import_record", "lossless_lines"]

CONTENT_TYPE = "application/age"
"""An age file (the ndjson inside it is the import's records)."""
EXTENSION = "ndjson.age"

_ATTRIBUTE_OF_KEY = {key: attribute for attribute, key in LOGIN_ID_ATTRIBUTES.items()}
_LOGIN_ID_ORDER = ("email", "phone_number", "preferred_username")
_ADDRESS = ("formatted", "street_address", "locality", "region", "postal_code", "country")
_BOUNDS = ("account_valid_from", "account_valid_until", "temporarily_disabled_from", "temporarily_disabled_until")
_encoder = msgspec.json.Encoder()
_decode = msgspec.json.decode


def _json(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str | bytes):
        return _decode(value)
    return value


def _rfc3339(value: datetime | str | None) -> str | None:
    """RFC 3339 in UTC with `Z`, as the import reads it back; the aggregated JSON gives text on either database."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
    text: str = msgspec.json.encode(value.astimezone(UTC))[1:-1].decode()
    return text


def _sorted(value: Any) -> Any:
    """Objects with sorted keys all the way down: the same bytes from either database (jsonb keeps no order)."""
    if type(value) is dict:
        return {k: _sorted(v) for k, v in sorted(value.items())}
    if type(value) is list:
        return [_sorted(v) for v in value]
    return value


def _password(stored: str | None, expire_after: Any) -> dict[str, Any] | None:
    """The import password object a stored hash came from (bcrypt is stored verbatim, the rest as their objects)."""
    if stored is None:
        return None
    password = load_stored(stored)
    if (expire := _rfc3339(expire_after)) is not None:
        password["expire_after"] = expire
    return password


def import_record(user: Row) -> dict[str, Any]:
    """The import record that recreates the user of a `lossless_pages` row (docs/reference.md#export-lossless)."""
    standard = _json(user["standard_attributes"]) or {}
    record: dict[str, Any] = {"sub": user["id"]}
    login_ids = {_ATTRIBUTE_OF_KEY[key]: original for key, original in _json(user["identities"]) or ()}
    for attribute in _LOGIN_ID_ORDER:
        if attribute in login_ids:
            record[attribute] = login_ids[attribute]
            if attribute != "preferred_username" and standard.get(f"{attribute}_verified") is True:
                record[f"{attribute}_verified"] = True
    for attribute in STANDARD_STRING_ATTRIBUTES:
        value = standard.get(attribute)
        if isinstance(value, str):
            record[attribute] = value
    address = standard.get("address")
    if isinstance(address, dict) and (members := {k: address[k] for k in _ADDRESS if isinstance(address.get(k), str)}):
        record["address"] = members
    record["custom_attributes"] = _sorted(_json(user["custom_attributes"]) or {})
    record["roles"] = _json(user["roles"]) or []
    record["groups"] = _json(user["groups"]) or []
    if user["is_disabled"]:
        record["disabled"] = True
    for bound in _BOUNDS:
        if (value := _rfc3339(user[bound])) is not None:
            record[bound] = value
    oauth = _json(user["oauth_identities"])
    if oauth:
        record["identities"] = [
            {
                "type": "oauth",
                "provider_alias": alias,
                "provider_type": type_,
                "subject": subject,
                "claims": _sorted(_json(claims) or {}),
            }
            # In a stable order: identities linked at the same instant are stored in no order of their own.
            for alias, type_, subject, claims in sorted(oauth, key=lambda link: (link[0], link[2]))
        ]
    mfa: dict[str, Any] = {}
    for kind, type_, password_hash, totp_secret, oob_target, expire_after in _json(user["authenticators"]) or ():
        if kind == "primary":
            password = _password(password_hash, expire_after) if type_ == "password" else None
            if password is not None and "password" not in record:
                record["password"] = password
            continue
        # The import takes one second factor of each kind: the oldest is the one it would have created.
        if type_ == "oob_otp_email" and oob_target is not None:
            mfa.setdefault("email", oob_target)
        elif type_ == "oob_otp_sms" and oob_target is not None:
            mfa.setdefault("phone_number", oob_target)
        elif type_ == "password" and (password := _password(password_hash, expire_after)) is not None:
            mfa.setdefault("password", password)
        elif type_ == "totp" and totp_secret is not None:
            mfa.setdefault("totp", {"secret": totp_secret})
    if mfa:
        record["mfa"] = mfa
    return record


def lossless_lines(users: list[Row]) -> bytes:
    """One import record per line, one line per user (the plaintext that `AgeStream` encrypts)."""
    return _encoder.encode_lines([import_record(user) for user in users])
