"""`--from firebase`: a Firebase `auth:export` file (JSON or headerless CSV) as import records.

The choices every converter makes are in `conversion.py`'s docstring (and docs/migration-guide.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from userio_client.sources.conversion import (
    _MFA,
    _SOCIAL,
    ConversionError,
    Source,
    Warnings,
    _drop,
    _drop_unknown,
    _firebase_password,
    _identity,
    _warn,
)

__all__ = ["FIREBASE_CSV_HEADER", "SOURCE", "firebase_csv_record", "firebase_hash_config", "firebase_record"]


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


SOURCE: Final = Source(
    "firebase",
    "ndjson",
    firebase_record,
    ".ndjson",
    members="users",
    csv_header=FIREBASE_CSV_HEADER,
    convert_csv=firebase_csv_record,
    id_attribute="firebase_uid",
    id_name="Firebase localId",
)
"""`--from firebase`."""
