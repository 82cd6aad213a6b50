"""One Router holding every route of the plugin, the one thing the plugin mounts."""

from __future__ import annotations

from litestar import Router
from litestar.di import Provide
from litestar.types import ControllerRouterHandler

from litestar_userio.config import LocalStorageConfig, UserIOConfig
from litestar_userio.openapi import ADMIN_SECURITY
from litestar_userio.web.bodies import StrictBodyRequest
from litestar_userio.web.console import build_console_controller
from litestar_userio.web.directory import build_directory_controller
from litestar_userio.web.downloads import build_download_controller
from litestar_userio.web.exports import build_export_controller
from litestar_userio.web.hooks import build_hooks_controller
from litestar_userio.web.imports import build_import_controller
from litestar_userio.web.jwks import build_jwks_controller
from litestar_userio.web.operations import build_health_controller, build_metrics_controller
from litestar_userio.web.password_migration import build_password_migration_controller
from litestar_userio.web.providers import DOWNLOAD_STORAGE_KEY, provide_storage
from litestar_userio.web.users import build_users_controller

__all__ = ["build_router"]


def build_router(config: UserIOConfig) -> Router:
    """The admin API (under the admin security scheme), and each public route only when configured."""
    admin_api: list[ControllerRouterHandler] = [
        build_import_controller(config),
        build_export_controller(config),
        build_hooks_controller(config),
        build_directory_controller(config),
        build_users_controller(config),
        build_password_migration_controller(config),
    ]
    routes: list[ControllerRouterHandler] = [Router("/", route_handlers=admin_api, security=ADMIN_SECURITY)]
    if config.tokens.jwks_path is not None:
        routes.append(build_jwks_controller(config.tokens.jwks_path))
    if config.console is not None:
        routes.append(build_console_controller(config.console))
    if config.health_path is not None:
        routes.append(build_health_controller(config.health_path))
    if config.metrics is not None:
        routes.append(build_metrics_controller(config.metrics.path))
    storage = config.exports.storage
    if isinstance(storage, LocalStorageConfig):
        download = build_download_controller(storage.route_path)
        store = {DOWNLOAD_STORAGE_KEY: Provide(provide_storage, sync_to_thread=False)}
        routes.append(Router("/", route_handlers=[download], dependencies=store))
    return Router("/", route_handlers=routes, request_class=StrictBodyRequest)
