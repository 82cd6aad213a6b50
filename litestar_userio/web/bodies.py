"""Typed request bodies: handlers take `data: ImportBody` (an `ImportRequest`), our strict parser decodes it.

Litestar's own JSON decoding is lenient where the API is not (content type, UTF-8, duplicate keys, nesting)
and answers in its own words, not the envelopes'. Each body route says so where it is declared, through two
public Litestar hooks:

- its parser, in the route's `opt` (`@post("/", opt={BODY_PARSER: parse_import_request})`, or
  `json_parser(HookList)` for `parse_json_body` into a type): `StrictBodyRequest`, the plugin Router's
  `request_class`, reads it from `route_handler.opt` (Litestar's per-route options) in `Request.json()`, where
  Litestar gets a JSON `data` (no DTO), and msgspec then passes the decoded struct through the signature model
  unchanged. (A DTO, `AbstractDTO`, was the other way in; its internals change in Litestar 3.)
- its schema, a `BodySchema` on the `data` type (`Annotated[ImportRequest, json_body("ImportBody"),
  BodySchema(ImportRequest, {"records": UserRecord})]`): `StrictBodySchemas`, an `OpenAPISchemaPlugin`
  registered right after `UserIOPlugin`, documents such a field by the type's own schema (msgspec's JSON schema,
  inline), and only such a field, so a struct inside an answer keeps its component. `json_body` gives each body its
  own schema key: Litestar answers a struct it already documented (`HookList`, an answer's member too) with that
  component before it asks a plugin.

Litestar reads no empty body; it reports `data` as missing, and the admin error handlers answer that with the
route's parser given `b""` (`empty_body_refusal`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from litestar import Request
from litestar.enums import RequestEncodingType
from litestar.params import BodyKwarg
from litestar.plugins import OpenAPISchemaPlugin

from litestar_userio.causes import cause_from_msgspec
from litestar_userio.errors import (
    Cause,
    DuplicateKeyFound,
    UnstorableText,
    UnsupportedMediaType,
    UserIOError,
    ValidationFailed,
)
from litestar_userio.imports.screening import may_hold_nul, screen_record
from litestar_userio.web.jsonbody import find_duplicate_key
from litestar_userio.web.openapi import struct_schema
from userio_core.attribute_formats import NUL_MESSAGE, storable_text

if TYPE_CHECKING:
    from litestar.openapi.spec import Schema

__all__ = [
    "BODY_PARSER",
    "BodyParser",
    "BodySchema",
    "StrictBodyRequest",
    "StrictBodySchemas",
    "empty_body_refusal",
    "json_body",
    "json_parser",
    "parse_json_body",
    "refuse_unstorable_parameters",
]

T = TypeVar("T")

BodyParser = Callable[[str, bytes], Any]
"""A route's body parser: `(content type, body) -> the handler's data`, or the endpoint's error (415, 400)."""

BODY_PARSER = "userio_body_parser"
"""The route `opt` key of its `BodyParser` (`@post("/", opt={BODY_PARSER: parse_export_request})`)."""


def parse_json_body(content_type: str, body: bytes, type_: type[T]) -> T:
    """The one strict JSON body parser of the hooks and users APIs: a JSON body as `type_`.

    415 for another content type, `ValidationFailed` with its cause otherwise, `DuplicateKeyFound` for a key given
    twice, `UnstorableText` naming each string or member name that holds U+0000 (the import's screening rule).
    """
    if content_type.split(";", 1)[0].strip().lower() != "application/json":
        raise UnsupportedMediaType()
    try:
        decoded = msgspec.json.decode(body, type=type_)
    except msgspec.ValidationError as exc:
        raise ValidationFailed([cause_from_msgspec(exc)]) from exc
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ValidationFailed([Cause("", "json", {"error": str(exc)})], "request body is not valid JSON") from exc
    if duplicate := find_duplicate_key(body):
        raise DuplicateKeyFound(duplicate.key, duplicate.location)
    if may_hold_nul(body) and (causes := screen_record(body)):
        raise UnstorableText(causes)
    return decoded


def refuse_unstorable_parameters(request: Request[Any, Any, Any]) -> None:
    """The admin API's `before_request`: a query or path parameter holding U+0000 is `UnstorableText`, named.

    Every admin route passes here after its guard and before its parameters are decoded, so no such value reaches a
    service or the database (PostgreSQL refuses it); the location is `query/<name>` or `path/<name>`.
    """
    causes = [
        Cause(f"query/{name}", "general", {"message": NUL_MESSAGE})
        for name, value in request.query_params.multi_items()
        if not (storable_text(name) and storable_text(value))
    ]
    causes += [
        Cause(f"path/{name}", "general", {"message": NUL_MESSAGE})
        for name, value in request.path_params.items()
        if isinstance(value, str) and not storable_text(value)
    ]
    if causes:
        raise UnstorableText(causes)


def json_body(key: str) -> BodyKwarg:
    """A JSON `Body` documented under its own schema key (`key`, the alias's name), never as a component."""
    return BodyKwarg(media_type=RequestEncodingType.JSON, schema_component_key=key)


def json_parser(type_: type[T]) -> Callable[[str, bytes], T]:
    """The route's parser when it is `parse_json_body` into `type_` (the hooks, users and webhooks bodies)."""
    return functools.partial(parse_json_body, type_=type_)


@dataclass(frozen=True, eq=False)
class BodySchema:
    """The marker on a body's `data` type: the body is documented by `documented`'s JSON schema, inline.

    ```python
    ExportBody = Annotated[ExportRequest, json_body("ExportBody"), BodySchema(ExportRequest)]
    ```
    """

    documented: Any
    """The type whose JSON schema documents the body."""
    items: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Members kept raw in the struct (`list[Raw]`) and the type that documents their items."""

    def schema(self) -> Schema:
        """The documented type's JSON schema, inline."""
        return struct_schema(self.documented, dict(self.items))


def _marker(metadata: Any) -> BodySchema | None:
    return next((m for m in metadata if isinstance(m, BodySchema)), None)


def _parser_of(request: Request[Any, Any, Any]) -> BodyParser | None:
    """The route's body parser, from the `opt` its declaration set (None: not a strict body route)."""
    parser: BodyParser | None = request.route_handler.opt.get(BODY_PARSER)
    return parser


class StrictBodyRequest(Request[Any, Any, Any]):
    """`json()` is the route's strict parser where its `opt` names one (`BODY_PARSER`), else Litestar's."""

    async def json(self) -> Any:
        """The decoded body: the struct the handler takes, or the endpoint's error."""
        parser = _parser_of(self)
        if parser is None:
            return await super().json()
        return parser(self.headers.get("content-type", ""), await self.body())


def empty_body_refusal(request: Request[Any, Any, Any]) -> UserIOError | None:
    """The route's own answer to an empty body (Litestar reads none and reports `data` as missing)."""
    parser = _parser_of(request)
    if parser is None:
        return None
    try:
        parser(request.headers.get("content-type", ""), b"")
    except UserIOError as refusal:
        return refusal
    return None


class StrictBodySchemas(OpenAPISchemaPlugin):
    """Documents each `data` whose type carries a `BodySchema` by the marker's type, inline; nothing else."""

    @staticmethod
    def is_plugin_supported_type(value: Any) -> bool:
        """By the field's marker, never by type alone (a body struct may also sit inside an answer)."""
        return False

    def is_plugin_supported_field(self, field_definition: Any) -> bool:
        """A field whose type carries a `BodySchema` (Litestar hands the plugin the field with its metadata)."""
        return _marker(getattr(field_definition, "metadata", ())) is not None

    def to_openapi_schema(self, field_definition: Any, schema_creator: Any) -> Schema:
        """The marker's schema."""
        strict = _marker(field_definition.metadata)
        assert strict is not None
        return strict.schema()
