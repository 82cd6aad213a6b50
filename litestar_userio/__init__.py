"""litestar-userio: bulk user import/export and TypeScript token hooks for Litestar auth servers."""

from litestar_userio.config import (
    AuthConfig,
    ConsoleConfig,
    ExportConfig,
    HookConfig,
    ImportConfig,
    LocalStorageConfig,
    PasswordConfig,
    QueueConfig,
    RateLimit,
    S3StorageConfig,
    TokenConfig,
    UserIOConfig,
)
from litestar_userio.plugin import UserIOPlugin

__all__ = [
    "AuthConfig",
    "ConsoleConfig",
    "ExportConfig",
    "HookConfig",
    "ImportConfig",
    "LocalStorageConfig",
    "PasswordConfig",
    "QueueConfig",
    "RateLimit",
    "S3StorageConfig",
    "TokenConfig",
    "UserIOConfig",
    "UserIOPlugin",
]
