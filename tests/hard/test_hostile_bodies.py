"""Hostile request bodies on the import, export and hook endpoints: a clear 4xx in the endpoint's envelope, never a 5xx.

Import answers `{"error": "<message>"}`; export and hooks `{"error": {name, reason, message, code, info?}}` with
`code` equal to the status (DECISIONS 3, 4). No answer carries a stack trace.

What the API answers, decided here:
- Not JSON (empty, truncated, a BOM before the JSON, invalid UTF-8 anywhere, a lone surrogate escape), JSON that is
  not an object (`null`, an array), a member of the wrong type (`"upsert": "true"`, a number for a string): 400.
- Nesting: 400 past what the parser takes (10 000 levels), and for the import past 64 levels wherever they are, since
  whatever a record stores is read back by the status answer, the export and the token hooks.
- Over the body limit: 413 (import 500 000 bytes, SPEC 8; export 64 KiB). A hook source over 100 KiB is a hook
  that does not compile: 400 `HookCompileFailed`.
- Content type other than `application/json` (parameters and case aside), or none: 415.
- Duplicate member names, anywhere: 400 naming the key and its JSON pointer (DECISIONS 10; RFC 8259 leaves them
  open and the reference keeps the last, but two parsers must never read one body two ways).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers import HASH_2B, IMPORT

EXPORT = "/_api/admin/users/export"
HOOKS = "/_api/admin/hooks"
HOOK_SOURCE = "export default async function (e) { return { is_allowed: true }; }"


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    valid: bytes
    wrap: Callable[[bytes], bytes]
    """A valid body with the given JSON value in one of its string members."""
    import_envelope: bool = False


ENDPOINTS = {
    "import": Endpoint(
        "POST",
        IMPORT,
        b'{"identifier":"email","records":[{"email":"a@example.com"}]}',
        lambda v: b'{"identifier":"email","records":[{"email":"a@example.com","name":' + v + b"}]}",
        import_envelope=True,
    ),
    "export": Endpoint(
        "POST",
        EXPORT,
        b'{"format":"ndjson"}',
        lambda v: b'{"format":"csv","csv":{"fields":[{"pointer":"/email","field_name":' + v + b"}]}}",
    ),
    "hooks": Endpoint(
        "PUT",
        HOOKS,
        json.dumps({"hooks": [{"event": "oidc.jwt.pre_create", "source": HOOK_SOURCE}]}).encode(),
        lambda v: b'{"hooks":[{"event":"oidc.jwt.pre_create","source":' + v + b"}]}",
    ),
    "hooks-test": Endpoint(
        "POST",
        f"{HOOKS}/test",
        b'{"event":"oidc.jwt.pre_create","user_id":"nobody","client_id":"none"}',
        lambda v: (
            b'{"event":"oidc.jwt.pre_create","user_id":"nobody","client_id":"none","hooks":'
            b'[{"event":"oidc.jwt.pre_create","source":' + v + b"}]}"
        ),
    ),
}

DEEP = b"[" * 10_000 + b"]" * 10_000


async def send(project, endpoint: Endpoint, body: bytes, content_type: str | None = "application/json"):
    headers = project.headers()
    if content_type is not None:
        headers["Content-Type"] = content_type
    return await project.env.client.request(endpoint.method, endpoint.path, content=body, headers=headers)


def assert_error(response, endpoint: Endpoint, status: int | tuple[int, ...]) -> Any:
    """The status is as expected and the body is the endpoint's error envelope, without a stack trace."""
    expected = status if isinstance(status, tuple) else (status,)
    assert response.status_code in expected, (response.status_code, response.text[:500])
    assert "Traceback" not in response.text and 'File "' not in response.text
    assert len(response.content) < 4096, "an error answer stays short"
    body = response.json()
    assert set(body) == {"error"}, body
    if endpoint.import_envelope:
        assert isinstance(body["error"], str) and body["error"], body
        return body["error"]
    error = body["error"]
    assert {"name", "reason", "message", "code"} <= set(error) <= {"name", "reason", "message", "code", "info"}
    assert error["code"] == response.status_code, error
    return error


# Top-level bodies, the same bytes to every endpoint: 400.
TOP_LEVEL = {
    "10 000 levels of [": DEEP,
    "10 000 unclosed [": b"[" * 10_000,
    "10 000 levels of {": b'{"a":' * 10_000 + b"1" + b"}" * 10_000,
    "empty": b"",
    "null": b"null",
    "an array": b"[]",
    "a string": b'"x"',
    "truncated": b'{"format":',
    "invalid UTF-8 in a key": b'{"\xff":1}',
    "not JSON": b"format=csv",
}


@pytest.mark.parametrize(
    ("case", "endpoint_name"),
    [
        pytest.param(
            case,
            name,
            id=f"{name}-{case}",
            marks=[],
        )
        for case in TOP_LEVEL
        for name in ENDPOINTS
    ],
)
async def test_malformed_body_is_a_400(project, endpoint_name, case):
    endpoint = ENDPOINTS[endpoint_name]

    response = await send(project, endpoint, TOP_LEVEL[case])

    assert_error(response, endpoint, 400)


@pytest.mark.parametrize("endpoint_name", list(ENDPOINTS))
async def test_an_empty_body_is_refused_as_json_that_is_not_there(project, endpoint_name):
    """Litestar reports an empty body as a missing argument; the answer is the endpoint's own, as for `{`."""
    endpoint = ENDPOINTS[endpoint_name]

    response = await send(project, endpoint, b"")

    error = assert_error(response, endpoint, 400)
    if endpoint.import_envelope:
        assert error == "request body is not valid JSON: Input data was truncated"
    else:
        assert (error["reason"], error["message"]) == ("ValidationFailed", "request body is not valid JSON")
        assert error["info"]["causes"][0]["details"] == {"error": "Input data was truncated"}


@pytest.mark.parametrize("endpoint_name", list(ENDPOINTS))
async def test_an_empty_body_of_another_content_type_is_a_415(project, endpoint_name):
    endpoint = ENDPOINTS[endpoint_name]

    response = await send(project, endpoint, b"", "text/plain")

    assert assert_error(response, endpoint, 415) in (
        "Content-Type must be application/json",
        {
            "name": "Invalid",
            "reason": "UnsupportedMediaType",
            "message": "Content-Type must be application/json",
            "code": 415,
        },
    )


@pytest.mark.parametrize("endpoint_name", list(ENDPOINTS))
async def test_a_bom_before_the_json_is_a_400(project, endpoint_name):
    """RFC 8259 8.1: a BOM must not be sent and may be refused; we refuse it rather than guess."""
    endpoint = ENDPOINTS[endpoint_name]

    response = await send(project, endpoint, b"\xef\xbb\xbf" + endpoint.valid)

    assert_error(response, endpoint, 400)


# A hostile value in a string member of an otherwise valid body.
VALUES: dict[str, tuple[bytes, dict[str, Any]]] = {
    "10 000 levels deep": (DEEP, {"import": 400, "export": 400, "hooks": 400, "hooks-test": 400}),
    "100 levels deep": (b"[" * 100 + b"]" * 100, {"import": 400, "export": 400, "hooks": 400, "hooks-test": 400}),
    "500 000 bytes of one string": (
        b'"' + b"x" * 500_000 + b'"',
        {"import": 413, "export": 413, "hooks": 400, "hooks-test": 400},
    ),
    "invalid UTF-8": (
        b'"caf\xc3"',
        {
            "import": 400,
            "export": 400,
            "hooks": 400,
            "hooks-test": 400,
        },
    ),
    "a lone surrogate escape": (b'"\\ud800"', {"import": 400, "export": 400, "hooks": 400, "hooks-test": 400}),
}


def _value_cases() -> list[Any]:
    cases = []
    for value_name, (value, expected) in VALUES.items():
        for endpoint_name, status in expected.items():
            if isinstance(status, int):
                cases.append(pytest.param(endpoint_name, value, status, id=f"{endpoint_name}-{value_name}"))
            else:
                cases.append(
                    pytest.param(
                        endpoint_name, value, status.values[0], id=f"{endpoint_name}-{value_name}", marks=status.marks
                    )
                )
    return cases


@pytest.mark.parametrize(("endpoint_name", "value", "status"), _value_cases())
async def test_hostile_value_in_a_member_is_refused(project, endpoint_name, value, status):
    endpoint = ENDPOINTS[endpoint_name]

    response = await send(project, endpoint, endpoint.wrap(value))

    error = assert_error(response, endpoint, status)
    if endpoint_name.startswith("hooks") and status == 400 and value.startswith(b'"x'):
        assert error["reason"] == "HookCompileFailed"


async def test_a_record_nested_just_under_the_parser_limit_is_refused_and_nothing_breaks(project):
    """About 935 levels passed the POST before, then broke the status answer (500) for good: now 64 is the limit."""
    nested = b"[" * 935 + b"]" * 935
    body = b'{"identifier":"email","records":[{"email":"a@example.com","custom_attributes":{"a":' + nested + b"}}]}"

    response = await send(project, ENDPOINTS["import"], body)

    assert "64 levels" in assert_error(response, ENDPOINTS["import"], 400)


async def test_a_record_nested_64_levels_is_imported(project):
    nested = b"[" * 60 + b"]" * 60  # request {, records [, record {, custom_attributes {: 4 + 60 = 64
    body = b'{"identifier":"email","records":[{"email":"a@example.com","custom_attributes":{"a":' + nested + b"}}]}"

    response = await send(project, ENDPOINTS["import"], body)

    assert response.status_code == 202, response.text
    await project.env.drain()
    status = (await project.get(response.headers["location"])).json()
    assert status["details"][0]["outcome"] == "inserted"


# Members of the wrong type.
WRONG_TYPES = {
    "import": [
        b'{"identifier":"email","records":[{}],"upsert":"true"}',
        b'{"identifier":"email","records":[{}],"upsert":1}',
        b'{"identifier":1,"records":[{}]}',
        b'{"identifier":"email","records":"[]"}',
        b'{"identifier":"email","records":[]}',
        b'{"identifier":"email","records":[1]}',
        b'{"identifier":"email","records":[null]}',
        b'{"identifier":"email","records":[{}],"extra":true}',
    ],
    "export": [
        b'{"format":1}',
        b'{"format":"xml"}',
        b'{"format":"csv","csv":{"fields":[{"pointer":1}]}}',
        b'{"format":"csv","csv":{"fields":[{"pointer":"/email","field_name":5}]}}',
        b'{"format":"csv","csv":{"fields":"/email"}}',
        b'{"format":"csv","csv":{"fields":[{}]}}',
        b'{"format":"csv","extra":true}',
    ],
    "hooks": [
        b'{"hooks":"[]"}',
        b'{"hooks":[{"event":"oidc.jwt.pre_create","source":5}]}',
        b'{"hooks":[{"event":"user.created","source":"x"}]}',
        b'{"hooks":[{"event":"oidc.jwt.pre_create"}]}',
    ],
    "hooks-test": [
        b'{"event":"oidc.jwt.pre_create","user_id":5,"client_id":"c"}',
        b'{"event":"oidc.jwt.pre_create","user_id":"u"}',
        b'{"event":"oidc.jwt.pre_create","user_id":"u","client_id":"c","hooks":{}}',
    ],
}


@pytest.mark.parametrize(
    ("endpoint_name", "body"),
    [pytest.param(name, body, id=f"{name}-{body.decode()}") for name, bodies in WRONG_TYPES.items() for body in bodies],
)
async def test_member_of_the_wrong_type_is_a_400(project, endpoint_name, body):
    endpoint = ENDPOINTS[endpoint_name]

    response = await send(project, endpoint, body)

    assert_error(response, endpoint, 400)


@pytest.mark.parametrize("endpoint_name", list(ENDPOINTS))
@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", None],
)
async def test_content_type_other_than_json_is_a_415(project, endpoint_name, content_type):
    endpoint = ENDPOINTS[endpoint_name]

    response = await send(project, endpoint, endpoint.valid, content_type)

    assert_error(response, endpoint, 415)


async def test_every_documented_body_route_refuses_another_content_type_in_its_envelope(project):
    """Each admin route whose OpenAPI documents a JSON body parses it strictly (its route names the parser): a JSON
    body sent as `text/plain` is a 415 in the endpoint's envelope, never decoded leniently (a 2xx or Litestar's 400)."""
    admin = project.env.config.path_prefix.rstrip("/")
    routes = [
        (method.upper(), re.sub(r"\{[^}]+\}", "nobody", path))
        for path, item in (project.env.app.openapi_schema.paths or {}).items()
        if path.startswith(admin)
        for method in ("post", "put", "patch")
        if (operation := getattr(item, method)) is not None and operation.request_body is not None
    ]
    assert len(routes) >= 10, routes  # imports, export, hooks (3), users (4 at each of 2 paths), webhooks

    answers = {}
    for method, path in routes:
        response = await project.env.client.request(
            method, path, content=b"{}", headers={**project.headers(), "Content-Type": "text/plain"}
        )
        error = response.json().get("error")
        answers[method, path] = (response.status_code, error if isinstance(error, str) else (error or {}).get("code"))

    import_path = f"{admin}/users/import"
    assert answers == {
        route: (415, "Content-Type must be application/json" if route == ("POST", import_path) else 415)
        for route in routes
    }


@pytest.mark.engine
@pytest.mark.parametrize("endpoint_name", list(ENDPOINTS))
@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "Application/JSON"])
async def test_json_content_type_with_parameters_or_other_case_is_accepted(project, endpoint_name, content_type):
    endpoint = ENDPOINTS[endpoint_name]

    response = await send(project, endpoint, endpoint.valid, content_type)

    assert response.status_code != 415 and response.status_code < 500, response.text
    await project.env.drain()


# Duplicate member names: 400 with the key and its location (DECISIONS 10).

DUPLICATES = {
    "import-top-level": (
        "import",
        b'{"identifier":"phone_number","upsert":true,"identifier":"email","records":[{"email":"a@example.com"}]}',
        "identifier",
        "/identifier",
    ),
    "import-record": (
        "import",
        b'{"identifier":"email","records":[{"email":"a@example.com"},{"email":"b@example.com","name":"A","name":"B"}]}',
        "name",
        "/records/1/name",
    ),
    "import-record-secret": (
        "import",
        b'{"identifier":"email","records":[{"email":"a@example.com","password":{"type":"bcrypt",'
        b'"password_hash":"$2b$04$' + b"z" * 53 + b'","password_hash":"' + HASH_2B.encode() + b'"}}]}',
        "password_hash",
        "/records/0/password/password_hash",
    ),
    "import-custom-attributes": (
        "import",
        b'{"identifier":"email","records":[{"email":"a@example.com","custom_attributes":'
        b'{"plan":{"tier":"gold","a/b~c":1,"a/b~c":2}}}]}',
        "a/b~c",
        "/records/0/custom_attributes/plan/a~1b~0c",
    ),
    "import-escaped-spelling": (
        "import",
        b'{"identifier":"email","records":[{"email":"a@example.com","\\u0065mail":"b@example.com"}]}',
        "email",
        "/records/0/email",
    ),
    "import-escaped-colon-in-a-string": (
        "import",
        b'{"identifier":"email","records":[{"email":"a@example.com","name":"x\\u003ay","name":"z"}]}',
        "name",
        "/records/0/name",
    ),
    "import-beside-a-number-out-of-range": (
        "import",
        b'{"identifier":"email","records":[{"email":"a@example.com","custom_attributes":{"n":1e999}},'
        b'{"email":"b@example.com","email":"c@example.com"}]}',
        "email",
        "/records/1/email",
    ),
    "export-top-level": ("export", b'{"format":"ndjson","format":"csv"}', "format", "/format"),
    "export-csv-field": (
        "export",
        b'{"format":"csv","csv":{"fields":[{"pointer":"/sub"},{"pointer":"/email","pointer":"/name"}]}}',
        "pointer",
        "/csv/fields/1/pointer",
    ),
    "hooks-list": (
        "hooks",
        b'{"hooks":[],"hooks":[' + json.dumps({"event": "oidc.jwt.pre_create", "source": HOOK_SOURCE}).encode() + b"]}",
        "hooks",
        "/hooks",
    ),
    "hooks-source": (
        "hooks",
        b'{"hooks":[{"event":"oidc.jwt.pre_create","source":"x","source":' + json.dumps(HOOK_SOURCE).encode() + b"}]}",
        "source",
        "/hooks/0/source",
    ),
}


@pytest.mark.parametrize(("endpoint_name", "body", "key", "location"), list(DUPLICATES.values()), ids=list(DUPLICATES))
async def test_a_duplicate_key_is_a_400_naming_the_key_and_its_location(project, endpoint_name, body, key, location):
    endpoint = ENDPOINTS[endpoint_name]

    response = await send(project, endpoint, body)

    error = assert_error(response, endpoint, 400)
    if endpoint.import_envelope:
        assert error == f"invalid request body: duplicate key {key!r} at {location}"
        assert "$2b$" not in response.text
    else:
        assert (error["name"], error["reason"]) == ("Invalid", "ValidationFailed")
        (cause,) = error["info"]["causes"]
        message = cause.pop("message")
        assert "appears more than once" in message
        assert f"give {key} once" in message
        assert cause == {"location": location, "kind": "duplicateKey", "details": {"key": key}}


async def test_a_refused_duplicate_leaves_nothing_behind(project):
    await send(project, ENDPOINTS["import"], DUPLICATES["import-record"][1])
    await send(project, ENDPOINTS["hooks"], DUPLICATES["hooks-source"][1])

    assert await project.fetch("SELECT id FROM userio_import_task WHERE project_id = $1", project.id) == []
    assert (await project.get(HOOKS)).json()["result"]["hooks"] == []


@pytest.mark.parametrize(
    "body",
    [
        b'{"identifier":"email","records":[{"email":"a@example.com","name":"x\\u003ay","nickname":"n"}]}',
        b'{"identifier":"email","records":[{"email":"a@example.com","custom_attributes":{"k:1":"v:2","k:2":1}}]}',
        b'{"identifier":"email","records":[{"email":"a@example.com","custom_attributes":'
        b'{"same":{"k":1},"other":{"k":2},"list":[{"k":1},{"k":1}]}}]}',
    ],
    ids=["escaped-colon", "colons-in-keys-and-strings", "equal-keys-in-different-objects"],
)
async def test_bodies_without_duplicates_are_accepted(project, body):
    response = await send(project, ENDPOINTS["import"], body)

    assert response.status_code == 202, response.text
    await project.env.drain()
