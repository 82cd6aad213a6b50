"""Wire shapes of the password migration's state: what is left to re-hash, per format.

See docs/reference.md#passwords-re-hash-at-sign-in.
"""

from __future__ import annotations

from msgspec import Struct

__all__ = ["FormatCount", "PasswordMigration", "PasswordMigrationResult"]


class FormatCount(Struct):
    """Users whose primary password is in one format."""

    users: int
    never_signed_in: int
    """Of them, users who have not signed in since they were imported (or created)."""


class PasswordMigration(Struct):
    """The project's users by the format of their primary password; legacy formats go at their first sign-in."""

    password_algorithm: str
    """The project's target (`bcrypt` or `argon2id`)."""
    users: int
    never_signed_in: int
    without_password: int
    awaiting_rehash: int
    """Users whose password is not yet in `password_algorithm`: re-hashed at their next good sign-in."""
    awaiting_rehash_never_signed_in: int
    formats: dict[str, FormatCount]
    """By `password.type` (`argon2` counts argon2id, argon2i and argon2d)."""


class PasswordMigrationResult(Struct):
    """`GET /users/password-migration` (the export-style envelope)."""

    result: PasswordMigration
