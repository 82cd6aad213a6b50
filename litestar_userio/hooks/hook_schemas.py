"""Wire shapes of the hooks admin API; answers use the export-style envelope `{"result": ...}`."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from msgspec import UNSET, Struct, UnsetType

from litestar_userio.hooks.hook_service import HookPreview, HookSpec

__all__ = [
    "HookList",
    "HookListResult",
    "HookRunEntry",
    "HookRunPage",
    "HookRunPageResult",
    "HookSecretInfo",
    "HookSecretList",
    "HookSecretListResult",
    "HookSecretResult",
    "HookSecretValue",
    "HookTestRequest",
    "HookTestResult",
    "HookVersion",
    "HookVersionActor",
    "HookVersionList",
    "HookVersionListResult",
    "HookVersionResult",
]


class HookList(Struct, forbid_unknown_fields=True):
    """The project's ordered hooks and its fetch allowlist (PUT body and GET answer)."""

    hooks: list[HookSpec]
    fetch_allowlist: list[str] | UnsetType = UNSET
    """Origins hooks may `fetch` (`https://api.example.com`, `http://127.0.0.1:8080`); a PUT without it keeps the
    saved list."""


class HookListResult(Struct, omit_defaults=True):
    """Envelope of the hook list; a save's `warnings` beside it (docs/reference.md#hooks-compiling)."""

    result: HookList
    warnings: list[str] | UnsetType = UNSET
    """A save's: each hook that answered a sample event of its kind in a wrong shape (saved all the same)."""


class HookTestRequest(Struct, forbid_unknown_fields=True):
    """Run hooks without issuing or creating anything (beyond the reference).

    A token event runs against a user and client (`user_id`, `client_id`); `user.password_migration` against a
    sample sign-in (`login_id`, `password`, and `user_id` for a waiting user), the event's shape as sign-in builds it.
    """

    event: Literal["oidc.jwt.pre_create", "oidc.id_token.pre_create", "user.password_migration"]
    user_id: str | UnsetType = UNSET
    """The user (`sub`): required for a token event; for a migration, the waiting user the event carries."""
    client_id: str | UnsetType = UNSET
    """The OAuth client the token would be for: required for a token event."""
    login_id: str | UnsetType = UNSET
    """`user.password_migration`: the login id signed in with [default: `sample@example.com`]."""
    password: str | UnsetType = UNSET
    """`user.password_migration`: the password signed in with (masked in the answer) [default: `sample-password`]."""
    hooks: list[HookSpec] | UnsetType = UNSET
    """Hooks to try instead of the saved ones."""


class HookTestResult(Struct):
    """Envelope of a test run."""

    result: HookPreview


class HookSecretValue(Struct, forbid_unknown_fields=True):
    """`PUT /hooks/secrets/{name}` body."""

    value: str


class HookSecretInfo(Struct):
    """A secret as the API shows it: never its value."""

    name: str
    updated_at: datetime


class HookSecretResult(Struct):
    """Envelope of one secret."""

    result: HookSecretInfo


class HookSecretList(Struct):
    """The project's secrets, by name."""

    secrets: list[HookSecretInfo]


class HookSecretListResult(Struct):
    """Envelope of the secrets."""

    result: HookSecretList


class HookVersionActor(Struct):
    """Who saved a version: the admin token's key id and subject."""

    kid: str | None
    sub: str | None


class HookVersion(Struct, omit_defaults=True):
    """A saved version; `body` (what was saved: hooks and fetch allowlist) only when one version is asked for."""

    version: int
    created_at: datetime
    actor: HookVersionActor
    body: dict[str, Any] | UnsetType = UNSET


class HookVersionList(Struct):
    """Every version, newest first."""

    versions: list[HookVersion]


class HookVersionListResult(Struct):
    """Envelope of the versions."""

    result: HookVersionList


class HookVersionResult(Struct):
    """Envelope of one version."""

    result: HookVersion


class HookRunEntry(Struct):
    """One production run: never the claims' values, only their names; console with secrets masked."""

    event: str
    hook_index: int
    started_at: datetime
    duration_ms: float
    outcome: Literal["allowed", "refused", "error"]
    error_kind: str | None
    console: list[dict[str, str]]
    claims_added: list[str]
    sampled_rate: float
    """The share of allowed runs logged at the time (1.0: every run; refusals and errors are always logged)."""


class HookRunPage(Struct):
    """A page of the run log, newest first."""

    runs: list[HookRunEntry]
    next_cursor: str | None
    """Pass as `cursor` for the next (older) page; null on the last page."""


class HookRunPageResult(Struct):
    """Envelope of a run log page."""

    result: HookRunPage
