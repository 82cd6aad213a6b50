"""The user events: blocking `user.pre_create` and `user.profile.pre_update`, and the five non-blocking ones.

A blocking user hook gets the user as it would be after the change (`payload.user`, the hooks' user object) and
answers `{is_allowed: false, reason?, title?}` or `{is_allowed: true, mutations?: {user: {standard_attributes?,
custom_attributes?, roles?, groups?}}}` (ref). `apply_user_mutations` gives the user after a hook's mutations (the
next hook sees it); `record_changes` turns what the hooks changed into members of an import record, which the
request's own validation then checks. Non-blocking hooks get the webhooks' event (`webhooks/webhook_service.py`) and
their answer is ignored.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Final

from litestar_userio.errors import HookInvalidResponse
from litestar_userio.hooks.token_events import allowing_response

__all__ = [
    "BLOCKING_USER_EVENTS",
    "CHANGE_EVENTS",
    "PRE_CREATE",
    "PRE_UPDATE",
    "TRIGGERED_BY",
    "apply_user_mutations",
    "build_user_event",
    "record_changes",
]

PRE_CREATE: Final = "user.pre_create"
PRE_UPDATE: Final = "user.profile.pre_update"
BLOCKING_USER_EVENTS: Final = (PRE_CREATE, PRE_UPDATE)
CHANGE_EVENTS: Final = ("user.created", "user.profile.updated", "user.disabled", "user.reenabled", "user.deleted")
"""The non-blocking events: the change log's entry types, run after commit, their answer ignored."""

TRIGGERED_BY: Final = {
    "admin_api": "admin_api",
    "console": "portal",
    "sign_in": "user",
    "import": "system",
    "scim": "system",
    "cli": "system",
}
"""An event's `context.triggered_by` (the reference's values) for each origin of a change (`changes.ChangeOrigin`)."""

_MUTABLE: Final = ("standard_attributes", "custom_attributes", "roles", "groups")
_LOGIN_IDS: Final = ("email", "phone_number", "preferred_username")


def build_user_event(
    event_type: str, user: dict[str, Any], now: datetime, triggered_by: str, seq: int = 1
) -> dict[str, Any]:
    """The event a blocking user hook receives as `e`: the user as it would be after the change."""
    return {
        "id": str(uuid.uuid4()),
        "seq": seq,
        "type": event_type,
        "payload": {"user": user},
        "context": {"timestamp": int(now.timestamp()), "user_id": user.get("id"), "triggered_by": triggered_by},
    }


def apply_user_mutations(response: Any, user: dict[str, Any]) -> dict[str, Any]:
    """The user after one hook's answer; `HookDisallowed` when it refuses, `HookInvalidResponse` when malformed."""
    mutations = allowing_response(response, "mutations").get("mutations")
    if mutations is None:
        return user
    if not isinstance(mutations, dict) or set(mutations) - {"user"}:
        raise HookInvalidResponse("mutations may only hold user")
    changed = mutations.get("user")
    if changed is None:
        return user
    if not isinstance(changed, dict) or set(changed) - set(_MUTABLE):
        raise HookInvalidResponse(f"mutations.user may only hold {', '.join(_MUTABLE)}")
    result = dict(user)
    for member in ("standard_attributes", "custom_attributes"):
        if member in changed:
            if not isinstance(changed[member], dict):
                raise HookInvalidResponse(f"mutations.user.{member} must be an object")
            result[member] = dict(changed[member])
    for member in ("roles", "groups"):
        if member in changed:
            value = changed[member]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise HookInvalidResponse(f"mutations.user.{member} must be a list of strings")
            result[member] = sorted(set(value))
    return result


def record_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What the hooks changed, as members of an import record (an attribute gone is `null`, as an upsert removes it).

    Login ids are compared as the hooks saw them (normalized): a login id a hook left alone is not sent again.
    """
    changes: dict[str, Any] = {}
    old, new = before.get("standard_attributes") or {}, after.get("standard_attributes") or {}
    for key in new.keys() | old.keys():
        if key.endswith("_verified") and key[: -len("_verified")] in _LOGIN_IDS and key not in new:
            continue
        if new.get(key) != old.get(key):
            changes[key] = new.get(key)
    if after.get("custom_attributes") != before.get("custom_attributes"):
        changes["custom_attributes"] = after.get("custom_attributes")
    for member in ("roles", "groups"):
        if sorted(after.get(member) or []) != sorted(before.get(member) or []):
            changes[member] = after.get(member)
    return changes
