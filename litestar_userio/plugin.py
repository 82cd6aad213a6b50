"""The Litestar plugin: wiring only (controllers, DI, lifespan, CLI)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from click import Group
from litestar import Litestar, Router
from litestar.config.app import AppConfig
from litestar.di import Provide
from litestar.plugins import CLIPluginProtocol, InitPluginProtocol

from litestar_userio.config import LocalStorageConfig, UserIOConfig
from litestar_userio.console import build_console_controller, build_directory_controller
from litestar_userio.dependencies import (
    DOWNLOAD_STORAGE_KEY,
    SERVICES_STATE_KEY,
    app_dependencies,
    provide_storage,
)
from litestar_userio.errors import HookError, PasswordVerificationBusy, SignInRefused
from litestar_userio.events import app_emitter
from litestar_userio.exports.controller import build_export_controller
from litestar_userio.extras import require_extras
from litestar_userio.hooks.controller import build_hooks_controller
from litestar_userio.imports.controller import build_import_controller
from litestar_userio.observability.controller import build_health_controller, build_metrics_controller
from litestar_userio.openapi import ADMIN_SECURITY, document_admin_api
from litestar_userio.services import Services
from litestar_userio.storage import build_download_controller
from litestar_userio.tokens.controller import build_jwks_controller
from litestar_userio.users.controller import build_users_controller
from litestar_userio.users.password_controller import build_password_migration_controller
from litestar_userio.web.errors import oauth_busy_handler, oauth_error_handler, oauth_refusal_handler

__all__ = ["UserIOPlugin"]


class UserIOPlugin(InitPluginProtocol, CLIPluginProtocol):
    """Adds the bulk import/export admin APIs, token hooks and the `userio` CLI group to a Litestar app."""

    __slots__ = ("_config",)

    def __init__(self, config: UserIOConfig | None = None) -> None:
        self._config = config or UserIOConfig()
        require_extras(self._config)  # a missing client fails here, in one line, not at the first request

    @property
    def config(self) -> UserIOConfig:
        """The plugin's configuration."""
        return self._config

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        """Register controllers, one provider per service and the lifespan that starts the services."""
        admin_api = [
            build_import_controller(self._config),
            build_export_controller(self._config),
            build_hooks_controller(self._config),
            build_directory_controller(self._config),
            build_users_controller(self._config),
            build_password_migration_controller(self._config),
        ]
        app_config.route_handlers.append(Router("/", route_handlers=admin_api, security=ADMIN_SECURITY))
        document_admin_api(app_config)
        if self._config.tokens.jwks_path is not None:
            app_config.route_handlers.append(build_jwks_controller(self._config.tokens.jwks_path))
        if self._config.console is not None:
            app_config.route_handlers.append(build_console_controller(self._config.console))
        self._add_operations(app_config)
        app_config.exception_handlers.setdefault(HookError, oauth_error_handler)
        app_config.exception_handlers.setdefault(PasswordVerificationBusy, oauth_busy_handler)
        app_config.exception_handlers.setdefault(SignInRefused, oauth_refusal_handler)
        storage = self._config.exports.storage
        if isinstance(storage, LocalStorageConfig):
            download = build_download_controller(storage.route_path)
            store = {DOWNLOAD_STORAGE_KEY: Provide(provide_storage, sync_to_thread=False)}
            app_config.route_handlers.append(Router("/", route_handlers=[download], dependencies=store))
        app_config.dependencies.update(app_dependencies(self._config.dependency_keys))
        app_config.lifespan.append(self._lifespan)
        return app_config

    def _add_operations(self, app_config: AppConfig) -> None:
        """Probes, `/metrics` and request spans (DECISIONS 15), each only when configured."""
        config = self._config
        if config.health_path is not None:
            app_config.route_handlers.append(build_health_controller(config.health_path))
        if config.metrics is not None:
            app_config.route_handlers.append(build_metrics_controller(config.metrics.path))
        if config.tracing is not None and config.tracing.request_spans:
            from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin

            from litestar_userio.observability.tracing import without_url  # the `tracing` extra

            if not any(isinstance(plugin, OpenTelemetryPlugin) for plugin in app_config.plugins):  # the host's wins
                paths = (config.health_path, config.metrics and config.metrics.path)
                probes = ["^" + re.escape("/" + path.strip("/")) for path in paths if path]
                otel = OpenTelemetryConfig(
                    tracer_provider=config.tracing.tracer_provider,
                    exclude=probes,
                    server_request_hook_handler=without_url,
                )
                app_config.plugins.append(OpenTelemetryPlugin(otel))

    @asynccontextmanager
    async def _lifespan(self, app: Litestar) -> AsyncIterator[None]:
        services = await Services.start(self._config)
        services.bind_events(app_emitter(app))
        app.state[SERVICES_STATE_KEY] = services
        try:
            yield
        finally:
            await services.close()

    def on_cli_init(self, cli: Group) -> None:
        """Add `litestar userio ...`."""
        from litestar_userio.cli import userio_group

        cli.add_command(userio_group)
