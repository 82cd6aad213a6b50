"""Wire schemas of the directory reads (`GET /applications`, `/custom-attributes`)."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["Application", "ApplicationList", "CustomAttributeList", "Items"]


class Application(msgspec.Struct):
    """A client of the project."""

    client_id: str
    name: str | None
    issue_jwt_access_token: bool


class Items(msgspec.Struct):
    """A short list (no paging: pickers show the first matches)."""

    items: list[Any]


class ApplicationList(msgspec.Struct):
    """Envelope of the client list."""

    result: Items


class CustomAttributeList(msgspec.Struct):
    """Envelope of the declared custom attributes."""

    result: Items
