"""Typed request bodies: handlers take `data: ImportBody` (an `ImportRequest`), our strict parser decodes it.

Litestar's own JSON decoding is lenient where the API is not (content type, UTF-8, duplicate keys, nesting)
and answers in its own words, not the envelopes'. A handler's `data` annotation carries a `StrictJSON` marker
(`Annotated[ImportRequest, json_body("ImportBody"), StrictJSON(ImportRequest, parse_import_request)]`) that
names its parser and the type that documents it; two supported Litestar hooks read it:

- `StrictBodyRequest`, the plugin Router's `request_class`: Litestar gets a JSON `data` from `Request.json()`
  (no DTO), so that method runs the marker's parser; msgspec then passes the decoded struct through the
  signature model unchanged. (A DTO, `AbstractDTO`, was the other way in; its internals change in Litestar 3.)
- `StrictBodySchemas`, an `OpenAPISchemaPlugin` that `UserIOPlugin` is: the body's schema is the type's own
  (msgspec's JSON schema, inline), and only for fields with the marker, so a struct inside an answer keeps its
  component. `json_body` gives each body its own schema key: Litestar answers a struct it already documented
  (`HookList`, an answer's member too) with that component before it asks a plugin.

Litestar reads no empty body; it reports `data` as missing, and the admin error handlers answer that with the
marker's parser given `b""` (`empty_body_refusal`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, get_args, get_origin

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
    from litestar.handlers import BaseRouteHandler
    from litestar.openapi.spec import Schema

__all__ = [
    "StrictBodyRequest",
    "StrictBodySchemas",
    "StrictJSON",
    "empty_body_refusal",
    "json_body",
    "parse_json_body",
    "refuse_unstorable_parameters",
]

T = TypeVar("T")


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


@dataclass(frozen=True, eq=False)
class StrictJSON:
    """The marker on a handler's `data` annotation: how the body is parsed and documented.

    ```python
    ExportBody = Annotated[ExportRequest, json_body("ExportBody"), StrictJSON(ExportRequest, parse_export_request)]
    HookListBody = Annotated[HookList, json_body("HookListBody"), StrictJSON(HookList)]  # parse_json_body
    ```
    """

    documented: Any
    """The type whose JSON schema documents the body (and that `parse_json_body` decodes by default)."""
    parser: Callable[[str, bytes], Any] | None = None
    """The endpoint's parser, `(content type, body) -> value`; `parse_json_body` into `documented` when None."""
    items: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Members kept raw in the struct (`list[Raw]`) and the type that documents their items."""

    def parse(self, content_type: str, body: bytes) -> Any:
        """The body as the handler's value, or the endpoint's error (415, 400) in its own words."""
        if self.parser is None:
            return parse_json_body(content_type, body, self.documented)
        return self.parser(content_type, body)

    def schema(self) -> Schema:
        """The documented type's JSON schema, inline."""
        return struct_schema(self.documented, dict(self.items))


def _marker(metadata: Any) -> StrictJSON | None:
    return next((m for m in metadata if isinstance(m, StrictJSON)), None)


def strict_json_of(route_handler: BaseRouteHandler) -> StrictJSON | None:
    """The marker on the handler's `data`, if it takes a strict body: read from the function's own annotation."""
    return _strict_json_of_fn(route_handler.fn)


@functools.cache
def _strict_json_of_fn(fn: Callable[..., Any]) -> StrictJSON | None:
    """Once per handler function (the web layer's annotations are evaluated, so `data`'s is the `Annotated`)."""
    data = inspect.get_annotations(fn).get("data")
    return _marker(get_args(data)[1:]) if get_origin(data) is Annotated else None


class StrictBodyRequest(Request[Any, Any, Any]):
    """`json()` is the route's strict parser where the handler's `data` carries `StrictJSON`, else Litestar's."""

    async def json(self) -> Any:
        """The decoded body: the struct the handler takes, or the endpoint's error."""
        strict = strict_json_of(self.route_handler)
        if strict is None:
            return await super().json()
        return strict.parse(self.headers.get("content-type", ""), await self.body())


def empty_body_refusal(request: Request[Any, Any, Any]) -> UserIOError | None:
    """The route's own answer to an empty body (Litestar reads none and reports `data` as missing)."""
    strict = strict_json_of(request.route_handler)
    if strict is None:
        return None
    try:
        strict.parse(request.headers.get("content-type", ""), b"")
    except UserIOError as refusal:
        return refusal
    return None


class StrictBodySchemas(OpenAPISchemaPlugin):
    """Documents each `data` with a `StrictJSON` marker by the marker's type, inline; nothing else."""

    @staticmethod
    def is_plugin_supported_type(value: Any) -> bool:
        """By the field's marker, never by type alone (a body struct may also sit inside an answer)."""
        return False

    def is_plugin_supported_field(self, field_definition: Any) -> bool:
        """A field whose annotation carries `StrictJSON`."""
        return _marker(getattr(field_definition, "metadata", ())) is not None

    def to_openapi_schema(self, field_definition: Any, schema_creator: Any) -> Schema:
        """The marker's schema."""
        strict = _marker(field_definition.metadata)
        assert strict is not None
        return strict.schema()
