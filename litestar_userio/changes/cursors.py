"""Opaque change-log cursors: versioned, bound to a project, checked (docs/changes.md).

A cursor is base64url (no padding) of: version (1 byte), the first 6 bytes of BLAKE2b of the project id, the
position (`xact`, `seq`: 8 bytes each, big-endian) and a 4-byte check (CRC-32, seeded) of what precedes it. A cursor of
another project, a mangled one or one of another version is refused (`InvalidCursor`). Nothing in it is secret:
it names a place in a log its holder may read whole; the check catches a cursor copied wrong or into the wrong
project.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import zlib
from functools import lru_cache

from litestar_userio.changes.entries import Position
from litestar_userio.errors import InvalidCursor

__all__ = ["LATEST", "decode_cursor", "encode_cursor"]

LATEST = "latest"
"""`cursor=latest`: no items, and the cursor of the newest committed entry."""

_VERSION = 1
_CHECK_SEED = zlib.crc32(b"userio-change-cursor")
_LENGTH = 1 + 6 + 8 + 8 + 4


@lru_cache(maxsize=4096)
def _project_tag(project_id: str) -> bytes:
    return bytes([_VERSION]) + hashlib.blake2b(project_id.encode(), digest_size=6).digest()


def _check(body: bytes) -> bytes:
    """A check, not a secret: a page of 1000 entries makes 1000 cursors (bench/changes.py)."""
    return zlib.crc32(body, _CHECK_SEED).to_bytes(4, "big")


def encode_cursor(project_id: str, position: Position) -> str:
    """The cursor of `position` in `project_id`'s log."""
    xact, seq = position.xact.to_bytes(8, "big"), position.seq.to_bytes(8, "big")
    body = _project_tag(project_id) + xact + seq
    return base64.urlsafe_b64encode(body + _check(body)).decode().rstrip("=")


def decode_cursor(project_id: str, cursor: str) -> Position:
    """The position a cursor of this project names; `InvalidCursor` for anything else."""
    try:
        raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidCursor() from exc
    if len(raw) != _LENGTH or raw[0] != _VERSION or raw[-4:] != _check(raw[:-4]):
        raise InvalidCursor()
    if raw[:7] != _project_tag(project_id):
        raise InvalidCursor("this cursor belongs to another project")
    return Position(int.from_bytes(raw[7:15], "big"), int.from_bytes(raw[15:23], "big"))
