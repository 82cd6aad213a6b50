"""Admin reads for pickers (beyond SPEC): users by login id, the project's clients, declared custom attributes.

The console's hook test panel picks a user and a client, and its export form offers the project's custom
attributes; these are plain admin API endpoints (same auth, export-style envelope), so scripts can use them too.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, get
from litestar.di import NamedDependency, Provide
from litestar.params import QueryParameter

from litestar_userio.config import UserIOConfig
from litestar_userio.db.engine import Database
from litestar_userio.dependencies import provide_admin_project
from litestar_userio.errors import export_error_handler
from litestar_userio.openapi import ExportErrorBody, error_responses
from litestar_userio.projects.service import ProjectRecord
from litestar_userio.services import Services
from litestar_userio.users.custom_attributes import CustomAttributeSpec
from litestar_userio.users.formats import LOGIN_ID_ATTRIBUTES, normalize_login_id

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


def _like_prefix(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class DirectoryService:
    """Reads a project's users, clients and custom attribute declarations for pickers."""

    def __init__(self, services: Services) -> None:
        self.db: Database = services.db
        self.services = services

    async def find_users(self, project_id: str, login_id: str, limit: int = MAX_MATCHES) -> list[UserMatch]:
        """Users whose email, phone number or username starts with `login_id` (normalized as the import does)."""
        args: list[Any] = [project_id, limit]
        clauses = []
        for attribute, key in LOGIN_ID_ATTRIBUTES.items():
            args += [key, _like_prefix(normalize_login_id(attribute, login_id.strip()))]
            clauses.append(f"(login_id_key = ${len(args) - 1} AND normalized_value LIKE ${len(args)} ESCAPE '\\')")
        async with self.db.reader() as tx:
            rows = await tx.fetch(
                "SELECT user_id, login_id_key, original_value FROM userio_identity"
                f" WHERE project_id = $1 AND ({' OR '.join(clauses)}) ORDER BY normalized_value, login_id_key LIMIT $2",
                *args,
            )
        return [UserMatch(r["user_id"], r["login_id_key"], r["original_value"]) for r in rows]

    async def applications(self, project_id: str) -> list[Application]:
        """The project's clients, by client id."""
        async with self.db.reader() as tx:
            rows = await tx.fetch(
                "SELECT client_id, name, issue_jwt_access_token FROM userio_application WHERE project_id = $1"
                " ORDER BY client_id",
                project_id,
            )
        return [Application(r["client_id"], r["name"], bool(r["issue_jwt_access_token"])) for r in rows]

    async def custom_attributes(self, project_id: str) -> list[CustomAttributeSpec]:
        """Declared custom attributes in declaration order."""
        return list((await self.services.projects.custom_schema(project_id)).values())


def provide_directory(userio: NamedDependency[Services]) -> DirectoryService:
    """A directory over the plugin's database."""
    return DirectoryService(userio)


def build_directory_controller(config: UserIOConfig) -> type[Controller]:
    """`GET /users`, `/applications`, `/custom-attributes` under the admin prefix."""

    class DirectoryController(Controller):
        """Thin: authenticate, read, wrap in `result`."""

        path = config.path_prefix
        tags = ["Directory"]
        dependencies = {
            "project": Provide(provide_admin_project),
            "directory": Provide(provide_directory, sync_to_thread=False),
        }
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
