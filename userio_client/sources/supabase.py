"""`--from supabase`: a Supabase `auth.users` CSV as import records.

The choices every converter makes are in `conversion.py`'s docstring (and docs/migration-guide.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from userio_client.sources.conversion import (
    _SOCIAL,
    ConversionError,
    Source,
    Warnings,
    _drop,
    _drop_unknown,
    _identity,
    _password,
    _warn,
)

__all__ = ["SOURCE", "SUPABASE_HEADER", "supabase_record"]


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


SOURCE: Final = Source(
    "supabase", "csv", supabase_record, ".csv", id_attribute="supabase_user_id", id_name="Supabase id"
)
"""`--from supabase`."""
