"""OpenAPI for the admin endpoints: schemas of msgspec structs, body examples, the error envelopes.

Request bodies are documented from each handler's `data` type (`bodies.BodySchema` uses `struct_schema`);
`body_examples` adds their named examples, `error_responses` documents each envelope.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

import msgspec
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import (
    Components,
    Example,
    OpenAPIType,
    Operation,
    Reference,
    RequestBody,
    Schema,
    SecurityScheme,
)

from litestar_userio.errors import ErrorObject

if TYPE_CHECKING:
    from litestar.config.app import AppConfig

__all__ = [
    "ADMIN_SECURITY",
    "ADMIN_SECURITY_SCHEME",
    "ExportErrorBody",
    "ImportErrorBody",
    "body_examples",
    "document_admin_api",
    "error_responses",
    "struct_schema",
]

ADMIN_SECURITY_SCHEME = "AdminAPIJWT"
ADMIN_SECURITY: list[dict[str, list[str]]] = [{ADMIN_SECURITY_SCHEME: []}]
"""Every admin endpoint takes an Admin API JWT as a bearer token (docs/reference.md#authentication)."""
_DEFAULT_TITLE = "Litestar API"


class ImportErrorBody(msgspec.Struct):
    """The import endpoints' error answer (docs/reference.md#errors-import)."""

    error: str


class ExportErrorBody(msgspec.Struct):
    """The export and hooks endpoints' error answer (docs/reference.md#errors-envelope)."""

    error: ErrorObject


_ERROR_DESCRIPTIONS = {
    400: "Invalid request",
    403: "Forbidden: HTTPS required, unknown Host, or a missing or invalid Admin API JWT",
    404: "Not found (unknown, foreign or expired task)",
    409: "The Idempotency-Key was used for a different request",
    410: "Gone: the change-log cursor is older than the retention (take a new snapshot)",
    413: "Request body over the limit",
    415: "Content-Type is not application/json",
    429: "Too many requests (Retry-After)",
    500: "Internal error",
    503: "A dependency (database, queue) is unavailable; retry later",
}

_KEYS = {f.name.replace("_", ""): f.name for f in fields(Schema)} | {
    "not": "schema_not",
    "if": "schema_if",
    "else": "schema_else",
    "additionalProperties": "additional_properties",
}


def _to_schema(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_to_schema(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _to_schema(definitions[node["$ref"].rsplit("/", 1)[1]], definitions)
    kwargs: dict[str, Any] = {}
    for key, value in node.items():
        name = _KEYS.get(key) or _KEYS.get(key.lower())
        if name is None:
            continue
        if name == "type":
            value = [OpenAPIType(v) for v in value] if isinstance(value, list) else OpenAPIType(value)
        elif name == "properties":
            value = {k: _to_schema(v, definitions) for k, v in value.items()}
        elif name in {"items", "additional_properties", "any_of", "one_of", "all_of", "schema_not"}:
            value = _to_schema(value, definitions) if isinstance(value, dict | list) else value
        kwargs[name] = value
    return Schema(**kwargs)


def struct_schema(struct: Any, items: dict[str, Any] | None = None) -> Schema:
    """An OpenAPI schema from a msgspec type; `items` documents raw array members (`{"records": UserRecord}`)."""
    generated = msgspec.json.schema(struct)
    definitions = dict(generated.get("$defs", {}))
    root = generated["$ref"].rsplit("/", 1)[1] if "$ref" in generated else None
    for member, item_type in (items or {}).items():
        item = msgspec.json.schema(item_type)
        definitions.update(item.get("$defs", {}))
        assert root is not None
        definitions[root]["properties"][member]["items"] = {"$ref": item["$ref"]}
    result: Schema = _to_schema(generated, definitions)
    return result


def body_examples(examples: dict[str, Any]) -> type[Operation]:
    """An operation class that adds named examples to the request body Litestar documents from `data`.

    Litestar puts a `Body(examples=...)` into the schema (a JSON-schema list); named examples belong to the
    media type, and nothing else of Litestar's sets them.
    """
    named: dict[str, Example | Reference] = {name: Example(value=value) for name, value in examples.items()}

    @dataclass
    class WithBodyExamples(Operation):
        def __post_init__(self) -> None:
            if isinstance(self.request_body, RequestBody):
                for media in self.request_body.content.values():
                    media.examples = named

    return WithBodyExamples


def error_responses(envelope: type[msgspec.Struct], *codes: int) -> dict[int, ResponseSpec]:
    """Documented error answers in `envelope` for `codes`.

    400 is always among them: Litestar documents its own 400 shape on any route with parameters (the Host
    header is one), and our handlers answer in the envelope instead.
    """
    return {
        code: ResponseSpec(data_container=envelope, description=_ERROR_DESCRIPTIONS[code], generate_examples=False)
        for code in sorted({400, *codes})
    }


def document_admin_api(app_config: AppConfig) -> None:
    """The bearer security scheme; a real title and version when the host left Litestar's default."""
    openapi = app_config.openapi_config
    if openapi is None:
        return
    scheme = SecurityScheme(
        type="http",
        scheme="bearer",
        bearer_format="JWT",
        description="An Admin API JWT: RS256, signed with the project's admin key, `aud` the project id "
        "(`litestar userio admin-token --project ID`).",
    )
    existing = openapi.components if isinstance(openapi.components, list) else [openapi.components]
    openapi.components = [*existing, Components(security_schemes={ADMIN_SECURITY_SCHEME: scheme})]
    if openapi.title == _DEFAULT_TITLE:
        openapi.title = "litestar-userio admin API"
        try:
            openapi.version = version("litestar-userio")
        except PackageNotFoundError:
            pass
