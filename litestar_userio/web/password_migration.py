"""`GET /users/password-migration`: how many users still carry a legacy password hash.

See docs/reference.md#passwords-re-hash-at-sign-in.
"""

from litestar import Controller, get
from litestar.di import NamedDependency

from litestar_userio.accounts.sign_in_service import UserService
from litestar_userio.passwords.rehash_schemas import PasswordMigrationResult
from litestar_userio.projects.project_service import ProjectRecord
from litestar_userio.web.error_responses import export_error_handler
from litestar_userio.web.openapi import ExportErrorBody, error_responses
from litestar_userio.web.providers import admin_dependencies, authenticate_admin, provide_user_service

__all__ = ["PasswordMigrationController"]


class PasswordMigrationController(Controller):
    """Thin: authenticate, count, wrap in `result`."""

    path = "/users/password-migration"
    tags = ["Users"]
    guards = [authenticate_admin]
    dependencies = admin_dependencies(users_service=provide_user_service)
    exception_handlers = {Exception: export_error_handler}

    @get(
        "/",
        summary="Users per password format, and how many still wait for their re-hash at a first sign-in",
        responses=error_responses(ExportErrorBody, 403, 503),
    )
    async def password_migration(
        self, project: NamedDependency[ProjectRecord], users_service: NamedDependency[UserService]
    ) -> PasswordMigrationResult:
        return PasswordMigrationResult(await users_service.password_migration(project.id))
