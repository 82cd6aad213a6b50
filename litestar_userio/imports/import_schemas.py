"""Wire shapes of the import API (docs/reference.md#import).

A member that may be absent, null or set is typed `T | None | UnsetType`: the update behaviours
(docs/reference.md#import-updates) tell "absent" (no change) from "null" (remove) apart.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Raw, Struct, UnsetType

from litestar_userio.errors import ErrorObject

__all__ = [
    "IDENTIFIERS",
    "AddressInput",
    "ImportDetail",
    "ImportProgress",
    "ImportRequest",
    "ImportSummary",
    "ImportTaskCreated",
    "ImportTaskItem",
    "ImportTaskList",
    "ImportTaskStatus",
    "MFAInput",
    "OAuthIdentityInput",
    "PasswordCheck",
    "PasswordInput",
    "TOTPInput",
    "UserRecord",
    "Warning",
]

Identifier = Literal["preferred_username", "email", "phone_number"]
IDENTIFIERS: tuple[str, ...] = ("preferred_username", "email", "phone_number")

OptionalStr = str | None | UnsetType


class PasswordCheck(Struct, forbid_unknown_fields=True):
    """A known pair for the dry run: the record at `index` should verify `password`.

    See docs/reference.md#import-dry-run.
    """

    index: Annotated[int, Meta(ge=0)]
    password: str


class ImportRequest(Struct, forbid_unknown_fields=True):
    """The import request. Records stay raw here: each is validated on its own in the job.

    See docs/reference.md#import-request and docs/reference.md#import-outcomes-and-details.
    """

    identifier: Identifier
    records: Annotated[list[Raw], Meta(min_length=1)]
    upsert: bool = False
    dry_run: bool = False
    """Beyond the reference: run every check against the live data, report the outcomes, write nothing."""
    password_checks: Annotated[list[PasswordCheck], Meta(max_length=100)] | UnsetType = UNSET
    """Dry run only: each named record's detail says whether its password object verifies the plaintext
    (`password_check`); checked when the task is created, the plaintexts never stored."""


class PasswordInput(Struct, forbid_unknown_fields=True):
    """`bcrypt` and the other formats; the members beyond `password_hash` are theirs.

    See docs/reference.md#passwords-formats.
    """

    type: str
    password_hash: str | UnsetType = UNSET
    """Required but in `{"type": "migrate_on_sign_in"}` (docs/reference.md#hooks-lazy-migration), which has no other
    member."""
    expire_after: str | UnsetType = UNSET
    """RFC 3339 (ref): after it, the password signs in no more until it is changed."""
    salt: str | UnsetType = UNSET
    """`firebase_scrypt` (base64) and the weak digests (a string, used as its UTF-8 bytes)."""
    salt_position: Literal["prefix", "suffix"] | UnsetType = UNSET
    """Weak digests: the salt before or after the password (default `suffix`)."""
    signer_key: str | UnsetType = UNSET
    """`firebase_scrypt`, base64; else the project's `firebase_scrypt` setting's."""
    salt_separator: str | UnsetType = UNSET
    """`firebase_scrypt`, base64."""
    rounds: int | UnsetType = UNSET
    """`firebase_scrypt`."""
    mem_cost: int | UnsetType = UNSET
    """`firebase_scrypt`."""

    @property
    def stored_hash(self) -> str | None:
        """What validation left in `password_hash`: every parsed password, the marker too, has its stored form."""
        return self.password_hash if isinstance(self.password_hash, str) else None


class OAuthIdentityInput(Struct, forbid_unknown_fields=True):
    """A linked OAuth/OIDC identity; `provider_type` defaults to the alias.

    See docs/reference.md#import-linked-identities.
    """

    type: str
    provider_alias: str
    subject: str
    provider_type: str | UnsetType = UNSET
    claims: dict[str, Any] | UnsetType = UNSET


class TOTPInput(Struct, forbid_unknown_fields=True):
    """A TOTP second factor; `secret` is RFC 4648 base32 without padding."""

    secret: str


class MFAInput(Struct, forbid_unknown_fields=True):
    """Second factors of a record."""

    email: OptionalStr = UNSET
    phone_number: OptionalStr = UNSET
    password: PasswordInput | UnsetType = UNSET
    totp: TOTPInput | UnsetType = UNSET


class AddressInput(Struct, forbid_unknown_fields=True):
    """OIDC address; replaced whole on update (docs/reference.md#import-updates)."""

    formatted: OptionalStr = UNSET
    street_address: OptionalStr = UNSET
    locality: OptionalStr = UNSET
    region: OptionalStr = UNSET
    postal_code: OptionalStr = UNSET
    country: OptionalStr = UNSET


class UserRecord(Struct, forbid_unknown_fields=True):
    """One user of `records` (docs/reference.md#import-records)."""

    sub: str | UnsetType = UNSET
    """Beyond the reference (docs/reference.md#import-user-ids): the user's id in the old system, kept as its id here;
    set on insert only."""
    preferred_username: OptionalStr = UNSET
    email: OptionalStr = UNSET
    phone_number: OptionalStr = UNSET
    email_verified: bool | UnsetType = UNSET
    phone_number_verified: bool | UnsetType = UNSET
    name: OptionalStr = UNSET
    given_name: OptionalStr = UNSET
    family_name: OptionalStr = UNSET
    middle_name: OptionalStr = UNSET
    nickname: OptionalStr = UNSET
    profile: OptionalStr = UNSET
    picture: OptionalStr = UNSET
    website: OptionalStr = UNSET
    gender: OptionalStr = UNSET
    birthdate: OptionalStr = UNSET
    zoneinfo: OptionalStr = UNSET
    locale: OptionalStr = UNSET
    address: AddressInput | UnsetType | None = UNSET
    custom_attributes: dict[str, Any] | UnsetType = UNSET
    roles: list[str] | UnsetType = UNSET
    groups: list[str] | UnsetType = UNSET
    disabled: bool | UnsetType = UNSET
    account_valid_from: str | UnsetType = UNSET
    """RFC 3339 (ref): the account signs in from then on."""
    account_valid_until: str | UnsetType = UNSET
    """RFC 3339 (ref): the account signs in until then (exclusive)."""
    temporarily_disabled_from: str | UnsetType = UNSET
    """Beyond the reference's import (its Admin API sets it): RFC 3339, with `temporarily_disabled_until` a window in
    which the user is disabled (docs/reference.md#users-disabled-state); what the lossless export writes."""
    temporarily_disabled_until: str | UnsetType = UNSET
    """RFC 3339: the window's end (exclusive); both bounds or neither."""
    password: PasswordInput | UnsetType = UNSET
    mfa: MFAInput | UnsetType = UNSET
    identities: list[OAuthIdentityInput] | UnsetType = UNSET
    """Beyond the reference (docs/reference.md#import-linked-identities): linked OAuth identities, added or kept (never
    removed) by an update."""


class ImportTaskCreated(Struct):
    """The initiate answer: no `result` wrapper (docs/reference.md#import-request)."""

    id: str
    created_at: datetime
    status: Literal["pending", "completed"]


class ImportSummary(Struct):
    """A completed task's `summary` (docs/reference.md#import-task-lifecycle)."""

    total: int
    inserted: int
    updated: int
    skipped: int
    failed: int


class ImportProgress(Struct):
    """While pending (beyond the reference): how far the task got."""

    total: int
    processed: int


class Warning(Struct):
    """A note on a record that was applied anyway."""

    message: str


class ImportDetail(Struct, omit_defaults=True):
    """The detail of one record; a failed one carries `errors` and no `user_id`.

    See docs/reference.md#import-outcomes-and-details.
    """

    index: int
    record: Any
    outcome: Literal["inserted", "updated", "skipped", "failed"]
    user_id: str | UnsetType = UNSET
    warnings: list[Warning] | UnsetType = UNSET
    errors: list[ErrorObject] | UnsetType = UNSET
    password_check: Literal["verified", "mismatch", "unsupported"] | UnsetType = UNSET
    """Dry run with `password_checks`: whether the record's password object verified the given plaintext."""


class ImportTaskStatus(Struct, omit_defaults=True, kw_only=True):
    """The status body (docs/reference.md#import-task-lifecycle); `details` is pre-encoded JSON kept with the task."""

    id: str
    created_at: datetime
    completed_at: datetime | UnsetType = UNSET
    """Once completed (ref): when the last record was applied."""
    status: Literal["pending", "completed"]
    summary: ImportSummary | UnsetType = UNSET
    details: Raw | list[ImportDetail] | UnsetType = UNSET
    progress: ImportProgress | UnsetType = UNSET
    stalled_since: datetime | UnsetType = UNSET
    """While pending, once a chunk has waited for a worker longer than a lease (`QueueConfig.lease_ttl`): when it
    was enqueued. No worker of this deployment has taken it: workers down, or busy with a backlog, or the queue
    shared with another deployment (docs/operations.md#stalled-tasks)."""


class ImportTaskItem(Struct, omit_defaults=True):
    """A task in the project's list: its status and counters, never its details."""

    id: str
    created_at: datetime
    status: Literal["pending", "completed"]
    dry_run: bool
    completed_at: datetime | UnsetType = UNSET
    summary: ImportSummary | UnsetType = UNSET
    progress: ImportProgress | UnsetType = UNSET


class ImportTaskList(Struct):
    """`GET /users/import`: newest first; `next_cursor` is null on the last page."""

    items: list[ImportTaskItem]
    next_cursor: str | None


def encode(value: Any) -> bytes:
    """JSON-encode a wire struct."""
    return msgspec.json.encode(value)
