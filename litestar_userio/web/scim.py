"""SCIM 2.0 at `ScimConfig.path` (docs/scim.md), and its tokens under the admin API.

Thin: the SCIM guard (a bearer token of the `Host`'s project), the body decoded, one `ScimService` call, the answer
as `application/scim+json`. Every error is RFC 7644 3.12's error body with `status` a string and `scimType`.
"""

import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, delete, get, patch, post, put, route
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency, Provide
from litestar.exceptions import HTTPException
from litestar.handlers import BaseRouteHandler
from litestar.params import FromPath, QueryParameter

from litestar_userio.errors import (
    NotFound,
    ScimError,
    ScimNotImplemented,
    ScimTooLarge,
    UnsupportedMediaType,
)
from litestar_userio.projects.project_service import ProjectRecord
from litestar_userio.scim.discovery import resource_types, schemas, service_provider_config
from litestar_userio.scim.failures import error_body, scim_failure
from litestar_userio.scim.resources import LIST_SCHEMA
from litestar_userio.scim.scim_service import ListQuery, ScimService
from litestar_userio.web.error_responses import export_error_handler
from litestar_userio.web.openapi import ExportErrorBody, error_responses
from litestar_userio.web.providers import admin_dependencies, authenticate_admin, provide_scim_service, services_of

__all__ = ["SCIM_MEDIA_TYPE", "ScimBulkController", "ScimController", "ScimTokensController", "scim_error_handler"]

logger = logging.getLogger("litestar_userio.scim")

SCIM_MEDIA_TYPE = "application/scim+json"
_PROJECT = "userio_scim_project"


def _service(connection: ASGIConnection[Any, Any, Any, Any]) -> ScimService:
    return services_of(connection.app.state).scim


async def authenticate_scim(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """The SCIM guard: 401 without a bearer token of the request's project (by `Host`), before any body is read."""
    project = await _service(connection).authenticate(
        connection.scope["scheme"], connection.headers.get("host", ""), connection.headers.get("authorization", "")
    )
    connection.scope.setdefault("state", {})[_PROJECT] = project


def provide_scim_project(request: Request[Any, Any, Any]) -> ProjectRecord:
    """The project the SCIM guard found."""
    project: ProjectRecord = request.scope["state"][_PROJECT]
    return project


def scim_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """RFC 7644 3.12: `{"schemas": [Error], "status": "400", "scimType"?, "detail"}`."""
    if isinstance(exc, HTTPException) and exc.status_code == 413:
        limit = _service(request).config.max_payload_size
        status, scim_type, detail = 413, None, f"the body is larger than maxPayloadSize ({limit} bytes)"
    elif isinstance(exc, HTTPException):
        status, scim_type, detail = exc.status_code, None, str(exc.detail)
    else:
        status, scim_type, detail = scim_failure(exc)
    body = error_body(status, scim_type, detail)
    headers = {"WWW-Authenticate": 'Bearer realm="SCIM"'} if status == 401 else None
    return Response(body, status_code=status, media_type=SCIM_MEDIA_TYPE, headers=headers)


def _scim(body: Any, status: int = 200, location: str | None = None) -> Response[Any]:
    headers = {}
    if isinstance(body, dict) and isinstance(body.get("meta"), dict) and body["meta"].get("version"):
        headers["ETag"] = body["meta"]["version"]
    if location is not None:
        headers["Location"] = location
    return Response(msgspec.json.encode(body), status_code=status, media_type=SCIM_MEDIA_TYPE, headers=headers)


async def _body(request: Request[Any, Any, Any], limit: int | None = None) -> Any:
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type not in (SCIM_MEDIA_TYPE, "application/json"):
        raise UnsupportedMediaType("the body must be application/scim+json")
    raw = await request.body()
    limit = limit or _service(request).config.max_payload_size
    if len(raw) > limit:
        raise ScimTooLarge(f"the body is larger than maxPayloadSize ({limit} bytes)")
    try:
        decoded = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        raise ScimError("invalidSyntax", "the body is not JSON") from None
    if b"\\u0000" in raw or b"\x00" in raw:  # JSON writes U+0000 escaped; PostgreSQL's text cannot hold it
        raise ScimError("invalidValue", "U+0000 is not allowed in a value")
    return decoded


def _base_url(request: Request[Any, Any, Any]) -> str:
    path = request.scope.get("root_path", "") + request.scope["path"]
    marker = next(
        (
            m
            for m in ("/Users", "/Groups", "/Bulk", "/Schemas", "/ResourceTypes", "/ServiceProviderConfig")
            if m in path
        ),
        None,
    )
    prefix = path[: path.index(marker)] if marker else path.rstrip("/")
    return f"https://{request.headers.get('host', '')}{prefix}"


def _list(total: int, items: list[dict[str, Any]], start: int) -> Response[Any]:
    return _scim(
        {
            "schemas": [LIST_SCHEMA],
            "totalResults": total,
            "startIndex": start,
            "itemsPerPage": len(items),
            "Resources": items,
        }
    )


def _names(text: str) -> dict[str, set[str] | None]:
    """`attributes`/`excludedAttributes`: top-level name -> its named sub-attributes (None: the whole attribute)."""
    names: dict[str, set[str] | None] = {}
    for raw in text.split(","):
        name = raw.strip()
        if name.lower().startswith("urn:"):
            name = name.rsplit(":", 1)[-1]
        top, _, sub = name.lower().partition(".")
        if not top:
            continue
        if not sub or names.get(top, set()) is None:
            names[top] = None
        else:
            subs = names.setdefault(top, set())
            assert subs is not None
            subs.add(sub)
    return names


def _keep_subs(value: Any, subs: set[str], *, keep: bool) -> Any:
    def one(item: Any) -> Any:
        if not isinstance(item, dict):
            return item
        return {k: v for k, v in item.items() if (k.lower() in subs) == keep}

    return [one(item) for item in value] if isinstance(value, list) else one(value)


def _project_attributes(resource: dict[str, Any], attributes: str | None, excluded: str | None) -> dict[str, Any]:
    """RFC 7644 3.4.2.5: `attributes` keeps those, `excludedAttributes` drops them (`name.givenName`: a sub-attribute).

    `id`, `schemas` and `meta` are always returned.
    """
    if attributes:
        wanted = _names(attributes)
        kept: dict[str, Any] = {}
        for key, value in resource.items():
            low = key.lower()
            if low in ("id", "schemas", "meta"):
                kept[key] = value
            elif low in wanted:
                subs = wanted[low]
                kept[key] = value if subs is None else _keep_subs(value, subs, keep=True)
        return kept
    if excluded:
        dropped = _names(excluded)
        out: dict[str, Any] = {}
        for key, value in resource.items():
            low = key.lower()
            subs = dropped.get(low, set())
            if low in ("id", "schemas") or low not in dropped:
                out[key] = value
            elif subs is not None:
                out[key] = _keep_subs(value, subs, keep=False)
        return out
    return resource


def _search_request(body: Any) -> tuple[ListQuery, str | None, str | None]:
    """A `SearchRequest` body (RFC 7644 3.4.3) as a list query and its `attributes`/`excludedAttributes`."""
    if not isinstance(body, dict):
        raise ScimError("invalidSyntax", "the search request must be a JSON object")
    lowered = {k.lower(): v for k, v in body.items()}

    def names(key: str) -> str | None:
        value = lowered.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ScimError("invalidValue", f"{key} must be an array of attribute names")
        return ",".join(value)

    def number(key: str, default: int | None) -> int | None:
        value = lowered.get(key, default)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ScimError("invalidValue", f"{key} must be an integer")
        return value

    def text(key: str) -> str | None:
        value = lowered.get(key)
        if value is not None and not isinstance(value, str):
            raise ScimError("invalidValue", f"{key} must be a string")
        return value

    query = ListQuery(
        text("filter"), max(number("startindex", 1) or 1, 1), number("count", None), text("sortby"), text("sortorder")
    )
    return query, names("attributes"), names("excludedattributes")


# The shells of the Users and Groups operations (one per shape; each handler names the service call).

_Resource = dict[str, Any]
_Lister = Callable[[ProjectRecord, ListQuery, str], Awaitable[tuple[int, list[_Resource]]]]
_Creator = Callable[[ProjectRecord, Any, str], Awaitable[_Resource]]
_Reader = Callable[[ProjectRecord, str, str], Awaitable[_Resource]]
_Changer = Callable[[ProjectRecord, str, Any, str, str | None], Awaitable[_Resource]]


async def _page(
    request: Request[Any, Any, Any],
    project: ProjectRecord,
    list_resources: _Lister,
    query: ListQuery,
    attributes: str | None,
    excluded: str | None,
) -> Response[Any]:
    """A list answer (`GET /Users`, `POST /Users/.search`, the same for Groups): the page, each resource projected."""
    total, items = await list_resources(project, query, _base_url(request))
    return _list(total, [_project_attributes(i, attributes, excluded) for i in items], query.start_index)


async def _searched(request: Request[Any, Any, Any], project: ProjectRecord, list_resources: _Lister) -> Response[Any]:
    """`POST .../.search`: the body's `SearchRequest`, answered as the list."""
    query, attributes, excluded = _search_request(await _body(request))
    return await _page(request, project, list_resources, query, attributes, excluded)


async def _created(request: Request[Any, Any, Any], project: ProjectRecord, create: _Creator) -> Response[Any]:
    """`POST /Users`, `POST /Groups`: 201 with the resource and its `Location`."""
    resource = await create(project, await _body(request), _base_url(request))
    return _scim(resource, 201, resource["meta"]["location"])


async def _read(
    request: Request[Any, Any, Any],
    project: ProjectRecord,
    resource_id: str,
    get_resource: _Reader,
    attributes: str | None,
    excluded: str | None,
) -> Response[Any]:
    """`GET /Users/{id}`, `GET /Groups/{id}`: the resource, projected."""
    resource = await get_resource(project, resource_id, _base_url(request))
    return _scim(_project_attributes(resource, attributes, excluded))


async def _changed(
    request: Request[Any, Any, Any], project: ProjectRecord, resource_id: str, change: _Changer
) -> Response[Any]:
    """`PUT` and `PATCH` of a user or group: the body and `If-Match` to the service, the resource answered."""
    resource = await change(
        project, resource_id, await _body(request), _base_url(request), request.headers.get("if-match")
    )
    return _scim(resource)


_Filter = Annotated[str | None, QueryParameter(name="filter", max_length=65536)]
_Attrs = Annotated[str | None, QueryParameter(name="attributes", max_length=4096)]
_Excluded = Annotated[str | None, QueryParameter(name="excludedAttributes", max_length=4096)]
_Start = Annotated[int, QueryParameter(name="startIndex")]
_Count = Annotated[int | None, QueryParameter(name="count")]
_SortBy = Annotated[str | None, QueryParameter(name="sortBy", max_length=200)]
_SortOrder = Annotated[str | None, QueryParameter(name="sortOrder", max_length=20)]


class ScimController(Controller):
    """`/ServiceProviderConfig`, `/ResourceTypes`, `/Schemas`, `/Users`, `/Groups`."""

    path = "/"
    tags = ["SCIM"]
    guards = [authenticate_scim]
    dependencies = {
        "project": Provide(provide_scim_project, sync_to_thread=False),
        "scim": Provide(provide_scim_service, sync_to_thread=False),
    }
    exception_handlers = {Exception: scim_error_handler}
    include_in_schema = False

    @get("/ServiceProviderConfig")
    async def service_provider_config(
        self, request: Request[Any, Any, Any], scim: NamedDependency[ScimService]
    ) -> Response[Any]:
        return _scim(service_provider_config(scim.config, _base_url(request)))

    @get("/ResourceTypes")
    async def resource_types(self, request: Request[Any, Any, Any]) -> Response[Any]:
        types = resource_types(_base_url(request))
        return _list(len(types), types, 1)

    @get("/ResourceTypes/{name:str}")
    async def resource_type(self, request: Request[Any, Any, Any], name: FromPath[str]) -> Response[Any]:
        for item in resource_types(_base_url(request)):
            if item["id"] == name:
                return _scim(item)
        raise NotFound("no such resource type")

    @get("/Schemas")
    async def schemas(self, request: Request[Any, Any, Any]) -> Response[Any]:
        items = schemas(_base_url(request))
        return _list(len(items), items, 1)

    @get("/Schemas/{schema_id:str}")
    async def schema(self, request: Request[Any, Any, Any], schema_id: FromPath[str]) -> Response[Any]:
        for item in schemas(_base_url(request)):
            if item["id"] == schema_id:
                return _scim(item)
        raise NotFound("no such schema")

    @post("/.search", status_code=501)
    async def search_all(self) -> None:
        raise ScimNotImplemented("searching several resource types at once is not supported: POST /Users/.search")

    @route("/{rest:path}", http_method=["GET", "POST", "PUT", "PATCH", "DELETE"])
    async def unknown(self) -> None:
        raise NotFound("no such SCIM endpoint")

    # Users.

    @post("/Users/.search", status_code=200)
    async def search_users(
        self,
        request: Request[Any, Any, Any],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> Response[Any]:
        return await _searched(request, project, scim.list_users)

    @get("/Users")
    async def list_users(
        self,
        request: Request[Any, Any, Any],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
        filter_: _Filter = None,
        attributes: _Attrs = None,
        excluded: _Excluded = None,
        start_index: _Start = 1,
        count: _Count = None,
        sort_by: _SortBy = None,
        sort_order: _SortOrder = None,
    ) -> Response[Any]:
        query = ListQuery(filter_, max(start_index, 1), count, sort_by, sort_order)
        return await _page(request, project, scim.list_users, query, attributes, excluded)

    @post("/Users")
    async def create_user(
        self,
        request: Request[Any, Any, Any],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> Response[Any]:
        return await _created(request, project, scim.create_user)

    @get("/Users/{user_id:str}")
    async def get_user(
        self,
        request: Request[Any, Any, Any],
        user_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
        attributes: _Attrs = None,
        excluded: _Excluded = None,
    ) -> Response[Any]:
        return await _read(request, project, user_id, scim.get_user, attributes, excluded)

    @put("/Users/{user_id:str}")
    async def replace_user(
        self,
        request: Request[Any, Any, Any],
        user_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> Response[Any]:
        return await _changed(request, project, user_id, scim.replace_user)

    @patch("/Users/{user_id:str}")
    async def patch_user(
        self,
        request: Request[Any, Any, Any],
        user_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> Response[Any]:
        return await _changed(request, project, user_id, scim.patch_user)

    @delete("/Users/{user_id:str}", status_code=204)
    async def delete_user(
        self,
        request: Request[Any, Any, Any],
        user_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> None:
        await scim.delete_user(project, user_id, request.headers.get("if-match"))

    # Groups.

    @post("/Groups/.search", status_code=200)
    async def search_groups(
        self,
        request: Request[Any, Any, Any],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> Response[Any]:
        return await _searched(request, project, scim.list_groups)

    @get("/Groups")
    async def list_groups(
        self,
        request: Request[Any, Any, Any],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
        filter_: _Filter = None,
        attributes: _Attrs = None,
        excluded: _Excluded = None,
        start_index: _Start = 1,
        count: _Count = None,
        sort_by: _SortBy = None,
        sort_order: _SortOrder = None,
    ) -> Response[Any]:
        query = ListQuery(filter_, max(start_index, 1), count, sort_by, sort_order)
        return await _page(request, project, scim.list_groups, query, attributes, excluded)

    @post("/Groups")
    async def create_group(
        self,
        request: Request[Any, Any, Any],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> Response[Any]:
        return await _created(request, project, scim.create_group)

    @get("/Groups/{group_id:str}")
    async def get_group(
        self,
        request: Request[Any, Any, Any],
        group_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
        attributes: _Attrs = None,
        excluded: _Excluded = None,
    ) -> Response[Any]:
        return await _read(request, project, group_id, scim.get_group, attributes, excluded)

    @put("/Groups/{group_id:str}")
    async def replace_group(
        self,
        request: Request[Any, Any, Any],
        group_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> Response[Any]:
        return await _changed(request, project, group_id, scim.replace_group)

    @patch("/Groups/{group_id:str}")
    async def patch_group(
        self,
        request: Request[Any, Any, Any],
        group_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> Response[Any]:
        return await _changed(request, project, group_id, scim.patch_group)

    @delete("/Groups/{group_id:str}", status_code=204)
    async def delete_group(
        self,
        request: Request[Any, Any, Any],
        group_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> None:
        await scim.delete_group(project, group_id, request.headers.get("if-match"))


class ScimBulkController(Controller):
    """`/Bulk`: its body may be `maxPayloadSize` (the router's limit); each operation as its own request."""

    path = "/Bulk"
    tags = ["SCIM"]
    guards = [authenticate_scim]
    dependencies = {
        "project": Provide(provide_scim_project, sync_to_thread=False),
        "scim": Provide(provide_scim_service, sync_to_thread=False),
    }
    exception_handlers = {Exception: scim_error_handler}
    include_in_schema = False

    @post("/", status_code=200)
    async def bulk(
        self,
        request: Request[Any, Any, Any],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> Response[Any]:
        limit = scim.config.max_payload_size
        return _scim(await scim.bulk(project, await _body(request, limit), _base_url(request)))


class ScimTokensController(Controller):
    """`/_api/admin/scim/tokens`: the project's SCIM tokens (admin JWT)."""

    path = "/scim/tokens"
    tags = ["SCIM"]
    guards = [authenticate_admin]
    dependencies = admin_dependencies(scim=provide_scim_service)
    exception_handlers = {Exception: export_error_handler}

    @post(
        "/",
        status_code=201,
        summary="Create a SCIM bearer token (shown once, stored hashed)",
        responses=error_responses(ExportErrorBody, 403, 503),
    )
    async def create_token(
        self, project: NamedDependency[ProjectRecord], scim: NamedDependency[ScimService]
    ) -> dict[str, Any]:
        created = await scim.create_token(project.id)
        return {"result": {"id": created.id, "token": created.token, "created_at": created.created_at}}

    @get(
        "/", summary="List the SCIM tokens (never their secrets)", responses=error_responses(ExportErrorBody, 403, 503)
    )
    async def list_tokens(
        self,
        request: Request[Any, Any, Any],
        project: NamedDependency[ProjectRecord],
        scim: NamedDependency[ScimService],
    ) -> dict[str, Any]:
        tokens = await scim.list_tokens(project.id)
        base_url = None
        if scim.served:
            path = request.scope.get("root_path", "") + "/" + scim.config.path.strip("/")
            base_url = f"https://{request.headers.get('host', '')}{path}"
        return {
            "result": {
                "items": [{"id": t.id, "created_at": t.created_at, "last_used_at": t.last_used_at} for t in tokens],
                "base_url": base_url,
            }
        }

    @delete(
        "/{token_id:str}",
        status_code=204,
        summary="Revoke a SCIM token at once",
        responses=error_responses(ExportErrorBody, 403, 404, 503),
    )
    async def revoke_token(
        self, token_id: FromPath[str], project: NamedDependency[ProjectRecord], scim: NamedDependency[ScimService]
    ) -> None:
        await scim.revoke_token(project.id, token_id)
