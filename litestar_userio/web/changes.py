"""`GET /_api/admin/users/changes`: the project's change log, page after page (docs/changes.md).

Thin: authenticate (the admin guard), call `ChangeService.page`, answer `{"result": {items, next_cursor,
has_more}}`; the entries' `user` members are the stored JSON, spliced in as they are.
"""

from typing import Annotated, Any

import msgspec
from litestar import Controller, Response, get
from litestar.di import NamedDependency
from litestar.openapi import ResponseSpec
from litestar.params import QueryParameter

from litestar_userio.changes.change_service import ChangeService, FeedEntry
from litestar_userio.projects.project_service import ProjectRecord
from litestar_userio.web.error_responses import export_error_handler
from litestar_userio.web.openapi import ExportErrorBody, error_responses
from litestar_userio.web.providers import admin_dependencies, authenticate_admin, provide_change_service

__all__ = ["ChangesController"]


class _Page(msgspec.Struct):
    items: list[FeedEntry]
    next_cursor: str
    has_more: bool


class _Body(msgspec.Struct):
    result: _Page


class ChangeFeedEntry(msgspec.Struct):
    """An entry as documented: `user` is the stored JSON object (the exported user), or null for a deletion."""

    id: str
    cursor: str
    type: str
    user_id: str
    occurred_at: str
    origin: dict[str, str]
    user: dict[str, Any] | None


class ChangeFeedPage(msgspec.Struct):
    items: list[ChangeFeedEntry]
    next_cursor: str
    has_more: bool


class ChangeFeedBody(msgspec.Struct):
    """The answer's schema in the OpenAPI document (the handler splices the stored JSON in as bytes)."""

    result: ChangeFeedPage


_encode = msgspec.json.Encoder().encode


class ChangesController(Controller):
    """The feed; `ChangeService` holds the rules (order, cursors, retention)."""

    path = "/users/changes"
    tags = ["Users"]
    guards = [authenticate_admin]
    dependencies = admin_dependencies(changes=provide_change_service)
    exception_handlers = {Exception: export_error_handler}

    @get(
        "/",
        summary="The change log: every committed change of a user, in commit order",
        description="Without `cursor`: from the oldest kept entry; `cursor=latest`: no items and the newest entry's"
        " cursor. Pass `next_cursor` back to see every committed entry exactly once.",
        responses={
            200: ResponseSpec(data_container=ChangeFeedBody, description="A page of the log", generate_examples=False),
            **error_responses(ExportErrorBody, 400, 403, 410, 503),
        },
    )
    async def changes(
        self,
        project: NamedDependency[ProjectRecord],
        changes: NamedDependency[ChangeService],
        cursor: Annotated[str | None, QueryParameter(min_length=1, max_length=200)] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 100,
    ) -> Response[bytes]:
        page = await changes.page(project.id, cursor=cursor, limit=limit)
        body = _Body(_Page(page.items, page.next_cursor, page.has_more))
        return Response(_encode(body), media_type="application/json")
