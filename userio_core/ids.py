"""Identifiers: task ids are a prefix and 32 Crockford base32 characters from a CSPRNG.

See docs/reference.md#import-task-lifecycle and docs/reference.md#export-task-lifecycle.
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import time

__all__ = ["RESERVED_USER_IDS", "USER_ID_PATTERN", "is_user_id", "new_id", "new_task_id"]

RESERVED_USER_IDS: tuple[str, ...] = ("changes", "export", "id", "import", "password-migration")
"""The fixed path segments of the admin API under `/users/` (`/users/import`, `/users/export`,
`/users/password-migration`, `/users/changes`, and `/users/id/{id}`, the form that reaches any id): `/users/{id}` with
one of them as the id would be another endpoint, so no new user may have one. `tests/users/test_reserved_ids.py`
holds this list equal to the routes' literal segments."""
USER_ID_PATTERN = rf"^(?!(?:{'|'.join(RESERVED_USER_IDS)})\Z)[A-Za-z0-9][A-Za-z0-9._:|@-]{{0,127}}\Z"
"""An id a user may bring from the old system (docs/reference.md#import-user-ids): any UUID, or 1-128 of
`A-Za-z0-9._:|@-` starting with a letter or digit; not one of `RESERVED_USER_IDS`, which read as the admin API's
own paths."""
_USER_ID = re.compile(USER_ID_PATTERN)


def is_user_id(value: str) -> bool:
    """Whether `value` is a user id this server takes (`USER_ID_PATTERN`)."""
    return _USER_ID.match(value) is not None


_CROCKFORD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789ABCDEFGHJKMNPQRSTVWXYZ")


def new_task_id(prefix: str) -> str:
    """`task_` or `userexport_` followed by 160 random bits in Crockford base32 (32 characters)."""
    return prefix + base64.b32encode(secrets.token_bytes(20)).decode().translate(_CROCKFORD)


_pool: list[str] = []
_drawn_at = 0
"""When (ns since the epoch) the ids in `_pool` were drawn: their timestamp."""
_BATCH = 256
_MAX_AGE_NS = 1_000_000_000
"""Ids left over from a batch older than this are dropped, so an id's time is never more than a second old."""
_VARIANT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}
"""The variant nibble (binary 10xx) from a random hex digit's two low bits."""


def new_id() -> str:
    """A row id (users, identities, ...): a time-ordered (version 7, RFC 9562) UUID.

    Time-ordered ids land at the right edge of every index keyed on them, where random (version 4) ids
    touched a random leaf page per row: COPY of 200 000 identities cost 15.8-16.1 us of PostgreSQL CPU per
    row with version 4 ids, 8.8-10.2 with version 7, and 11 % less WAL; at tens of millions of users, where
    the indexes outgrow memory, a random leaf is a disk read. 48 bits of milliseconds, then 74 random bits
    from the OS CSPRNG, drawn 256 at a time and formatted from one hex string (`uuid.uuid4()` per id cost 4 us,
    a fifth of a record's import; setting the version and variant bits byte by byte 0.86 us, this 0.57, best of
    five in one run).
    """
    global _drawn_at
    now = time.time_ns()
    if not _pool or not 0 <= now - _drawn_at < _MAX_AGE_NS:
        _pool.clear()
        _drawn_at = now
        stamp = (now // 1_000_000).to_bytes(6, "big").hex()
        head = f"{stamp[:8]}-{stamp[8:]}-7"
        digits = os.urandom(10 * _BATCH).hex()  # 20 random hex digits an id: 19 used (one gives the variant two bits)
        variant = _VARIANT
        _pool.extend(
            f"{head}{digits[i : i + 3]}-{variant[digits[i + 3]]}{digits[i + 4 : i + 7]}-{digits[i + 7 : i + 19]}"
            for i in range(20 * (_BATCH - 1), -1, -20)  # popped from the end: in the order drawn
        )
    return _pool.pop()
