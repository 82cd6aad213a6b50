"""The exported user: one JSON document per user, the ndjson line as is, the source of every CSV cell.

Built from a row of `users.user_repository.user_rows_query` (`build_document`: the export, the admin API) or from a
`UserState` in memory (`document_of`: the change log's entry, written with the change).

Members follow the supported pointers' order (`sub` first); `address` and `mfa` are always objects and `mfa` always
holds its three arrays (docs/reference.md#export-file-format). Password hashes are never part of it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote, quote_plus

import msgspec

from litestar_userio.db.engine import Row
from litestar_userio.users.model import UserState, disabled_state
from userio_core.attribute_formats import LOGIN_ID_ATTRIBUTES, STANDARD_ATTRIBUTES

__all__ = ["build_document", "document_of", "encode_sorted", "totp_uri", "without_secrets"]

_ORDER = {attribute: position for position, attribute in enumerate(STANDARD_ATTRIBUTES)}
_ADDRESS = ("formatted", "street_address", "locality", "region", "postal_code", "country")
_CLAIM_OF_KEY = {key: attribute for attribute, key in LOGIN_ID_ATTRIBUTES.items()}
_KEY_ORDER = {"email": 0, "phone": 1, "username": 2}
encode_sorted = msgspec.json.Encoder(order="sorted").encode
"""JSON with object keys sorted (the CSV cells of objects)."""


_NO_MFA: dict[str, list[Any]] = {"emails": [], "phone_numbers": [], "totps": []}
_timestamps: dict[datetime, str] = {}


def _timestamp(value: datetime | None) -> str | None:
    """RFC 3339 as the API writes it; cached, as a chunk's users share their timestamps."""
    if value is None:
        return None
    text = _timestamps.get(value)
    if text is None:
        if len(_timestamps) > 4096:
            _timestamps.clear()
        text = _timestamps[value] = msgspec.json.encode(value)[1:-1].decode()
    return text


def totp_uri(secret: str, issuer: str, account: str) -> str:
    """An `otpauth://totp/` URI (Key Uri Format): SHA1, 6 digits, 30 seconds."""
    label = quote(f"{issuer}:{account}", safe=":@")
    return (
        f"otpauth://totp/{label}?secret={quote_plus(secret)}&issuer={quote_plus(issuer)}"
        "&algorithm=SHA1&digits=6&period=30"
    )


def _identity(key: str, type_: str, original: str, normalized: str, *_: Any) -> dict[str, Any]:
    return {
        "type": "login_id",
        "login_id": {"key": key, "original_value": original, "type": type_, "value": normalized},
        "claims": {_CLAIM_OF_KEY[key]: normalized},
    }


def _oauth(alias: str, type_: str, subject: str, claims: Any) -> dict[str, Any]:
    """A linked identity as the reference's export writes an OAuth one (docs/reference.md#import-linked-identities)."""
    profile = _sorted_keys(_decode(claims))
    return {
        "type": "oauth",
        "oauth": {
            "provider_alias": alias,
            "provider_type": type_,
            "provider_subject_id": subject,
            "user_profile": profile,
        },
        "claims": profile,
    }


def _mfa(authenticators: list[list[Any]], issuer: str, account: str) -> dict[str, list[Any]]:
    secondary = [a for a in authenticators if a[0] == "secondary"]
    if not secondary:
        return _NO_MFA
    return {
        "emails": [target for _, type_, _, target in secondary if type_ == "oob_otp_email"],
        "phone_numbers": [target for _, type_, _, target in secondary if type_ == "oob_otp_sms"],
        "totps": [
            {"secret": secret, "uri": totp_uri(secret, issuer, account)}
            for _, type_, secret, _ in secondary
            if type_ == "totp"
        ],
    }


def build_document(user: Row, issuer: str, now: datetime) -> dict[str, Any]:
    """The user as exported (ndjson line, and what CSV pointers resolve against), from a row of `export_pages`.

    `disabled` is the state at `now` (docs/reference.md#users-disabled-state: also inside a temporary disable window or
    outside the account valid period); the admin API's user bodies are this document too.
    """
    standard = _decode(user["standard_attributes"])
    document: dict[str, Any] = {"sub": user["id"]}
    for attribute in _standard_order(tuple(standard)):
        document[attribute] = standard[attribute]
    address = standard.get("address")
    document["address"] = {k: address[k] for k in _ADDRESS if k in address} if address else {}
    roles, groups = user["roles"], user["groups"]
    document["roles"] = [] if roles is None else _decoded_list(roles)
    document["groups"] = [] if groups is None else _decoded_list(groups)
    window_from, window_until = user["temporarily_disabled_from"], user["temporarily_disabled_until"]
    valid_from, valid_until = user["account_valid_from"], user["account_valid_until"]
    if window_from is None and window_until is None and valid_from is None and valid_until is None:
        document["disabled"] = bool(user["is_disabled"])  # most users: no bound to weigh, the flag is the state
    else:
        document["disabled"] = (
            disabled_state(
                now,
                disabled=bool(user["is_disabled"]),
                temporarily_disabled_from=window_from,
                temporarily_disabled_until=window_until,
                account_valid_from=valid_from,
                account_valid_until=valid_until,
            )
            is not None
        )
    if valid_from is not None:  # as the reference: present only when set
        document["account_valid_from"] = _timestamp(valid_from)
    if valid_until is not None:
        document["account_valid_until"] = _timestamp(valid_until)
    if window_from is not None:
        document["temporarily_disabled_from"] = _timestamp(window_from)
    if window_until is not None:
        document["temporarily_disabled_until"] = _timestamp(window_until)
    identities = user["identities"]
    if identities is None:
        document["identities"] = []
    else:
        identities = _decoded_list(identities)
        if len(identities) > 1:
            identities.sort(key=_identity_position)
        document["identities"] = [_identity(*identity) for identity in identities]
    if user["oauth_identities"] is not None:
        document["identities"] += [_oauth(*identity) for identity in _decoded_list(user["oauth_identities"])]
    authenticators = user["authenticators"]
    if authenticators is not None and (authenticators := _decoded_list(authenticators)):
        account = standard.get("email") or standard.get("preferred_username") or standard.get("phone_number")
        document["mfa"] = _mfa(authenticators, issuer, str(account or user["id"]))
        document["biometric_count"] = sum(1 for a in authenticators if a[1] == "biometric")
        document["passkey_count"] = sum(1 for a in authenticators if a[1] == "passkey")
    else:
        document["mfa"] = _NO_MFA
        document["biometric_count"] = document["passkey_count"] = 0
    document["custom_attributes"] = _sorted_keys(_decode(user["custom_attributes"]))
    document["created_at"] = _timestamp(user["created_at"])
    document["updated_at"] = _timestamp(user["updated_at"])
    document["last_login_at"] = _timestamp(user["last_login_at"])
    return document


_orders: dict[tuple[str, ...], tuple[str, ...]] = {}


def _standard_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    """The exported standard attributes among `keys`, in the supported pointers' order.

    See docs/reference.md#export-columns.

    Cached by the keys as stored: users share a handful of key sets (measured for 9 attributes: 0.89 us to sort,
    0.25 to look up).
    """
    order = _orders.get(keys)
    if order is None:
        if len(_orders) > 4096:
            _orders.clear()
        order = _orders[keys] = tuple(sorted(_ORDER.keys() & set(keys), key=_ORDER.__getitem__))
    return order


def _identity_position(identity: list[Any]) -> int:
    return _KEY_ORDER.get(identity[0], 9)


_decode_json = msgspec.json.decode


def _decoded_list(value: Any) -> list[Any]:
    """A JSON array column as the database returns it (text), or the list `document_of` built."""
    return value if type(value) is list else _decode_json(value)


def document_of(user: UserState, issuer: str, now: datetime) -> dict[str, Any]:
    """The user as `build_document` writes it once stored, from its state in memory (no second read).

    The same members in the same order: the row `user_rows_query` would return, built from `user`.
    """
    secondary = sorted(
        (a for a in user.authenticators if not (a.kind == "primary" and a.type == "password")),
        key=lambda a: (a.created_at, a.id),
    )
    oauth = sorted(user.oauth.values(), key=lambda link: (link.created_at, link.id))
    row: dict[str, Any] = {
        "id": user.id,
        "created_at": user.created_at,
        "updated_at": user.updated_at,
        "last_login_at": user.last_login_at,
        "is_disabled": user.disabled,
        "account_valid_from": user.account_valid_from,
        "account_valid_until": user.account_valid_until,
        "temporarily_disabled_from": user.temporarily_disabled_from,
        "temporarily_disabled_until": user.temporarily_disabled_until,
        "standard_attributes": user.standard_attributes(),
        "custom_attributes": user.custom,
        "identities": [[i.key, i.key, i.original, i.normalized] for i in user.login_ids.values()] or None,
        "authenticators": [[a.kind, a.type, a.totp_secret, a.oob_target] for a in secondary] or None,
        "oauth_identities": [[o.provider_alias, o.provider_type, o.subject, o.claims] for o in oauth] or None,
        "roles": sorted(user.roles) or None,
        "groups": sorted(user.groups) or None,
    }
    return build_document(row, issuer, now)


def _decode(value: Any) -> dict[str, Any]:
    if isinstance(value, str | bytes):
        decoded: dict[str, Any] = msgspec.json.decode(value)
        return decoded
    return dict(value or {})


def _sorted_keys(value: Any) -> Any:
    """Objects with their keys sorted, all the way down.

    PostgreSQL's jsonb does not keep key order; sorting makes the file the same bytes on either database.
    """
    if type(value) is dict:
        return {k: _sorted_keys(v) if type(v) in _NESTED else v for k, v in sorted(value.items())}
    if type(value) is list:
        return [_sorted_keys(v) if type(v) in _NESTED else v for v in value]
    return value


_NESTED = (dict, list)


def without_secrets(document: dict[str, Any]) -> dict[str, Any]:
    """The exported record an event or a change-log entry carries: each TOTP's `secret` and `uri` left out.

    The admin API answers the export's record whole (the admin JWT reads the export too); a listener does not.
    """
    mfa = document.get("mfa")
    if not isinstance(mfa, dict) or not mfa.get("totps"):
        return document
    totps = [{k: v for k, v in totp.items() if k not in ("secret", "uri")} for totp in mfa["totps"]]
    return {**document, "mfa": {**mfa, "totps": totps}}
