"""A user as one in-memory aggregate: attributes, login ids, authenticators, roles and groups.

The import loads the users a chunk touches into `UserState`s, applies records to them in index order, and
the repository writes the difference back in bulk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from litestar_userio.changes.entries import ChangeKind

__all__ = ["AuthenticatorState", "LoginID", "OAuthLink", "UserState", "disabled_state", "is_disabled_at"]


def disabled_state(
    now: datetime,
    *,
    disabled: bool,
    temporarily_disabled_from: datetime | None = None,
    temporarily_disabled_until: datetime | None = None,
    account_valid_from: datetime | None = None,
    account_valid_until: datetime | None = None,
) -> str | None:
    """Why a user is disabled at `now` (ref `IsDisabled`), or None when it is not.

    The one rule of docs/reference.md#users-disabled-state.

    `disabled` (until enabled), `temporarily_disabled` (inside the window, from inclusive, until exclusive),
    `outside_valid_period` (before `account_valid_from`, or from `account_valid_until` on). Export, the admin
    API, hook events and sign-in all ask here.
    """
    if disabled:
        return "disabled"
    if (
        temporarily_disabled_from is not None
        and temporarily_disabled_until is not None
        and temporarily_disabled_from <= now < temporarily_disabled_until
    ):
        return "temporarily_disabled"
    if (account_valid_from is not None and now < account_valid_from) or (
        account_valid_until is not None and now >= account_valid_until
    ):
        return "outside_valid_period"
    return None


def is_disabled_at(user: UserState, now: datetime) -> bool:
    """Whether `user` is reported `disabled` at `now` (`disabled_state` of its columns)."""
    return (
        disabled_state(
            now,
            disabled=user.disabled,
            temporarily_disabled_from=user.temporarily_disabled_from,
            temporarily_disabled_until=user.temporarily_disabled_until,
            account_valid_from=user.account_valid_from,
            account_valid_until=user.account_valid_until,
        )
        is not None
    )


@dataclass
class LoginID:
    """An identity of type login id. `attribute` is the standard attribute it mirrors."""

    id: str
    attribute: str
    key: str
    original: str
    normalized: str
    created_at: datetime


@dataclass
class OAuthLink:
    """A linked OAuth/OIDC identity: the user signs in with `subject` at `provider_alias`.

    See docs/reference.md#import-linked-identities.
    """

    id: str
    provider_alias: str
    provider_type: str
    subject: str
    claims: dict[str, Any]
    created_at: datetime
    changed: bool = False
    """New, or its type or claims changed since it was loaded."""


@dataclass
class AuthenticatorState:
    """A primary password or a second factor."""

    id: str
    kind: str
    type: str
    created_at: datetime
    password_hash: str | None = None
    totp_secret: str | None = None
    oob_target: str | None = None
    expire_after: datetime | None = None
    """A password past it does not sign in (ref `password.expire_after`)."""


@dataclass
class UserState:
    """A user and everything the import may change about it.

    `standard` holds the profile attributes only; login ids live in `login_ids` and their verification in
    `verified` (the set of login-id attributes whose current value is verified). `standard_attributes()`
    assembles the stored and exported object.
    """

    id: str
    created_at: datetime
    updated_at: datetime
    is_new: bool = False
    disabled: bool = False
    standard: dict[str, Any] = field(default_factory=dict)
    custom: dict[str, Any] = field(default_factory=dict)
    login_ids: dict[str, LoginID] = field(default_factory=dict)
    verified: set[str] = field(default_factory=set)
    authenticators: list[AuthenticatorState] = field(default_factory=list)
    oauth: dict[tuple[str, str], OAuthLink] = field(default_factory=dict)
    """Linked identities by (provider alias, subject)."""
    roles: set[str] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    account_valid_from: datetime | None = None
    account_valid_until: datetime | None = None
    temporarily_disabled_from: datetime | None = None
    temporarily_disabled_until: datetime | None = None
    disable_reason: str | None = None
    last_login_at: datetime | None = None
    changed: bool = False
    change_kind: ChangeKind | None = None
    """What the change log calls this change when it is not inferred (`password_changed`, `disabled`, `enabled`)."""
    roles_changed: bool = False
    groups_changed: bool = False

    def standard_attributes(self) -> dict[str, Any]:
        """The OIDC standard attributes: login ids (normalized, as their identities hold them), then the profile."""
        attributes: dict[str, Any] = {}
        for attribute in ("email", "phone_number", "preferred_username"):
            login_id = self.login_ids.get(attribute)
            if login_id is not None:
                attributes[attribute] = login_id.normalized  # the reference stores the normalized login id
                if attribute != "preferred_username":
                    attributes[f"{attribute}_verified"] = attribute in self.verified
        attributes.update(self.standard)
        return attributes
