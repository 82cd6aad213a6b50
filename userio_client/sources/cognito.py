"""`--from cognito-csv`: a Cognito user CSV (GetCSVHeader's columns) as import records.

The choices every converter makes are in `conversion.py`'s docstring (and docs/migration-guide.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from userio_client.sources.conversion import _MFA, ConversionError, Source, Warnings, _drop, _warn

__all__ = ["COGNITO_HEADER", "SOURCE", "cognito_record"]


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


SOURCE: Final = Source("cognito-csv", "csv", cognito_record, ".csv", id_attribute="cognito_sub", id_name="Cognito sub")
"""`--from cognito-csv`."""
