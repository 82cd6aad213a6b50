"""litestar-userio: bulk user import/export and TypeScript token hooks for Litestar auth servers.

The names below load on first use (PEP 562), so the migration client (`userio`, litestar_userio/transfer/),
which imports a few server modules such as the login-id normalization, does not pay for Litestar, Piccolo and
the plugin at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from litestar_userio.config import (
        AuthConfig,
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
        TokenConfig,
        TracingConfig,
        UserIOConfig,
    )
    from litestar_userio.plugin import UserIOPlugin

__all__ = [
    "AuthConfig",
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
    "TokenConfig",
    "TracingConfig",
    "UserIOConfig",
    "UserIOPlugin",
]

_MODULES = dict.fromkeys(__all__, "litestar_userio.config") | {"UserIOPlugin": "litestar_userio.plugin"}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'litestar_userio' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
