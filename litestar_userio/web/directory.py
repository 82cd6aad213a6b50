"""Admin reads for pickers (beyond the reference): `GET /applications`, `/custom-attributes` (export-style envelope)."""

from typing import Any

import msgspec
from litestar import Controller, get
from litestar.di import NamedDependency

from litestar_userio.projects.project_service import ProjectRecord, ProjectService
from litestar_userio.tokens.token_service import TokenService
from litestar_userio.web.error_responses import export_error_handler
from litestar_userio.web.openapi import ExportErrorBody, error_responses
from litestar_userio.web.providers import (
    admin_dependencies,
    authenticate_admin,
    provide_project_service,
    provide_token_service,
)

__all__ = ["Application", "ApplicationList", "CustomAttributeList", "DirectoryController", "Items"]


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


class DirectoryController(Controller):
    """Thin: authenticate, read, wrap in `result`."""

    path = "/"
    tags = ["Directory"]
    guards = [authenticate_admin]
    dependencies = admin_dependencies(
        directory_tokens=provide_token_service, directory_projects=provide_project_service
    )
    exception_handlers = {Exception: export_error_handler}

    @get(
        "/applications",
        summary="The project's clients",
        responses=error_responses(ExportErrorBody, 403, 503),
    )
    async def applications(
        self, project: NamedDependency[ProjectRecord], directory_tokens: NamedDependency[TokenService]
    ) -> ApplicationList:
        clients = await directory_tokens.applications.all(project.id)
        return ApplicationList(Items([Application(c.client_id, c.name, c.issue_jwt_access_token) for c in clients]))

    @get(
        "/custom-attributes",
        summary="The project's declared custom attributes",
        responses=error_responses(ExportErrorBody, 403, 503),
    )
    async def custom_attributes(
        self, project: NamedDependency[ProjectRecord], directory_projects: NamedDependency[ProjectService]
    ) -> CustomAttributeList:
        return CustomAttributeList(Items(list((await directory_projects.custom_schema(project.id)).values())))
