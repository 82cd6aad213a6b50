"""`POST /_api/admin/users/import` and `GET /_api/admin/users/import/{id}`.

See docs/reference.md#import-request and docs/reference.md#import-task-lifecycle.
"""

import hashlib
import re
from itertools import accumulate
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException
from litestar.params import FromPath, QueryParameter

from litestar_userio.errors import BodyTooLarge, InvalidRequest, UnsupportedMediaType
from litestar_userio.imports.import_schemas import (
    ImportRequest,
    ImportTaskCreated,
    ImportTaskList,
    ImportTaskStatus,
    UserRecord,
)
from litestar_userio.imports.import_service import ImportService
from litestar_userio.observability import telemetry
from litestar_userio.paging import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, decode_cursor
from litestar_userio.projects.project_service import ProjectRecord
from litestar_userio.web.bodies import BODY_PARSER, BodySchema, json_body
from litestar_userio.web.error_responses import import_error_handler
from litestar_userio.web.jsonbody import find_duplicate_key
from litestar_userio.web.openapi import ImportErrorBody, body_examples, error_responses
from litestar_userio.web.providers import admin_dependencies, authenticate_admin, provide_import_service

__all__ = ["IMPORT_EXAMPLES", "ImportBody", "ImportController", "parse_import_request"]

IMPORT_EXAMPLES = {
    "bcrypt users": {
        "identifier": "email",
        "upsert": False,
        "records": [
            {
                "email": "ada@example.com",
                "email_verified": True,
                "name": "Ada Lovelace",
                "roles": ["admin"],
                "custom_attributes": {"plan": "pro"},
                "password": {"type": "bcrypt", "password_hash": "$2b$10$" + "a" * 53},
            },
            {"email": "bob@example.com", "phone_number": "+14155550123"},
        ],
    }
}


MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a request body may have. What is stored must stay far below msgspec's
recursion limit (about 930 levels here), or the job, the status answer, the export and the token hooks of that user
fail on it; no real record comes near 64."""

_TOO_DEEP = f"invalid request body: arrays and objects nest deeper than {MAX_DEPTH} levels"
_ESCAPE = re.compile(rb"\\.")
_NOT_QUOTES_OR_BRACKETS = bytes(b for b in range(256) if b not in b'"[]{}')
_STRING = re.compile(rb'"[^"]*"')
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nesting_depth(body: bytes) -> int:
    r"""How deep arrays and objects nest in a JSON text (valid JSON: brackets inside strings do not count).

    Escapes go first (`\"` is no quote), then everything but quotes and brackets; two quotes side by side are an
    empty string or the end and start of two strings, so dropping them keeps what is inside strings inside, and
    what little is left is stripped of its strings. 0.8 us per record of a 500 KB import body where one regex
    over the whole body took 4.4 us (`tests/imports/test_request_checks.py` compares it with the decoded depth).
    """
    if b"\\" in body:
        body = _ESCAPE.sub(b"", body)
    brackets = _STRING.sub(b"", body.translate(None, _NOT_QUOTES_OR_BRACKETS).replace(b'""', b""))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def parse_import_request(content_type: str, body: bytes) -> ImportRequest:
    """Check the request's top level only; records are validated one by one in the job.

    See docs/reference.md#import-request.
    """
    if content_type.split(";", 1)[0].strip().lower() != "application/json":
        raise UnsupportedMediaType()
    try:
        body.decode("utf-8")  # records stay raw below, and msgspec does not check the UTF-8 of what it skips
    except UnicodeDecodeError as exc:
        raise InvalidRequest(f"request body is not valid UTF-8: {exc.reason} at byte {exc.start}") from None
    try:
        request = msgspec.json.decode(body, type=ImportRequest)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"invalid request body: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise InvalidRequest(f"request body is not valid JSON: {exc}") from exc
    except RecursionError:  # how deep the parser gets depends on the stack it starts from: past 64 either way
        raise InvalidRequest(_TOO_DEEP) from None
    if nesting_depth(body) > MAX_DEPTH:
        raise InvalidRequest(_TOO_DEEP)
    if duplicate := find_duplicate_key(body):
        raise InvalidRequest(f"invalid request body: duplicate key {duplicate.key!r} at {duplicate.location}")
    for index, record in enumerate(request.records):
        if bytes(memoryview(record)[:1]) != b"{":
            raise InvalidRequest(f"invalid request body: records[{index}] must be an object")
    for index, check in enumerate(request.password_checks or ()):
        if not request.dry_run:
            raise InvalidRequest("invalid request body: password_checks needs dry_run = true (nothing is applied)")
        if check.index >= len(request.records):
            raise InvalidRequest(f"invalid request body: password_checks[{index}].index {check.index} names no record")
    return request


ImportBody = Annotated[
    ImportRequest,
    json_body("ImportBody"),
    BodySchema(ImportRequest, {"records": UserRecord}),
]
"""`data: ImportBody` is an `ImportRequest` (its route decodes it by `parse_import_request`), records documented as
`UserRecord`."""


def idempotency_key(header: str | None) -> str | None:
    """The `Idempotency-Key` header (beyond the reference): 1-255 printable ASCII characters, or absent."""
    if header is None:
        return None
    if not 0 < len(header) <= 255 or not all(33 <= ord(c) <= 126 for c in header):
        raise InvalidRequest("Idempotency-Key must be 1 to 255 printable ASCII characters without spaces")
    return header


def import_errors(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """The import error handler, with a 413 that states the limit and the way out.

    The limit is the route's own (`web/router.py` sets the configured one on the Router that mounts the controller).
    """
    if isinstance(exc, HTTPException) and exc.status_code == 413:
        limit = request.route_handler.resolve_request_max_body_size()
        exc = BodyTooLarge(
            f"request body is over the limit of {limit} bytes: send fewer records per request, or import the"
            " file with the `userio import` CLI (pip install 'litestar-userio[cli]'), which splits it"
        )
    return import_error_handler(request, exc)


class ImportController(Controller):
    """Thin: authenticate, parse, call the import service, shape the answer.

    No body limit of its own: the Router that mounts it sets the configured one (`ImportConfig.max_body_size`).
    """

    path = "/users/import"
    tags = ["User import"]
    guards = [authenticate_admin]
    dependencies = admin_dependencies(imports_service=provide_import_service)
    exception_handlers = {Exception: import_errors}

    @post(
        "/",
        opt={BODY_PARSER: parse_import_request},
        status_code=202,
        summary="Initiate a bulk user import",
        description=(
            "Stores the task and answers at once; records are validated one by one in the job. An "
            "`Idempotency-Key` header makes a replay (an answer lost on the way) answer the same task."
        ),
        operation_class=body_examples(IMPORT_EXAMPLES),
        responses=error_responses(ImportErrorBody, 400, 403, 409, 413, 415, 503),
    )
    async def initiate(
        self,
        request: Request[Any, Any, Any],
        data: ImportBody,
        project: NamedDependency[ProjectRecord],
        imports_service: NamedDependency[ImportService],
    ) -> Response[ImportTaskCreated]:
        key = idempotency_key(request.headers.get("idempotency-key"))
        created = await imports_service.create_task(
            project,
            data,
            idempotency_key=key,
            request_sha256=hashlib.sha256(await request.body()).hexdigest() if key is not None else None,
        )
        telemetry.import_accepted(len(await request.body()))  # the body Litestar already read (cached)
        location = f"{request.scope['path_template']}/{created.id}"
        return Response(created, status_code=202, headers={"Location": location})

    @get(
        "/{task_id:str}",
        summary="Check the status of an import task",
        description="Pending: `progress`. Completed: `summary` and one detail per record, in index order.",
        responses=error_responses(ImportErrorBody, 403, 404, 503),
    )
    async def status(
        self,
        task_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        imports_service: NamedDependency[ImportService],
    ) -> Response[ImportTaskStatus]:
        body = await imports_service.status(project.id, task_id)
        return Response(body, media_type="application/json")  # type: ignore[arg-type]

    @get(
        "/",
        summary="List the project's import tasks, newest first",
        description="Each task without its details; pass `next_cursor` back as `cursor` for the next page.",
        responses=error_responses(ImportErrorBody, 400, 403, 503),
    )
    async def list_tasks(
        self,
        project: NamedDependency[ProjectRecord],
        imports_service: NamedDependency[ImportService],
        limit: Annotated[int, QueryParameter(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
        cursor: Annotated[str | None, QueryParameter(max_length=200)] = None,
    ) -> ImportTaskList:
        return await imports_service.list_tasks(project.id, limit, decode_cursor(cursor))
