"""The webhooks API's bodies and answers (docs/webhooks.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

__all__ = [
    "CHANGE_TYPES",
    "DeliveryInfo",
    "DeliveryPage",
    "DeliveryPageResult",
    "DeliveryResult",
    "WebhookInfo",
    "WebhookList",
    "WebhookListResult",
    "WebhookSpec",
    "WebhookSpecList",
]

CHANGE_TYPES: tuple[str, ...] = (
    "user.created",
    "user.profile.updated",
    "user.disabled",
    "user.reenabled",
    "user.deleted",
)
"""The change-log entry types a webhook may ask for."""

ChangeType = Literal["user.created", "user.profile.updated", "user.disabled", "user.reenabled", "user.deleted"]
DeliveryStatus = Literal["pending", "succeeded", "failed"]


class WebhookSpec(msgspec.Struct, forbid_unknown_fields=True):
    """One webhook of a `PUT /webhooks` body."""

    url: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
    events: Annotated[list[ChangeType], msgspec.Meta(min_length=1, max_length=len(CHANGE_TYPES))]
    include_import: bool = False


class WebhookSpecList(msgspec.Struct, forbid_unknown_fields=True):
    """`PUT /webhooks`: the whole list, replacing the saved one."""

    webhooks: list[WebhookSpec]


class WebhookInfo(msgspec.Struct, omit_defaults=True):
    """A saved webhook; `secret` only in the answer that created it (or rotated it)."""

    id: str
    url: str
    events: list[str]
    include_import: bool
    secret: str | msgspec.UnsetType = msgspec.UNSET


class WebhookList(msgspec.Struct):
    """The saved webhooks."""

    webhooks: list[WebhookInfo]


class WebhookListResult(msgspec.Struct):
    """`{"result": {"webhooks": [...]}}`."""

    result: WebhookList


class DeliveryInfo(msgspec.Struct):
    """One delivery: which entry to which webhook, and where its attempts stand."""

    id: str
    webhook_id: str
    change_id: str
    event_type: str
    user_id: str
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None
    last_error: str | None
    next_attempt_at: datetime | None
    """When the next attempt is due; None once succeeded or failed."""
    created_at: datetime
    updated_at: datetime


class DeliveryResult(msgspec.Struct):
    """`{"result": delivery}`."""

    result: DeliveryInfo


class DeliveryPage(msgspec.Struct):
    """A page of deliveries and the cursor of the next (None on the last)."""

    items: list[DeliveryInfo]
    next_cursor: str | None


class DeliveryPageResult(msgspec.Struct):
    """`{"result": page}`."""

    result: DeliveryPage
