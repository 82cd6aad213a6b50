"""DI providers: handlers receive the services and the authenticated project by name."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import HeaderParameter

from litestar_userio.projects.service import ProjectRecord
from litestar_userio.services import Services
from litestar_userio.storage import Storage

__all__ = ["SERVICES_KEY", "STORAGE_KEY", "provide_admin_project", "provide_services", "provide_storage"]

SERVICES_KEY = "userio"
"""Where the plugin keeps its `Services` in `app.state`, and the DI name handlers use."""


STORAGE_KEY = "userio_storage"
"""The DI name of the export storage (the local download route needs it)."""


def provide_storage(state: State) -> Storage | None:
    """The export storage of the plugin's services."""
    services: Services = state[SERVICES_KEY]
    return services.storage


def provide_services(state: State) -> Services:
    """The plugin's services, started by its lifespan."""
    services: Services = state[SERVICES_KEY]
    return services


async def provide_admin_project(
    request: Request[Any, Any, Any],
    userio: NamedDependency[Services],
    host: Annotated[
        str | None,
        HeaderParameter(name="host", required=False, description="Selects the project (SPEC 5.4)."),
    ] = None,
) -> ProjectRecord:
    """The project of an authenticated admin request (SPEC 5); raises a 403 error otherwise.

    `host` is read from the request by the authenticator; declared here so the OpenAPI schema shows it.
    """
    return await userio.admin.authenticate(request)
