"""Every admin endpoint is in the OpenAPI schema with its body, answers and error envelopes; the docs render."""

from __future__ import annotations

import msgspec
import pytest

from litestar_userio.exports.export_schemas import ExportRequest
from litestar_userio.hooks.hook_schemas import HookList, HookSecretValue, HookTestRequest
from litestar_userio.imports.import_schemas import ImportRequest
from litestar_userio.web.exports import EXPORT_EXAMPLES
from litestar_userio.web.imports import IMPORT_EXAMPLES

ENDPOINTS = {
    ("post", "/_api/admin/users/import"): ("202", {"400", "403", "413", "415"}, "ImportErrorBody"),
    ("get", "/_api/admin/users/import/{task_id}"): ("200", {"403", "404"}, "ImportErrorBody"),
    ("post", "/_api/admin/users/export"): ("202", {"400", "403", "415", "429", "500"}, "ExportErrorBody"),
    ("get", "/_api/admin/users/export/{task_id}"): ("200", {"403", "404", "500"}, "ExportErrorBody"),
    ("get", "/_api/admin/hooks"): ("200", {"403"}, "ExportErrorBody"),
    ("put", "/_api/admin/hooks"): ("200", {"400", "403", "415"}, "ExportErrorBody"),
    ("delete", "/_api/admin/hooks"): ("200", {"403"}, "ExportErrorBody"),
    ("post", "/_api/admin/hooks/test"): ("200", {"400", "403", "404"}, "ExportErrorBody"),
}
WITH_BODY = {
    ("post", "/_api/admin/users/import"),
    ("post", "/_api/admin/users/export"),
    ("put", "/_api/admin/hooks"),
    ("post", "/_api/admin/hooks/test"),
}


@pytest.fixture
async def schema(env):
    response = await env.client.get("/schema/openapi.json")
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize(("method", "path"), list(ENDPOINTS))
async def test_each_admin_endpoint_is_documented(schema, method, path):
    success, errors, envelope = ENDPOINTS[(method, path)]
    operation = schema["paths"][path][method]

    assert success in operation["responses"]
    assert errors <= set(operation["responses"])
    for code in errors:
        ref = operation["responses"][code]["content"]["application/json"]["schema"]["$ref"]
        assert ref.endswith(envelope)
    if (method, path) in WITH_BODY:
        assert operation["requestBody"]["required"] is True
        assert "properties" in operation["requestBody"]["content"]["application/json"]["schema"]


async def test_import_body_documents_every_record_member_and_an_example(schema):
    body = schema["paths"]["/_api/admin/users/import"]["post"]["requestBody"]["content"]["application/json"]
    record = body["schema"]["properties"]["records"]["items"]["properties"]

    assert {"email", "password", "mfa", "custom_attributes", "roles", "address", "disabled"} <= set(record)
    assert body["schema"]["required"] == ["identifier", "records"]
    assert body["examples"]["bcrypt users"]["value"]["identifier"] == "email"


async def test_envelopes_are_described(schema):
    components = schema["components"]["schemas"]

    assert components["ImportErrorBody"]["properties"]["error"]["type"] == "string"
    assert "error" in components["ExportErrorBody"]["properties"]


async def test_the_docs_page_renders(env):
    response = await env.client.get("/schema/swagger")

    assert response.status_code == 200
    assert "swagger" in response.text.lower()


async def test_every_admin_endpoint_takes_a_bearer_token_and_the_host_header(schema):
    scheme = schema["components"]["securitySchemes"]["AdminAPIJWT"]

    assert (scheme["type"], scheme["scheme"], scheme["bearerFormat"]) == ("http", "bearer", "JWT")
    for method, path in ENDPOINTS:
        operation = schema["paths"][path][method]
        assert operation["security"] == [{"AdminAPIJWT": []}]
        assert {"name": "host", "in": "header"}.items() <= next(
            p for p in operation["parameters"] if p["name"] == "host"
        ).items()


@pytest.mark.parametrize(("method", "path"), list(ENDPOINTS))
async def test_a_400_is_documented_in_our_envelope_not_litestars(schema, method, path):
    envelope = ENDPOINTS[(method, path)][2]
    answer = schema["paths"][path][method]["responses"]["400"]["content"]["application/json"]["schema"]

    assert answer["$ref"].endswith(envelope)


async def test_the_schema_has_a_real_title_and_version(schema):
    from importlib.metadata import version

    assert schema["info"]["title"] != "Litestar API"
    assert schema["info"]["version"] == version("litestar-userio")


REQUEST_TYPES = {
    ("post", "/_api/admin/users/import"): (ImportRequest, IMPORT_EXAMPLES),
    ("post", "/_api/admin/users/export"): (ExportRequest, EXPORT_EXAMPLES),
    ("put", "/_api/admin/hooks"): (HookList, {}),
    ("post", "/_api/admin/hooks/test"): (HookTestRequest, {}),
    ("put", "/_api/admin/hooks/secrets/{name}"): (HookSecretValue, {}),
}


@pytest.mark.parametrize(("method", "path"), list(REQUEST_TYPES))
async def test_request_bodies_are_documented_from_the_handlers_data_types(schema, method, path):
    struct, examples = REQUEST_TYPES[(method, path)]
    fields = msgspec.structs.fields(struct)
    body = schema["paths"][path][method]["requestBody"]["content"]["application/json"]

    assert body["schema"]["title"] == struct.__name__
    assert set(body["schema"]["properties"]) == {f.name for f in fields}
    assert body["schema"].get("required", []) == [f.name for f in fields if f.required]
    assert body["schema"]["additionalProperties"] is False
    assert body.get("examples", {}) == {name: {"value": value} for name, value in examples.items()}
