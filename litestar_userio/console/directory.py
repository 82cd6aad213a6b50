"""Admin reads for pickers (beyond the reference): the project's clients, declared custom attributes.

The console's hook test panel picks a client (and a user, through `GET /users?q=`, the users controller), and its
export form offers the project's custom attributes; the endpoints are in `web/directory.py`.
"""

from __future__ import annotations

from litestar_userio.console.repository import DirectoryRepository
from litestar_userio.console.schemas import Application
from litestar_userio.db.engine import Database
from litestar_userio.projects.service import ProjectService
from litestar_userio.users.custom_attributes import CustomAttributeSpec

__all__ = ["DirectoryService"]


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
