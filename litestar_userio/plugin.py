"""The Litestar plugin: wiring only (controllers, DI, lifespan, CLI)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from click import Group
from litestar import Litestar
from litestar.config.app import AppConfig
from litestar.plugins import CLIPlugin, InitPlugin

from litestar_userio.config import UserIOConfig
from litestar_userio.errors import HookError, PasswordVerificationBusy, SignInRefused
from litestar_userio.events import app_emitter
from litestar_userio.extras import require_extras
from litestar_userio.services import Services
from litestar_userio.web.bodies import StrictBodySchemas
from litestar_userio.web.error_responses import oauth_busy_handler, oauth_error_handler, oauth_refusal_handler
from litestar_userio.web.openapi import document_admin_api
from litestar_userio.web.providers import SERVICES_STATE_KEY, app_dependencies
from litestar_userio.web.router import build_router

__all__ = ["UserIOPlugin"]


class UserIOPlugin(InitPlugin, CLIPlugin):
    """Adds the bulk import/export admin APIs, token hooks and the `userio` CLI group to a Litestar app.

    It registers `StrictBodySchemas` (the strict bodies' OpenAPI schemas) right after itself: the host's later
    plugins and Litestar's struct plugin come after it, so it documents those bodies before they would.
    """

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
        app_config.route_handlers.append(build_router(self._config))
        self._add_body_schemas(app_config)
        document_admin_api(app_config)
        self._add_tracing(app_config)
        app_config.exception_handlers.setdefault(HookError, oauth_error_handler)
        app_config.exception_handlers.setdefault(PasswordVerificationBusy, oauth_busy_handler)
        app_config.exception_handlers.setdefault(SignInRefused, oauth_refusal_handler)
        app_config.dependencies.update(app_dependencies(self._config.dependency_keys))
        app_config.lifespan.append(self._lifespan)
        return app_config

    def _add_body_schemas(self, app_config: AppConfig) -> None:
        """`StrictBodySchemas` just after this plugin (where it stood when the plugin was its own schema plugin).

        After, not before: Litestar is iterating the plugins to call `on_app_init`, and the schema plugin has none.
        """
        plugins = app_config.plugins
        at = next((i + 1 for i, plugin in enumerate(plugins) if plugin is self), len(plugins))
        if not (at < len(plugins) and isinstance(plugins[at], StrictBodySchemas)):
            plugins.insert(at, StrictBodySchemas())

    def _add_tracing(self, app_config: AppConfig) -> None:
        """Request spans, only when configured; the probes and `/metrics` are in the router.

        See docs/reference.md#operations.
        """
        config = self._config
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
        services = await Services.start(self._config, emit=app_emitter(app))
        app.state[SERVICES_STATE_KEY] = services
        try:
            yield
        finally:
            await services.close()

    def on_cli_init(self, cli: Group) -> None:
        """Add `litestar userio ...`."""
        from litestar_userio.cli import userio_group

        cli.add_command(userio_group)
