"""Admin reads for pickers (beyond SPEC): users by login id, the project's clients, declared custom attributes.

The console's hook test panel picks a user and a client, and its export form offers the project's custom
attributes; these are plain admin API endpoints (same auth, export-style envelope), so scripts can use them too.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, get
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import QueryParameter

from litestar_userio.config import UserIOConfig
from litestar_userio.console.repository import DirectoryRepository
from litestar_userio.db.engine import Database
from litestar_userio.dependencies import admin_dependencies, authenticate_admin, services_of
from litestar_userio.errors import export_error_handler
from litestar_userio.namespace import own_names
from litestar_userio.openapi import ExportErrorBody, error_responses
from litestar_userio.projects.service import ProjectRecord, ProjectService
from litestar_userio.users.custom_attributes import CustomAttributeSpec
from litestar_userio.users.formats import LOGIN_ID_ATTRIBUTES, normalize_login_id
from litestar_userio.users.repository import UserRepository

__all__ = ["DirectoryService", "build_directory_controller"]

MAX_MATCHES = 20


class UserMatch(msgspec.Struct):
    """A user whose login id starts with the searched text."""

    user_id: str
    login_id_key: str
    login_id: str


class Application(msgspec.Struct):
    """A client of the project."""

    client_id: str
    name: str | None
    issue_jwt_access_token: bool


class Items(msgspec.Struct):
    """A short list (no paging: pickers show the first matches)."""

    items: list[Any]


class UserMatches(msgspec.Struct):
    """Envelope of the user search."""

    result: Items


class ApplicationList(msgspec.Struct):
    """Envelope of the client list."""

    result: Items


class CustomAttributeList(msgspec.Struct):
    """Envelope of the declared custom attributes."""

    result: Items


class DirectoryService:
    """Reads a project's users, clients and custom attribute declarations for pickers."""

    def __init__(
        self, db: Database, projects: ProjectService, users: UserRepository, repository: DirectoryRepository
    ) -> None:
        self.db = db
        self.projects = projects
        self.users = users
        self.repository = repository

    async def find_users(self, project_id: str, login_id: str, limit: int = MAX_MATCHES) -> list[UserMatch]:
        """Users whose email, phone number or username starts with `login_id` (normalized as the import does)."""
        prefixes = {attribute: normalize_login_id(attribute, login_id.strip()) for attribute in LOGIN_ID_ATTRIBUTES}
        async with self.db.reader() as tx:
            rows = await self.users.find_by_login_id_prefix(tx, project_id, prefixes, limit)
        return [UserMatch(*row) for row in rows]

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
    return DirectoryService(services.db, services.projects, UserRepository(), DirectoryRepository())


def build_directory_controller(config: UserIOConfig) -> type[Controller]:
    """`GET /users`, `/applications`, `/custom-attributes` under the admin prefix."""

    class DirectoryController(Controller):
        """Thin: authenticate, read, wrap in `result`."""

        signature_namespace = own_names(globals())

        path = config.path_prefix
        tags = ["Directory"]
        guards = [authenticate_admin]
        dependencies = admin_dependencies(directory=provide_directory)
        exception_handlers = {Exception: export_error_handler}

        @get(
            "/users",
            summary="Find users by the start of a login id",
            description=f"Email, phone or username, normalized as the import matches them; {MAX_MATCHES} at most.",
            responses=error_responses(ExportErrorBody, 400, 403, 503),
        )
        async def find_users(
            self,
            project: NamedDependency[ProjectRecord],
            directory: NamedDependency[DirectoryService],
            login_id: Annotated[str, QueryParameter(min_length=1, max_length=320)],
        ) -> UserMatches:
            return UserMatches(Items(await directory.find_users(project.id, login_id)))

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
