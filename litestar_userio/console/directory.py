"""Admin reads for pickers (beyond SPEC): the project's clients, declared custom attributes.

The console's hook test panel picks a client (and a user, through `GET /users?q=`, the users controller), and its
export form offers the project's custom attributes; these are plain admin API endpoints (same auth, export-style
envelope), so scripts can use them too.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, get
from litestar.datastructures import State
from litestar.di import NamedDependency

from litestar_userio.config import UserIOConfig
from litestar_userio.console.repository import DirectoryRepository
from litestar_userio.db.engine import Database
from litestar_userio.dependencies import admin_dependencies, authenticate_admin, services_of
from litestar_userio.namespace import own_names
from litestar_userio.openapi import ExportErrorBody, error_responses
from litestar_userio.projects.service import ProjectRecord, ProjectService
from litestar_userio.users.custom_attributes import CustomAttributeSpec
from litestar_userio.web.errors import export_error_handler

__all__ = ["DirectoryService", "build_directory_controller"]


class Application(msgspec.Struct):
    """A client of the project."""

    client_id: str
    name: str | None
    issue_jwt_access_token: bool


class Items(msgspec.Struct):
    """A short list (no paging: pickers show the first matches)."""

    items: list[Any]


class ApplicationList(msgspec.Struct):
    """Envelope of the client list."""

    result: Items


class CustomAttributeList(msgspec.Struct):
    """Envelope of the declared custom attributes."""

    result: Items


class DirectoryService:
    """Reads a project's clients and custom attribute declarations for pickers."""

    def __init__(self, db: Database, projects: ProjectService) -> None:
        self.db = db
        self.projects = projects
        self.repository = DirectoryRepository()

    async def applications(self, project_id: str) -> list[Application]:
        """The project's clients, by client id."""
        async with self.db.reader() as tx:
            rows = await self.repository.applications(tx, project_id)
        return [Application(*row) for row in rows]

    async def custom_attributes(self, project_id: str) -> list[CustomAttributeSpec]:
        """Declared custom attributes in declaration order."""
        return list((await self.projects.custom_schema(project_id)).values())


def provide_directory(state: State) -> DirectoryService:
    """A directory over the plugin's database."""
    services = services_of(state)
    return DirectoryService(services.db, services.projects)


def build_directory_controller(config: UserIOConfig) -> type[Controller]:
    """`GET /applications`, `/custom-attributes` under the admin prefix."""

    class DirectoryController(Controller):
        """Thin: authenticate, read, wrap in `result`."""

        signature_namespace = own_names(globals())

        path = config.path_prefix
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

    return DirectoryController
