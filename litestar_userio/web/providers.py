"""DI providers: one per service, and the authenticated project.

As in advanced-alchemy and litestar-saq, each service has its own provider, a plain two-line function.
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

from litestar_userio.accounts.sign_in_service import UserService
from litestar_userio.accounts.user_admin import UserAdminService
from litestar_userio.auth.admin_auth import ADMIN_IDENTITY, AdminAuthenticator, AdminIdentity
from litestar_userio.changes.change_service import ChangeService
from litestar_userio.changes.entries import ADMIN_API, ChangeOrigin
from litestar_userio.config import DependencyKeys
from litestar_userio.db.engine import Database
from litestar_userio.exports.export_service import ExportService
from litestar_userio.hooks.hook_service import HookService
from litestar_userio.imports.import_service import ImportService
from litestar_userio.projects.project_service import ProjectRecord, ProjectService
from litestar_userio.scim.scim_service import ScimService
from litestar_userio.storage import Storage
from litestar_userio.tokens.token_service import TokenService
from litestar_userio.webhooks.webhook_service import WebhookService

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
    "provide_change_origin",
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


def provide_change_service(state: State) -> ChangeService:
    """The change log: its feed, cursors, retention and consumers."""
    return services_of(state).changes


def provide_import_service(state: State) -> ImportService:
    """Bulk import tasks."""
    return services_of(state).imports


def provide_export_service(state: State) -> ExportService:
    """Bulk export tasks."""
    return services_of(state).exports


def provide_hook_service(state: State) -> HookService:
    """The project's token hooks, their versions, secrets and run log."""
    return services_of(state).hooks


def provide_project_service(state: State) -> ProjectService:
    """Projects, their domains, keys and settings."""
    return services_of(state).projects


def provide_user_service(state: State) -> UserService:
    """Password checks and sign-in rules."""
    return services_of(state).users


def provide_user_admin_service(state: State) -> UserAdminService:
    """The single-user lifecycle: create, read, search, update, set password, disable, enable, delete."""
    return services_of(state).user_admin


def provide_token_service(state: State) -> TokenService:
    """Token issuance, signing keys, applications and refresh tokens."""
    return services_of(state).tokens


def provide_admin_service(state: State) -> AdminAuthenticator:
    """Admin API authentication."""
    return services_of(state).admin


def provide_storage(state: State) -> Storage | None:
    """The export storage; None when exports are disabled."""
    return services_of(state).storage


def provide_scim_service(state: State) -> ScimService:
    """SCIM 2.0 provisioning: tokens, Users, Groups."""
    return services_of(state).scim


def provide_webhook_service(state: State) -> WebhookService:
    """The project's webhooks and their deliveries."""
    return services_of(state).webhooks


PROVIDERS: dict[str, Callable[[State], Any]] = {
    "changes": provide_change_service,
    "imports": provide_import_service,
    "exports": provide_export_service,
    "hooks": provide_hook_service,
    "projects": provide_project_service,
    "users": provide_user_service,
    "user_admin": provide_user_admin_service,
    "tokens": provide_token_service,
    "admin": provide_admin_service,
    "storage": provide_storage,
    "scim": provide_scim_service,
    "webhooks": provide_webhook_service,
}
"""Every service's provider by its `Services` attribute (also its field in `DependencyKeys`): the host's app-wide
providers are these."""


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


async def provide_change_origin(
    request: Request[Any, Any, Any], project: NamedDependency[ProjectRecord]
) -> ChangeOrigin:
    """What the request's changes come from, as its verified admin token says (`AdminIdentity.origin`).

    `console` for the console's token, else `admin_api` (docs/changes.md#what-is-logged); never a request header.
    Takes `project` so the request is authenticated first (the guard, or `provide_admin_project`).
    """
    identity = request.scope.get("state", {}).get(ADMIN_IDENTITY)
    return identity.origin if isinstance(identity, AdminIdentity) else ADMIN_API


def admin_dependencies(**services: Callable[[State], object]) -> dict[str, Provide]:
    """An admin controller's dependencies: the authenticated `project`, its `change_origin`, the services it names.

    `admin_dependencies(imports_service=provide_import_service)` gives the handlers `project`, `change_origin` and
    `imports_service`, and nothing else of the plugin's.
    """
    providers = {"admin_service": provide_admin_service, **services}
    named = {name: Provide(provider, sync_to_thread=False) for name, provider in providers.items()}
    return {"project": Provide(provide_admin_project), "change_origin": Provide(provide_change_origin), **named}


def app_dependencies(keys: DependencyKeys) -> dict[str, Provide]:
    """Every service's provider under its configured key, for the host's own handlers.

    Each is a `partial` of the provider: Litestar refuses one callable under two keys in a handler's scope, and
    the plugin's controllers name the same providers under their own keys.
    """
    return {
        getattr(keys, attribute): Provide(partial(provider), sync_to_thread=False)
        for attribute, provider in PROVIDERS.items()
    }
