"""`POST /_api/admin/users/export` and `GET /_api/admin/users/export/{task_id}`.

See docs/reference.md#export-request and docs/reference.md#export-task-lifecycle.
"""

from typing import Annotated, Any
from urllib.parse import urlsplit, urlunsplit

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter

from litestar_userio.auth.admin_auth import ADMIN_IDENTITY, AdminIdentity
from litestar_userio.causes import cause_from_msgspec, schema_causes
from litestar_userio.errors import (
    Cause,
    DuplicateKeyFound,
    UnsupportedMediaType,
    ValidationFailed,
)
from litestar_userio.exports.export_schemas import (
    ExportRequest,
    ExportResult,
    ExportTaskListResult,
    export_request_validator,
)
from litestar_userio.exports.export_service import ExportService
from litestar_userio.paging import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, decode_cursor
from litestar_userio.projects.project_service import ProjectRecord
from litestar_userio.web.bodies import BODY_PARSER, BodySchema, json_body
from litestar_userio.web.error_responses import export_error_handler
from litestar_userio.web.jsonbody import find_duplicate_key
from litestar_userio.web.openapi import ExportErrorBody, body_examples, error_responses
from litestar_userio.web.providers import admin_dependencies, authenticate_admin, provide_export_service

__all__ = ["EXPORT_EXAMPLES", "ExportBody", "ExportController", "parse_export_request"]

EXPORT_EXAMPLES = {
    "ndjson": {"format": "ndjson"},
    "lossless (userio), age-encrypted": {
        "format": "userio",
        "encryption": {"age_recipients": ["age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"]},
    },
    "chosen CSV columns": {
        "format": "csv",
        "csv": {
            "fields": [
                {"pointer": "/sub", "field_name": "user_id"},
                {"pointer": "/email"},
                {"pointer": "/custom_attributes/plan"},
            ]
        },
    },
}


def parse_export_request(content_type: str, body: bytes) -> ExportRequest:
    """Decode the body; every problem is `Invalid/ValidationFailed` with its cause (docs/reference.md#errors-export)."""
    if content_type.split(";", 1)[0].strip().lower() != "application/json":
        raise UnsupportedMediaType()
    try:
        request = msgspec.json.decode(body, type=ExportRequest)
    except msgspec.ValidationError as exc:
        raise ValidationFailed(_every_cause(body) or [cause_from_msgspec(exc)]) from exc
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ValidationFailed([Cause("", "json", {"error": str(exc)})], "request body is not valid JSON") from exc
    if duplicate := find_duplicate_key(body):
        raise DuplicateKeyFound(duplicate.key, duplicate.location)
    return request


def _every_cause(body: bytes) -> list[Cause]:
    """Every cause of a request msgspec refused; empty when the body is too deep to walk (msgspec's cause then)."""
    try:
        return schema_causes(export_request_validator(), msgspec.json.decode(body))
    except (RecursionError, msgspec.DecodeError):
        return []


ExportBody = Annotated[ExportRequest, json_body("ExportBody"), BodySchema(ExportRequest)]
"""`data: ExportBody` is an `ExportRequest` (its route decodes it by `parse_export_request`)."""


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(request: Request[Any, Any, Any]) -> str:
    """The origin the client used, for the local store's download URL when no `base_url` is configured.

    A Host header without a port (`--host trial.localhost` against port 8443) gets the port the request came
    in on, unless a proxy forwarded it (then the proxy's public port is the default one, or `base_url` says).
    """
    origin = str(request.base_url).rstrip("/")
    host = request.headers.get("host", "")
    server = request.scope.get("server")
    forwarded = any(name in request.headers for name in ("forwarded", "x-forwarded-for", "x-forwarded-host"))
    if not host or forwarded or not server or server[1] is None or host.endswith("]") or ":" in host:
        return origin
    port = int(server[1])
    if port == _DEFAULT_PORTS.get(request.url.scheme):
        return origin
    parts = urlsplit(origin)
    return urlunsplit(parts._replace(netloc=f"{parts.hostname}:{port}"))


class ExportController(Controller):
    """Thin: authenticate, parse, call the export service, wrap the answer in `result`."""

    path = "/users/export"
    tags = ["User export"]
    guards = [authenticate_admin]
    dependencies = admin_dependencies(exports_service=provide_export_service)
    exception_handlers = {Exception: export_error_handler}
    request_max_body_size = 64 * 1024

    @post(
        "/",
        opt={BODY_PARSER: parse_export_request},
        status_code=202,
        summary="Initiate a bulk user export",
        description=(
            "One running export per project and the `UserExport` bucket (docs/reference.md#limits);"
            " `format: userio` is the lossless, age-encrypted export (docs/reference.md#export-lossless)."
        ),
        operation_class=body_examples(EXPORT_EXAMPLES),
        responses=error_responses(ExportErrorBody, 400, 403, 415, 429, 500, 503),
    )
    async def initiate(
        self,
        request: Request[Any, Any, Any],
        data: ExportBody,
        project: NamedDependency[ProjectRecord],
        exports_service: NamedDependency[ExportService],
    ) -> Response[ExportResult]:
        identity = request.scope.get("state", {}).get(ADMIN_IDENTITY)
        task = await exports_service.initiate(
            project, data, requested_by=identity if isinstance(identity, AdminIdentity) else None
        )
        location = f"{request.scope['path_template']}/{task.id}"
        return Response(ExportResult(task), status_code=202, headers={"Location": location})

    @get(
        "/{task_id:str}",
        summary="Check an export task; a completed one carries a fresh download URL",
        description="`download_url` is signed on every call and valid 60 seconds.",
        responses=error_responses(ExportErrorBody, 403, 404, 500, 503),
    )
    async def status(
        self,
        request: Request[Any, Any, Any],
        task_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        exports_service: NamedDependency[ExportService],
    ) -> ExportResult:
        return ExportResult(await exports_service.status(project, task_id, _origin(request)))

    @get(
        "/",
        summary="List the project's export tasks, newest first",
        description="Without download URLs (the status signs a fresh one); pass `next_cursor` back as `cursor`.",
        responses=error_responses(ExportErrorBody, 400, 403, 500, 503),
    )
    async def list_tasks(
        self,
        project: NamedDependency[ProjectRecord],
        exports_service: NamedDependency[ExportService],
        limit: Annotated[int, QueryParameter(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
        cursor: Annotated[str | None, QueryParameter(max_length=200)] = None,
    ) -> ExportTaskListResult:
        after = decode_cursor(cursor)
        return ExportTaskListResult(await exports_service.list_tasks(project, limit, after))
