"""Typed request bodies: handlers take `data: ImportRequest`, our strict parser decodes it.

Litestar's own JSON decoding is lenient where the API is not (content type, UTF-8, duplicate keys, nesting)
and answers in its own words, not the envelopes'. So each body type gets a DTO whose `decode_bytes` runs the
endpoint's strict parser, and whose OpenAPI schema is the struct's own (msgspec's JSON schema, inline).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import msgspec
from litestar.dto import AbstractDTO

from litestar_userio.causes import cause_from_msgspec
from litestar_userio.errors import Cause, DuplicateKeyFound, UnsupportedMediaType, ValidationFailed
from litestar_userio.jsonbody import find_duplicate_key
from litestar_userio.openapi import struct_schema

if TYPE_CHECKING:
    from litestar.dto.data_structures import DTOFieldDefinition
    from litestar.openapi.spec import Reference, Schema
    from litestar.typing import FieldDefinition

__all__ = ["StrictJSONDTO", "parse_json_body"]

T = TypeVar("T")


def parse_json_body(content_type: str, body: bytes, type_: type[T]) -> T:
    """The one strict JSON body parser of the hooks and users APIs: a JSON body as `type_`.

    415 for another content type, `ValidationFailed` with its cause otherwise, `DuplicateKeyFound` for a key given
    twice.
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
    return decoded


class StrictJSONDTO(AbstractDTO[T]):
    """Decodes a handler's `data` with `parse(content_type, body)`; request bodies only.

    A subclass names the struct and its parser:

    ```python
    class ImportRequestDTO(StrictJSONDTO[ImportRequest]):
        @classmethod
        def parse(cls, content_type: str, body: bytes) -> ImportRequest:
            return parse_import_request(content_type, body)
    ```

    Litestar calls no DTO for an empty body and reports `data` as missing instead; the envelope handlers of
    `errors` answer that with the error of `decode_bytes(b"")`.
    """

    documented_items: ClassVar[dict[str, Any]] = {}
    """Members kept raw in the struct (`list[Raw]`) and the type that documents their items."""

    @classmethod
    def parse(cls, content_type: str, body: bytes) -> T:
        """The body as the struct, or the endpoint's error (415, 400) in its own words."""
        raise NotImplementedError

    def decode_bytes(self, value: bytes) -> T:
        """The strict parser, given the request's content type."""
        return self.parse(self.asgi_connection.headers.get("content-type", ""), value)

    @classmethod
    def generate_field_definitions(cls, model_type: type[Any]) -> Generator[DTOFieldDefinition, None, None]:
        """No transfer model: the struct is decoded directly."""
        yield from ()

    @classmethod
    def detect_nested_field(cls, field_definition: FieldDefinition) -> bool:
        """No transfer model: the struct is decoded directly."""
        return False

    @classmethod
    def is_supported_model_type_field(cls, field_definition: FieldDefinition) -> bool:
        """Not for answers: a handler's return type is encoded by Litestar as usual."""
        return False

    @classmethod
    def create_for_field_definition(
        cls, field_definition: FieldDefinition, handler_id: str, backend_cls: Any = None
    ) -> None:
        """Nothing to build: `parse` decodes the body (Litestar's DTO backends build a transfer model here)."""

    @classmethod
    def create_openapi_schema(
        cls, field_definition: FieldDefinition, handler_id: str, schema_creator: Any
    ) -> Reference | Schema:
        """The struct's JSON schema, inline."""
        return struct_schema(cls.model_type, cls.documented_items)
