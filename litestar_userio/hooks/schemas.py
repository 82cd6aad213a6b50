"""Wire shapes of the hooks admin API; answers use the export-style envelope `{"result": ...}`."""

from __future__ import annotations

from typing import Literal

from msgspec import UNSET, Struct, UnsetType

from litestar_userio.hooks.service import HookSpec
from litestar_userio.tokens.service import HookPreview

__all__ = ["HookList", "HookListResult", "HookTestRequest", "HookTestResult"]


class HookList(Struct, forbid_unknown_fields=True):
    """The project's ordered hooks (PUT body and GET answer)."""

    hooks: list[HookSpec]


class HookListResult(Struct):
    """Envelope of the hook list."""

    result: HookList


class HookTestRequest(Struct, forbid_unknown_fields=True):
    """Run hooks against a user and client without issuing anything (beyond the reference)."""

    event: Literal["oidc.jwt.pre_create", "oidc.id_token.pre_create"]
    user_id: str
    client_id: str
    hooks: list[HookSpec] | UnsetType = UNSET
    """Hooks to try instead of the saved ones."""


class HookTestResult(Struct):
    """Envelope of a test run."""

    result: HookPreview
