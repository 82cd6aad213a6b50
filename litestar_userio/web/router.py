"""One Router holding every route of the plugin, the one thing the plugin mounts.

The controllers are module-level classes with fixed relative paths; this is the one place that reads the
configuration for the web layer: the admin prefix, the import body limit, and where each public route sits.
"""

from __future__ import annotations

from litestar import Controller, Router
from litestar.di import Provide
from litestar.types import ControllerRouterHandler, Dependencies

from litestar_userio.config import LocalStorageConfig, UserIOConfig
from litestar_userio.web.bodies import StrictBodyRequest, refuse_unstorable_parameters
from litestar_userio.web.changes import ChangesController
from litestar_userio.web.console import ConsoleController
from litestar_userio.web.directory import DirectoryController
from litestar_userio.web.downloads import DownloadController
from litestar_userio.web.exports import ExportController
from litestar_userio.web.hooks import HooksController
from litestar_userio.web.imports import ImportController
from litestar_userio.web.jwks import JWKSController
from litestar_userio.web.openapi import ADMIN_SECURITY
from litestar_userio.web.operations import HealthController, MetricsController
from litestar_userio.web.password_migration import PasswordMigrationController
from litestar_userio.web.providers import DOWNLOAD_STORAGE_KEY, provide_storage
from litestar_userio.web.scim import ScimBulkController, ScimController, ScimTokensController
from litestar_userio.web.users import UsersController
from litestar_userio.web.webhooks import WebhooksController

__all__ = ["build_router"]


def _at(path: str, controller: type[Controller], dependencies: Dependencies | None = None) -> Router:
    """`controller` (whose own path is `/`) served at a configured `path`, as Litestar normalizes it."""
    return Router("/" + path.strip("/"), route_handlers=[controller], dependencies=dependencies)


def build_router(config: UserIOConfig) -> Router:
    """The admin API (under the admin security scheme), and each public route only when configured."""
    imports = Router("/", route_handlers=[ImportController], request_max_body_size=config.imports.max_body_size)
    admin_api: list[ControllerRouterHandler] = [
        imports,
        ExportController,
        HooksController,
        DirectoryController,
        ChangesController,
        UsersController,
        PasswordMigrationController,
        ScimTokensController,
        WebhooksController,
    ]
    routes: list[ControllerRouterHandler] = [
        Router(
            config.path_prefix,
            route_handlers=admin_api,
            security=ADMIN_SECURITY,
            before_request=refuse_unstorable_parameters,
        )
    ]
    if config.scim is not None:
        scim_body = config.scim.max_payload_size + 1
        routes.append(
            Router(
                "/" + config.scim.path.strip("/"),
                route_handlers=[ScimBulkController, ScimController],
                request_max_body_size=scim_body,
            )
        )
    if config.tokens.jwks_path is not None:
        routes.append(_at(config.tokens.jwks_path, JWKSController))
    if config.console is not None:
        routes.append(_at(config.console.path, ConsoleController))
    if config.health_path is not None:
        routes.append(_at(config.health_path, HealthController))
    if config.metrics is not None:
        routes.append(_at(config.metrics.path, MetricsController))
    storage = config.exports.storage
    if isinstance(storage, LocalStorageConfig):
        store = {DOWNLOAD_STORAGE_KEY: Provide(provide_storage, sync_to_thread=False)}
        routes.append(_at(storage.route_path, DownloadController, dependencies=store))
    return Router("/", route_handlers=routes, request_class=StrictBodyRequest)
