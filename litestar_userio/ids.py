"""Identifiers: task ids are a prefix and 32 Crockford base32 characters from a CSPRNG (DECISIONS 3, 4)."""

from __future__ import annotations

import base64
import os
import secrets

__all__ = ["new_id", "new_task_id"]

_CROCKFORD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789ABCDEFGHJKMNPQRSTVWXYZ")


def new_task_id(prefix: str) -> str:
    """`task_` or `userexport_` followed by 160 random bits in Crockford base32 (32 characters)."""
    return prefix + base64.b32encode(secrets.token_bytes(20)).decode().translate(_CROCKFORD)


_pool: list[str] = []


def new_id() -> str:
    """A row id (users, identities, ...): a random (version 4) UUID, as the reference's `sub`.

    Drawn from the OS CSPRNG 256 at a time: `uuid.uuid4()` per id cost 4 us, a fifth of a record's import.
    """
    if not _pool:
        data = bytearray(os.urandom(16 * 256))
        for offset in range(0, len(data), 16):
            data[offset + 6] = (data[offset + 6] & 0x0F) | 0x40
            data[offset + 8] = (data[offset + 8] & 0x3F) | 0x80
        hexed = data.hex()
        _pool.extend(
            f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
            for h in (hexed[i : i + 32] for i in range(0, len(hexed), 32))
        )
    return _pool.pop()
