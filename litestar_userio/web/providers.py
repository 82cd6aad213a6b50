"""DI providers: one per service, and the authenticated project.

As in advanced-alchemy, each service has its own provider; here they are generated from one table (`_SERVICES`).
The plugin's controllers declare the ones they use under their own names (`imports_service`, ...), so those never
depend on the host's naming; the plugin also registers every provider app-wide under the keys of `DependencyKeys`
(configurable), for the host's handlers (a token endpoint takes `userio_tokens: NamedDependency[TokenService]`).

Annotations here, as in every module of `web/`, are evaluated, not postponed: Litestar resolves postponed ones
in the app's signature namespace, where a host's own `UserService` may stand.
"""

from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, Protocol

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.handlers import BaseRouteHandler
from litestar.params import HeaderParameter

from litestar_userio.accounts.admin import UserAdminService
from litestar_userio.accounts.service import UserService
from litestar_userio.auth.admin import AdminAuthenticator
from litestar_userio.changes.service import ChangeService
from litestar_userio.config import DependencyKeys
from litestar_userio.db.engine import Database
from litestar_userio.exports.service import ExportService
from litestar_userio.hooks.service import HookService
from litestar_userio.imports.service import ImportService
from litestar_userio.projects.service import ProjectRecord, ProjectService
from litestar_userio.scim.service import ScimService
from litestar_userio.storage import Storage
from litestar_userio.tokens.service import TokenService
from litestar_userio.webhooks.service import WebhookService

__all__ = [
    "DOWNLOAD_STORAGE_KEY",
    "PROVIDERS",
    "SERVICES_STATE_KEY",
    "Services",
    "admin_dependencies",
    "app_dependencies",
    "authenticate_admin",
    "provide_admin_project",
    "provide_admin_service",
    "provide_change_service",
    "provide_export_service",
    "provide_hook_service",
    "provide_import_service",
    "provide_project_service",
    "provide_scim_service",
    "provide_storage",
    "provide_token_service",
    "provide_user_admin_service",
    "provide_user_service",
    "provide_webhook_service",
    "services_of",
]

SERVICES_STATE_KEY = "userio"
"""Where the plugin keeps its `Services` in `app.state` (the lifespan puts them there); not a DI key."""

DOWNLOAD_STORAGE_KEY = "userio_storage"
"""The name under which the local download route takes the export storage."""


class Services(Protocol):
    """What the providers read of the plugin's started services (`services.Services`, in `app.state`).

    A protocol, so the web layer does not import the composition root (the plugin's lifespan puts it there).
    """

    db: Database
    changes: ChangeService
    imports: ImportService
    exports: ExportService
    hooks: HookService
    projects: ProjectService
    users: UserService
    user_admin: UserAdminService
    tokens: TokenService
    webhooks: WebhookService
    admin: AdminAuthenticator
    storage: Storage | None
    scim: ScimService

    async def ready(self, *, hooks: bool = True) -> bool:
        """The readiness probe's answer."""
        ...


def services_of(state: State) -> Services:
    """The plugin's services, started by its lifespan: the composition root the providers below read.

    Not a DI provider: no handler receives the whole of it.
    """
    services: Services = state[SERVICES_STATE_KEY]
    return services


def _provider(attribute: str, service: Any, doc: str) -> Callable[[State], Any]:
    """The provider of `Services.<attribute>`.

    A function Litestar reads like a hand-written one: its name, its docstring, evaluated annotations.
    """

    def provide(state: State) -> Any:
        return getattr(services_of(state), attribute)

    provide.__name__ = provide.__qualname__ = f"provide_{attribute}"
    provide.__doc__ = doc
    provide.__annotations__ = {"state": State, "return": service}
    return provide


_SERVICES: dict[str, tuple[Any, str]] = {
    "changes": (ChangeService, "The change log: its feed, cursors, retention and consumers."),
    "imports": (ImportService, "Bulk import tasks."),
    "exports": (ExportService, "Bulk export tasks."),
    "hooks": (HookService, "The project's token hooks, their versions, secrets and run log."),
    "projects": (ProjectService, "Projects, their domains, keys and settings."),
    "users": (UserService, "Password checks and sign-in rules."),
    "user_admin": (
        UserAdminService,
        "The single-user lifecycle: create, read, search, update, set password, disable, enable, delete.",
    ),
    "tokens": (TokenService, "Token issuance, signing keys, applications and refresh tokens."),
    "webhooks": (WebhookService, "The project's webhooks and their deliveries."),
    "admin": (AdminAuthenticator, "Admin API authentication."),
    "storage": (Storage | None, "The export storage; None when exports are disabled."),
    "scim": (ScimService, "SCIM 2.0 provisioning: tokens, Users, Groups."),
}
"""Every service the plugin provides: its attribute on `Services` (also its field in `DependencyKeys`), its type
and what it is for. The providers below, and the host's app-wide ones, are generated from it."""

PROVIDERS: dict[str, Callable[[State], Any]] = {
    attribute: _provider(attribute, service, doc) for attribute, (service, doc) in _SERVICES.items()
}
"""One provider per service, by its `Services` attribute."""

provide_change_service: Callable[[State], ChangeService] = PROVIDERS["changes"]
provide_import_service: Callable[[State], ImportService] = PROVIDERS["imports"]
provide_export_service: Callable[[State], ExportService] = PROVIDERS["exports"]
provide_hook_service: Callable[[State], HookService] = PROVIDERS["hooks"]
provide_project_service: Callable[[State], ProjectService] = PROVIDERS["projects"]
provide_user_service: Callable[[State], UserService] = PROVIDERS["users"]
provide_user_admin_service: Callable[[State], UserAdminService] = PROVIDERS["user_admin"]
provide_token_service: Callable[[State], TokenService] = PROVIDERS["tokens"]
provide_webhook_service: Callable[[State], WebhookService] = PROVIDERS["webhooks"]
provide_admin_service: Callable[[State], AdminAuthenticator] = PROVIDERS["admin"]
provide_storage: Callable[[State], Storage | None] = PROVIDERS["storage"]
provide_scim_service: Callable[[State], ScimService] = PROVIDERS["scim"]


_ADMIN_PROJECT = "userio_admin_project"
"""Where `authenticate_admin` leaves the project in the request's scope state."""


async def authenticate_admin(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """The admin controllers' guard: a 403 error unless the request is an authenticated admin request.

    See docs/reference.md#authentication.

    A guard, not only the `project` dependency, because Litestar decodes a handler's `data` before it resolves
    dependencies: this way a request without a valid Admin API JWT is refused before its body is read.
    """
    project = await services_of(connection.app.state).admin.authenticate(connection)
    connection.scope.setdefault("state", {})[_ADMIN_PROJECT] = project


async def provide_admin_project(
    request: Request[Any, Any, Any],
    admin_service: NamedDependency[AdminAuthenticator],
    host: Annotated[
        str | None,
        HeaderParameter(
            name="host",
            required=False,
            description="Selects the project (docs/reference.md#authentication-projects-and-hosts).",
        ),
    ] = None,
) -> ProjectRecord:
    """The project `authenticate_admin` found (docs/reference.md#authentication); authenticates here when no guard ran.

    `host` is read from the request by the authenticator; declared here so the OpenAPI schema shows it.
    """
    project = request.scope.get("state", {}).get(_ADMIN_PROJECT)
    if isinstance(project, ProjectRecord):
        return project
    return await admin_service.authenticate(request)


def admin_dependencies(**services: Callable[[State], object]) -> dict[str, Provide]:
    """An admin controller's dependencies: the authenticated `project` and the services its handlers name.

    `admin_dependencies(imports_service=provide_import_service)` gives the handlers `project` and
    `imports_service`, and nothing else of the plugin's.
    """
    providers = {"admin_service": provide_admin_service, **services}
    named = {name: Provide(provider, sync_to_thread=False) for name, provider in providers.items()}
    return {"project": Provide(provide_admin_project), **named}


def app_dependencies(keys: DependencyKeys) -> dict[str, Provide]:
    """Every service's provider under its configured key, for the host's own handlers.

    Each is a `partial` of the provider: Litestar refuses one callable under two keys in a handler's scope, and
    the plugin's controllers name the same providers under their own keys.
    """
    return {
        getattr(keys, attribute): Provide(partial(provider), sync_to_thread=False)
        for attribute, provider in PROVIDERS.items()
    }
