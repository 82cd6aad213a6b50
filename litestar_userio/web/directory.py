"""Admin reads for pickers (beyond the reference): `GET /applications`, `/custom-attributes` (export-style envelope)."""

from litestar import Controller, get
from litestar.datastructures import State
from litestar.di import NamedDependency

from litestar_userio.console.directory import DirectoryService
from litestar_userio.console.schemas import ApplicationList, CustomAttributeList, Items
from litestar_userio.openapi import ExportErrorBody, error_responses
from litestar_userio.projects.service import ProjectRecord
from litestar_userio.web.errors import export_error_handler
from litestar_userio.web.providers import admin_dependencies, authenticate_admin, services_of

__all__ = ["DirectoryController", "provide_directory"]


def provide_directory(state: State) -> DirectoryService:
    """A directory over the plugin's database."""
    services = services_of(state)
    return DirectoryService(services.db, services.projects)


class DirectoryController(Controller):
    """Thin: authenticate, read, wrap in `result`."""

    path = "/"
    tags = ["Directory"]
    guards = [authenticate_admin]
    dependencies = admin_dependencies(directory=provide_directory)
    exception_handlers = {Exception: export_error_handler}

    @get(
        "/applications",
        summary="The project's clients",
        responses=error_responses(ExportErrorBody, 403, 503),
    )
    async def applications(
        self, project: NamedDependency[ProjectRecord], directory: NamedDependency[DirectoryService]
    ) -> ApplicationList:
        return ApplicationList(Items(await directory.applications(project.id)))

    @get(
        "/custom-attributes",
        summary="The project's declared custom attributes",
        responses=error_responses(ExportErrorBody, 403, 503),
    )
    async def custom_attributes(
        self, project: NamedDependency[ProjectRecord], directory: NamedDependency[DirectoryService]
    ) -> CustomAttributeList:
        return CustomAttributeList(Items(await directory.custom_attributes(project.id)))
