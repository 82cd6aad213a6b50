"""litestar-userio: bulk user import/export and TypeScript token hooks for Litestar auth servers.

Everything a host uses is importable from here: the plugin and its configuration, each service (a handler takes
them by DI under `UserIOConfig.dependency_keys`), the structs they return and the errors they raise. The `userio`
client is its own package (`userio_client`, the `litestar-userio-client` distribution) and never imports this one.
"""

from __future__ import annotations

from litestar_userio.accounts.sign_in_service import Refreshed, SignedIn, UserService
from litestar_userio.accounts.user_admin import UserAdminService, UserPage
from litestar_userio.alembic import include_object
from litestar_userio.changes.change_service import ChangeConsumer, ChangePage, ChangeService
from litestar_userio.changes.entries import ChangeEntry, ChangeOrigin
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
    PasswordHashBounds,
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
    InvalidSignInRequest,
    NotFound,
    PasswordExpired,
    PasswordVerificationBusy,
    RefreshTokenInvalid,
    ServiceUnavailable,
    SignInRefused,
    UnknownClient,
    UnstorableText,
    UserDisabled,
    UserIOError,
    UserOutsideValidPeriod,
    UserTemporarilyDisabled,
    ValidationFailed,
)
from litestar_userio.exports.export_service import ExportService
from litestar_userio.hooks.hook_service import HookService
from litestar_userio.hooks.token_events import EventContext
from litestar_userio.imports.import_service import ImportService
from litestar_userio.plugin import UserIOPlugin
from litestar_userio.projects.project_repository import ProjectRecord
from litestar_userio.projects.project_service import ProjectService
from litestar_userio.projects.settings import ProjectSettings
from litestar_userio.services import Services
from litestar_userio.tokens.applications import ApplicationService
from litestar_userio.tokens.keys import SigningKeyStore
from litestar_userio.tokens.refresh import RefreshGrant, RefreshTokenService
from litestar_userio.tokens.token_repository import ApplicationRecord
from litestar_userio.tokens.token_service import AccessToken, TokenResponse, TokenService
from litestar_userio.users.model import UserState
from litestar_userio.webhooks.webhook_service import WebhookService

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
    "InvalidSignInRequest",
    "LocalStorageConfig",
    "MetricsConfig",
    "NotFound",
    "PasswordConfig",
    "PasswordExpired",
    "PasswordHashBounds",
    "PasswordVerificationBusy",
    "ProjectRecord",
    "ProjectService",
    "ProjectSettings",
    "QueueConfig",
    "RateLimit",
    "RefreshGrant",
    "RefreshTokenInvalid",
    "RefreshTokenService",
    "Refreshed",
    "S3StorageConfig",
    "ScimConfig",
    "ServiceUnavailable",
    "Services",
    "SignInRefused",
    "SignedIn",
    "SigningKeyStore",
    "TokenConfig",
    "TokenResponse",
    "TokenService",
    "TracingConfig",
    "UnknownClient",
    "UnstorableText",
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
    "ValidationFailed",
    "WebhookConfig",
    "WebhookService",
    "include_object",
]
