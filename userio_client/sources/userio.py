"""`--from userio`: our own ndjson export as import records (moving users between projects).

The choices every converter makes are in `conversion.py`'s docstring (and docs/migration-guide.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from userio_client.sources.conversion import _MFA, _NOT_BCRYPT, Source, Warnings, _string_list, _warn

__all__ = ["SOURCE", "userio_record"]


def userio_record(user: Mapping[str, Any], *, upsert: bool = False, warnings: Warnings | None = None) -> dict[str, Any]:
    """A line of our own ndjson export as an import record (users moving between projects or instances).

    Attributes, address, roles, groups, `disabled` and custom attributes are carried; the old user id is kept
    as `custom_attributes.userio_user_id`; the first TOTP, MFA email and MFA phone become the second factors.
    An export holds no password hashes (docs/reference.md#export-file-format), so every user is warned about: they set a
    new password.
    """
    from userio_core.attribute_formats import STANDARD_ATTRIBUTES  # its validators cost every run 0.1 s to import

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


# Our own export keeps its `sub` in `userio_user_id` only: ids are unique in a deployment, and moving users
# between two projects of one deployment is what `--from userio` is mostly for.
SOURCE: Final = Source("userio", "ndjson", userio_record, ".ndjson")
"""`--from userio`."""
