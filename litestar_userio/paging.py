"""Keyset pages of a project's tasks, newest first: `?limit=N&cursor=C` of the admin list endpoints."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime

import msgspec

from litestar_userio.errors import InvalidRequest

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "PageCursor", "decode_cursor", "encode_cursor"]

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


class PageCursor(msgspec.Struct, array_like=True, frozen=True):
    """Where the previous page ended: the last item's creation time and id (ids break ties)."""

    created_at: datetime
    id: str


def encode_cursor(cursor: PageCursor) -> str:
    """An opaque, URL-safe token for the next page."""
    return base64.urlsafe_b64encode(msgspec.json.encode(cursor)).rstrip(b"=").decode()


def decode_cursor(token: str | None) -> PageCursor | None:
    """The cursor a client sent back; `InvalidRequest` when it is not one we made."""
    if not token:
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        return msgspec.json.decode(raw, type=PageCursor)
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise InvalidRequest("cursor is not a cursor this server returned") from None
