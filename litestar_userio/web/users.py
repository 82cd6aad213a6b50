"""`/_api/admin/users` and `/_api/admin/users/{id}...`: one user at a time (docs/reference.md#users-admin-api).

Thin: authenticate (the admin guard), decode the typed body, call `UserAdminService`, wrap the user in
`{"result": ...}` with the import's `warnings` beside it. Every error is the export's envelope (413, 415 and
duplicate keys included).
"""

from typing import Annotated, Any

import msgspec
from litestar import Controller, Response, delete, get, patch, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter

from litestar_userio.accounts.user_admin import UserAdminService
from litestar_userio.changes.entries import ChangeOrigin
from litestar_userio.imports.import_schemas import PasswordInput, UserRecord
from litestar_userio.projects.project_service import ProjectRecord
from litestar_userio.web.bodies import BODY_PARSER, BodySchema, json_body, json_parser, parse_json_body
from litestar_userio.web.error_responses import export_error_handler
from litestar_userio.web.openapi import ExportErrorBody, error_responses
from litestar_userio.web.providers import admin_dependencies, authenticate_admin, provide_user_admin_service

__all__ = [
    "DisableRequest",
    "PasswordRequest",
    "UserBody",
    "UsersController",
]

MAX_BODY = 500_000
"""As the import's limit (decimal bytes, as the reference)."""
MAX_PAGE = 100


class UserBody(msgspec.Struct):
    """An import record (`UserRecord`), kept as its JSON: the service validates it with the project's schema."""

    json: bytes


class PasswordRequest(msgspec.Struct, forbid_unknown_fields=True):
    """`password` (hashed by the server) or `password_hash` (an import password object), not both."""

    password: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)] | None = None
    password_hash: PasswordInput | None = None


class DisableRequest(msgspec.Struct, forbid_unknown_fields=True):
    """A disable until enabled, or inside a window (both bounds, RFC 3339 with an offset).

    The bounds are checked by the import's one timestamp rule (`UserAdminService.disable`), not by msgspec's.
    """

    reason: Annotated[str, msgspec.Meta(max_length=1000)] | None = None
    temporarily_disabled_from: Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})] | None = None
    temporarily_disabled_until: Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})] | None = None


def parse_user_body(content_type: str, body: bytes) -> UserBody:
    """A JSON object without duplicate keys, kept as JSON: the service checks it as the import checks a record."""
    parse_json_body(content_type, body, dict[str, Any])
    return UserBody(body)


def parse_disable_request(content_type: str, body: bytes) -> DisableRequest:
    """See `parse_json_body`; an empty body is no window."""
    return DisableRequest() if not body.strip() else parse_json_body(content_type, body, DisableRequest)


UserBodyData = Annotated[UserBody, json_body("UserBodyData"), BodySchema(UserRecord)]
"""`data: UserBodyData` is a `UserBody` (its routes decode it by `parse_user_body`), documented as `UserRecord`."""
PasswordBody = Annotated[PasswordRequest, json_body("PasswordBody"), BodySchema(PasswordRequest)]
DisableBody = Annotated[DisableRequest, json_body("DisableBody"), BodySchema(DisableRequest)]


def _result(user: dict[str, Any], warnings: list[str] | None = None, status_code: int = 200) -> Response[Any]:
    body: dict[str, Any] = {"result": user}
    if warnings:
        body["warnings"] = warnings
    return Response(body, status_code=status_code)


class UsersController(Controller):
    """Thin: the service holds the rules."""

    path = "/users"
    tags = ["Users"]
    guards = [authenticate_admin]
    dependencies = admin_dependencies(user_admin=provide_user_admin_service)
    exception_handlers = {Exception: export_error_handler}
    request_max_body_size = MAX_BODY

    @post(
        "/",
        opt={BODY_PARSER: parse_user_body},
        status_code=201,
        summary="Create one user from an import record",
        description="The identifier is the first present of email, phone_number, preferred_username.",
        responses=error_responses(ExportErrorBody, 400, 403, 404, 413, 415, 503),
    )
    async def create(
        self,
        data: UserBodyData,
        project: NamedDependency[ProjectRecord],
        user_admin: NamedDependency[UserAdminService],
        change_origin: NamedDependency[ChangeOrigin],
    ) -> Response[Any]:
        user, warnings = await user_admin.create(project, data.json, origin=change_origin)
        return _result(user, warnings, status_code=201)

    @get(
        "/",
        summary="List and search users",
        description="Keyset pages in id order; pass `next_cursor` back as `cursor`. Items carry `user_id` beside"
        " `sub` for one release (the former picker's member).",
        responses=error_responses(ExportErrorBody, 400, 403, 503),
    )
    async def list_users(
        self,
        project: NamedDependency[ProjectRecord],
        user_admin: NamedDependency[UserAdminService],
        login_id: Annotated[str | None, QueryParameter(min_length=1, max_length=320)] = None,
        q: Annotated[str | None, QueryParameter(min_length=1, max_length=320)] = None,
        role: Annotated[str | None, QueryParameter(min_length=1, max_length=64)] = None,
        group: Annotated[str | None, QueryParameter(min_length=1, max_length=64)] = None,
        disabled: Annotated[
            bool | None, QueryParameter(description="The state now (docs/reference.md#users-disabled-state)")
        ] = None,
        cursor: Annotated[str | None, QueryParameter(max_length=200)] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=MAX_PAGE)] = 20,
    ) -> dict[str, Any]:
        page = await user_admin.list_users(
            project.id,
            login_id=login_id,
            q=q,
            role=role,
            group=group,
            disabled=disabled,
            cursor=cursor,
            limit=limit,
        )
        items = [{**item, "user_id": item["sub"]} for item in page.items]
        return {"result": {"items": items, "next_cursor": page.next_cursor}}

    @get(
        ["/{user_id:str}", "/id/{user_id:str}"],
        summary="One user, as the export writes it",
        responses=error_responses(ExportErrorBody, 403, 404, 503),
    )
    async def get_user(
        self,
        user_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        user_admin: NamedDependency[UserAdminService],
    ) -> dict[str, Any]:
        return {"result": await user_admin.get(project.id, user_id)}

    @patch(
        ["/{user_id:str}", "/id/{user_id:str}"],
        opt={BODY_PARSER: parse_user_body},
        summary="Update one user by the import's update rules, as an upsert import",
        responses=error_responses(ExportErrorBody, 400, 403, 404, 413, 415, 503),
    )
    async def update(
        self,
        user_id: FromPath[str],
        data: UserBodyData,
        project: NamedDependency[ProjectRecord],
        user_admin: NamedDependency[UserAdminService],
        change_origin: NamedDependency[ChangeOrigin],
    ) -> Response[Any]:
        user, warnings = await user_admin.update(project, user_id, data.json, origin=change_origin)
        return _result(user, warnings)

    @put(
        ["/{user_id:str}/password", "/id/{user_id:str}/password"],
        opt={BODY_PARSER: json_parser(PasswordRequest)},
        status_code=204,
        summary="Set the user's password",
        responses=error_responses(ExportErrorBody, 400, 403, 404, 413, 415, 503),
    )
    async def set_password(
        self,
        user_id: FromPath[str],
        data: PasswordBody,
        project: NamedDependency[ProjectRecord],
        user_admin: NamedDependency[UserAdminService],
        change_origin: NamedDependency[ChangeOrigin],
    ) -> None:
        hash_object = msgspec.to_builtins(data.password_hash) if data.password_hash is not None else None
        await user_admin.set_password(
            project, user_id, password=data.password, password_hash=hash_object, origin=change_origin
        )

    @post(
        ["/{user_id:str}/disable", "/id/{user_id:str}/disable"],
        opt={BODY_PARSER: parse_disable_request},
        status_code=200,
        summary="Disable the user, until enabled or inside a window; revokes its refresh tokens",
        responses=error_responses(ExportErrorBody, 400, 403, 404, 413, 415, 503),
    )
    async def disable(
        self,
        user_id: FromPath[str],
        data: DisableBody,
        project: NamedDependency[ProjectRecord],
        user_admin: NamedDependency[UserAdminService],
        change_origin: NamedDependency[ChangeOrigin],
    ) -> dict[str, Any]:
        user = await user_admin.disable(
            project,
            user_id,
            reason=data.reason,
            temporarily_disabled_from=data.temporarily_disabled_from,
            temporarily_disabled_until=data.temporarily_disabled_until,
            origin=change_origin,
        )
        return {"result": user}

    @post(
        ["/{user_id:str}/enable", "/id/{user_id:str}/enable"],
        status_code=200,
        summary="Enable the user: clears a disable and a temporary disable window",
        responses=error_responses(ExportErrorBody, 403, 404, 503),
    )
    async def enable(
        self,
        user_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        user_admin: NamedDependency[UserAdminService],
        change_origin: NamedDependency[ChangeOrigin],
    ) -> dict[str, Any]:
        return {"result": await user_admin.enable(project, user_id, origin=change_origin)}

    @delete(
        ["/{user_id:str}", "/id/{user_id:str}"],
        status_code=204,
        summary="Delete the user with its identities, authenticators, roles, groups and refresh tokens",
        responses=error_responses(ExportErrorBody, 403, 404, 503),
    )
    async def delete_user(
        self,
        user_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        user_admin: NamedDependency[UserAdminService],
        change_origin: NamedDependency[ChangeOrigin],
    ) -> None:
        await user_admin.delete(project, user_id, origin=change_origin)
