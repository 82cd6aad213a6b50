"""The two blocking events (docs/reference.md#hooks-events): their JSON, and how a hook's response may change the token.

`build_event` gives the reference's event shape (docs/reference.md#hooks-events); `apply_response` checks a response
and returns the payload it asks for, refusing any change to a claim the server put into the token.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

import msgspec

from litestar_userio.errors import HookDisallowed, HookResponseMalformed, InvalidJWTMutations
from litestar_userio.users.model import UserState, is_disabled_at

__all__ = [
    "EVENT_TYPES",
    "PAYLOAD_MEMBER",
    "EventContext",
    "apply_response",
    "build_event",
    "shown",
    "user_object",
    "user_object_of_document",
]

EventType = Literal["oidc.jwt.pre_create", "oidc.id_token.pre_create"]
EVENT_TYPES: tuple[str, ...] = ("oidc.jwt.pre_create", "oidc.id_token.pre_create")
PAYLOAD_MEMBER: dict[str, str] = {"oidc.jwt.pre_create": "jwt", "oidc.id_token.pre_create": "id_token"}
"""Where the token's claims sit in the event and in `mutations` (docs/reference.md#hooks-events)."""


class EventContext(msgspec.Struct, omit_defaults=True):
    """Who asked for the token, as the event's `context` tells it."""

    client_id: str
    app_id: str
    triggered_by: str = "user"
    language: str = "en"
    ip_address: str | None = None
    user_agent: str | None = None


def _time(value: datetime | None) -> str | None:
    return None if value is None else msgspec.json.encode(value)[1:-1].decode()


def user_object(user: UserState, now: datetime) -> dict[str, Any]:
    """`payload.user`: standard and custom attributes, roles, groups, state (`is_disabled` at `now`, ref)."""
    return {
        "id": user.id,
        "created_at": _time(user.created_at),
        "updated_at": _time(user.updated_at),
        "is_anonymous": False,
        "is_verified": bool(user.verified),
        "is_disabled": is_disabled_at(user, now),
        "can_reauthenticate": True,
        "standard_attributes": user.standard_attributes(),
        "custom_attributes": dict(user.custom),
        "roles": sorted(user.roles),
        "groups": sorted(user.groups),
    }


_NOT_STANDARD = frozenset(
    {
        "sub",
        "roles",
        "groups",
        "disabled",
        "account_valid_from",
        "account_valid_until",
        "temporarily_disabled_from",
        "temporarily_disabled_until",
        "identities",
        "mfa",
        "biometric_count",
        "passkey_count",
        "custom_attributes",
        "created_at",
        "updated_at",
        "last_login_at",
    }
)
"""Members of the exported user that are not its standard attributes."""


def user_object_of_document(document: dict[str, Any]) -> dict[str, Any]:
    """`payload.user` of a user as the export writes it (a change-log entry's `user`).

    The same members as `user_object`; `is_disabled` is the state the document was written with.
    """
    standard = {k: v for k, v in document.items() if k not in _NOT_STANDARD and v is not None}
    if standard.get("address") == {}:
        del standard["address"]
    return {
        "id": document["sub"],
        "created_at": document.get("created_at"),
        "updated_at": document.get("updated_at"),
        "is_anonymous": False,
        "is_verified": any(standard.get(f"{a}_verified") is True for a in ("email", "phone_number")),
        "is_disabled": bool(document.get("disabled")),
        "can_reauthenticate": True,
        "standard_attributes": standard,
        "custom_attributes": dict(document.get("custom_attributes") or {}),
        "roles": sorted(document.get("roles") or []),
        "groups": sorted(document.get("groups") or []),
    }


def _identities(user: UserState) -> list[dict[str, Any]]:
    return [
        {
            "id": login_id.id,
            "created_at": _time(login_id.created_at),
            "updated_at": _time(login_id.created_at),
            "type": "login_id",
            "claims": {login_id.attribute: login_id.normalized},
            "login_id": {
                "key": login_id.key,
                "type": login_id.key,
                "value": login_id.normalized,
                "original_value": login_id.original,
            },
        }
        for login_id in sorted(user.login_ids.values(), key=lambda i: i.key)
    ]


def build_event(
    event_type: str, user: UserState, payload: dict[str, Any], context: EventContext, now: datetime, seq: int = 1
) -> dict[str, Any]:
    """The event object a hook receives as `e`."""
    return {
        "id": str(uuid.uuid4()),
        "seq": seq,
        "type": event_type,
        "payload": {
            "user": user_object(user, now),
            "identities": _identities(user),
            PAYLOAD_MEMBER[event_type]: {"payload": payload},
        },
        "context": {
            "timestamp": int(now.timestamp()),
            "user_id": user.id,
            "triggered_by": context.triggered_by,
            "language": context.language,
            "ip_address": context.ip_address,
            "user_agent": context.user_agent,
            "app_id": context.app_id,
            "client_id": context.client_id,
        },
    }


def shown(value: Any, limit: int = 60) -> str:
    """A response member as its JSON, shortened: what a message about it shows (`got "yes"`)."""
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def allowing_response(response: Any, member: str) -> dict[str, Any]:
    """`response` when it allows (carrying at most `member` beside `is_allowed`), for every blocking event.

    Raises `HookDisallowed` for `is_allowed: false` and `HookResponseMalformed` (a `HookInvalidResponse`) naming
    the wrong member for anything malformed.
    """
    if not isinstance(response, dict):
        raise HookResponseMalformed(f"the hook must return an object with a boolean is_allowed, got {shown(response)}")
    if "is_allowed" not in response:
        raise HookResponseMalformed("is_allowed is missing: the hook must return an object with a boolean is_allowed")
    if not isinstance(response["is_allowed"], bool):
        raise HookResponseMalformed(f"is_allowed must be a boolean, got {shown(response['is_allowed'])}")
    if response["is_allowed"] is False:
        extra = sorted(set(response) - {"is_allowed", "title", "reason"})
        if extra:
            raise HookResponseMalformed(
                f"a refusal may only carry is_allowed, title and reason, not {', '.join(extra)}"
            )
        for name in ("title", "reason"):
            if not isinstance(response.get(name), str | None):
                raise HookResponseMalformed(f"{name} must be a string, got {shown(response[name])}")
        raise HookDisallowed(response.get("title"), response.get("reason"))
    if extra := sorted(set(response) - {"is_allowed", member}):
        raise HookResponseMalformed(
            f"an allowing response may only carry is_allowed and {member}, not {', '.join(extra)}"
        )
    return response


def apply_response(
    event_type: str, response: Any, current: dict[str, Any], protected: dict[str, Any]
) -> dict[str, Any]:
    """The payload after one hook: `current` unless the response gives a new one (docs/reference.md#hooks-events).

    Raises `HookDisallowed` for `is_allowed: false`, `HookInvalidResponse` for anything malformed, and
    `InvalidJWTMutations` when a claim of `protected` (what the server put in) is removed or changed.
    """
    mutations = allowing_response(response, "mutations").get("mutations")
    if mutations is None:
        return current
    member = PAYLOAD_MEMBER[event_type]
    if not isinstance(mutations, dict) or set(mutations) - {member}:
        raise HookResponseMalformed(f"mutations may only hold {member}, got {shown(mutations)}")
    if member not in mutations:
        return current
    token = mutations[member]
    if not isinstance(token, dict) or set(token) - {"payload"}:
        raise HookResponseMalformed(f"mutations.{member} may only hold payload, got {shown(token)}")
    if "payload" not in token:
        return current
    payload = token["payload"]
    if not isinstance(payload, dict):
        raise HookResponseMalformed(f"mutations.{member}.payload must be an object, got {shown(payload)}")
    removed = sorted(k for k in protected if k not in payload)
    changed = sorted(k for k in protected if k in payload and payload[k] != protected[k])
    if removed or changed:
        raise InvalidJWTMutations(removed, changed)
    return payload
