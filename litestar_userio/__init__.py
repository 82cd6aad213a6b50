"""litestar-userio: bulk user import/export and TypeScript token hooks for Litestar auth servers.

Everything a host uses is importable from here: the plugin and its configuration, each service (a handler takes
them by DI under `UserIOConfig.dependency_keys`), the structs they return and the errors they raise.

The names load on first use (PEP 562), so the migration client (`userio`, litestar_userio/transfer/), which
imports a few server modules such as the login-id normalization, does not pay for Litestar, Piccolo and the
plugin at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from litestar_userio.accounts.admin import UserAdminService, UserPage
    from litestar_userio.accounts.service import UserService
    from litestar_userio.alembic import include_object
    from litestar_userio.changes.entries import ChangeEntry, ChangeOrigin
    from litestar_userio.changes.service import ChangeConsumer, ChangePage, ChangeService
    from litestar_userio.config import (
        AuthConfig,
        ChangeLogConfig,
        ConsoleConfig,
        DependencyKeys,
        ExportConfig,
        HookConfig,
        ImportConfig,
        LocalStorageConfig,
        MetricsConfig,
        PasswordConfig,
        QueueConfig,
        RateLimit,
        S3StorageConfig,
        ScimConfig,
        TokenConfig,
        TracingConfig,
        UserIOConfig,
        WebhookConfig,
    )
    from litestar_userio.errors import (
        ChangeCursorExpired,
        DatabaseUnavailable,
        HookDisallowed,
        HookError,
        InvalidCredentials,
        InvalidCursor,
        InvalidRequest,
        NotFound,
        PasswordExpired,
        PasswordVerificationBusy,
        RefreshTokenInvalid,
        ServiceUnavailable,
        SignInRefused,
        UnknownClient,
        UserDisabled,
        UserIOError,
        UserOutsideValidPeriod,
        UserTemporarilyDisabled,
    )
    from litestar_userio.exports.service import ExportService
    from litestar_userio.hooks.events import EventContext
    from litestar_userio.hooks.service import HookService
    from litestar_userio.imports.service import ImportService
    from litestar_userio.plugin import UserIOPlugin
    from litestar_userio.projects.repository import ProjectRecord
    from litestar_userio.projects.service import ProjectService
    from litestar_userio.projects.settings import ProjectSettings
    from litestar_userio.services import Services
    from litestar_userio.tokens.applications import ApplicationService
    from litestar_userio.tokens.keys import SigningKeyStore
    from litestar_userio.tokens.refresh import RefreshGrant, RefreshTokenService
    from litestar_userio.tokens.repository import ApplicationRecord
    from litestar_userio.tokens.service import AccessToken, TokenResponse, TokenService
    from litestar_userio.users.model import UserState
    from litestar_userio.webhooks.service import WebhookService

__all__ = [
    "AccessToken",
    "ApplicationRecord",
    "ApplicationService",
    "AuthConfig",
    "ChangeConsumer",
    "ChangeCursorExpired",
    "ChangeEntry",
    "ChangeLogConfig",
    "ChangeOrigin",
    "ChangePage",
    "ChangeService",
    "ConsoleConfig",
    "DatabaseUnavailable",
    "DependencyKeys",
    "EventContext",
    "ExportConfig",
    "ExportService",
    "HookConfig",
    "HookDisallowed",
    "HookError",
    "HookService",
    "ImportConfig",
    "ImportService",
    "InvalidCredentials",
    "InvalidCursor",
    "InvalidRequest",
    "LocalStorageConfig",
    "MetricsConfig",
    "NotFound",
    "PasswordConfig",
    "PasswordExpired",
    "PasswordVerificationBusy",
    "ProjectRecord",
    "ProjectService",
    "ProjectSettings",
    "QueueConfig",
    "RateLimit",
    "RefreshGrant",
    "RefreshTokenInvalid",
    "RefreshTokenService",
    "S3StorageConfig",
    "ScimConfig",
    "ServiceUnavailable",
    "Services",
    "SignInRefused",
    "SigningKeyStore",
    "TokenConfig",
    "TokenResponse",
    "TokenService",
    "TracingConfig",
    "UnknownClient",
    "UserAdminService",
    "UserDisabled",
    "UserIOConfig",
    "UserIOError",
    "UserIOPlugin",
    "UserOutsideValidPeriod",
    "UserPage",
    "UserService",
    "UserState",
    "UserTemporarilyDisabled",
    "WebhookConfig",
    "WebhookService",
    "include_object",
]

_MODULES = {
    name: module
    for module, names in {
        "litestar_userio.config": [
            "AuthConfig",
            "ChangeLogConfig",
            "ConsoleConfig",
            "DependencyKeys",
            "ExportConfig",
            "HookConfig",
            "ImportConfig",
            "LocalStorageConfig",
            "MetricsConfig",
            "PasswordConfig",
            "QueueConfig",
            "RateLimit",
            "S3StorageConfig",
            "ScimConfig",
            "TokenConfig",
            "TracingConfig",
            "UserIOConfig",
            "WebhookConfig",
        ],
        "litestar_userio.plugin": ["UserIOPlugin"],
        "litestar_userio.services": ["Services"],
        "litestar_userio.accounts.service": ["UserService"],
        "litestar_userio.accounts.admin": ["UserAdminService", "UserPage"],
        "litestar_userio.users.model": ["UserState"],
        "litestar_userio.tokens.service": ["AccessToken", "TokenResponse", "TokenService"],
        "litestar_userio.tokens.applications": ["ApplicationService"],
        "litestar_userio.tokens.repository": ["ApplicationRecord"],
        "litestar_userio.tokens.keys": ["SigningKeyStore"],
        "litestar_userio.tokens.refresh": ["RefreshGrant", "RefreshTokenService"],
        "litestar_userio.projects.service": ["ProjectService"],
        "litestar_userio.projects.repository": ["ProjectRecord"],
        "litestar_userio.projects.settings": ["ProjectSettings"],
        "litestar_userio.imports.service": ["ImportService"],
        "litestar_userio.exports.service": ["ExportService"],
        "litestar_userio.hooks.service": ["HookService"],
        "litestar_userio.hooks.events": ["EventContext"],
        "litestar_userio.webhooks.service": ["WebhookService"],
        "litestar_userio.changes.entries": ["ChangeEntry", "ChangeOrigin"],
        "litestar_userio.changes.service": ["ChangeConsumer", "ChangePage", "ChangeService"],
        "litestar_userio.errors": [
            "ChangeCursorExpired",
            "DatabaseUnavailable",
            "HookDisallowed",
            "HookError",
            "InvalidCredentials",
            "InvalidCursor",
            "InvalidRequest",
            "NotFound",
            "PasswordExpired",
            "PasswordVerificationBusy",
            "RefreshTokenInvalid",
            "ServiceUnavailable",
            "SignInRefused",
            "UnknownClient",
            "UserDisabled",
            "UserIOError",
            "UserOutsideValidPeriod",
            "UserTemporarilyDisabled",
        ],
        "litestar_userio.alembic": ["include_object"],
    }.items()
    for name in names
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'litestar_userio' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
