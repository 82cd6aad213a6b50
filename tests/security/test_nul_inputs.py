"""U+0000 (NUL) anywhere a client can put it is a 400 naming where, never a 500 (issue 46, DECISIONS 10).

PostgreSQL refuses NUL in text and JSONB; SQLite stores it. One rule (`userio_core.attribute_formats.storable_text`, the import's
screening) refuses it on both deployments alike: at the token endpoint (RFC 6749 `invalid_request`), in the admin
API's query and path parameters and bodies, and in `db/engine.py` for a value that came another way.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest

from example_app.oauth import token
from litestar_userio import errors
from tests.helpers import HASH_2B, PASSWORD, import_one

pytestmark = pytest.mark.engine

USERS = "/_api/admin/users"


@pytest.fixture
async def project(backend, make_env):
    env = await make_env(backend, route_handlers=[token])
    project = await env.make_project()
    await import_one(project, {"email": "ada@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}})
    await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=False)
    return project


def _errors_logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def _token(project, **form: str):
    return await project.env.client.post("/oauth2/token", data=form, headers={"Host": project.host})


@pytest.mark.parametrize("member", ["username", "client_id"])
async def test_nul_at_the_token_endpoint_is_invalid_request_without_a_trace(project, member, caplog):
    form = {"grant_type": "password", "username": "ada@example.com", "password": PASSWORD, "client_id": "app"}
    form[member] = form[member][:3] + "\x00" + form[member][3:]
    caplog.set_level(logging.INFO)

    response = await _token(project, **form)

    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_request"
    assert member in response.json()["error_description"]
    assert _errors_logged(caplog) == []
    good = await _token(project, grant_type="password", username="ada@example.com", password=PASSWORD, client_id="app")
    assert good.status_code == 200, good.text


async def test_nul_in_the_client_id_of_a_refresh_is_invalid_request(project, caplog):
    caplog.set_level(logging.INFO)
    response = await _token(project, grant_type="refresh_token", refresh_token="x", client_id="a\x00p")
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_request"
    assert _errors_logged(caplog) == []


def _causes(response) -> list[str]:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["name"], error["reason"], error["code"]) == ("Invalid", "ValidationFailed", 400)
    assert "U+0000" in error["message"]
    return [cause["location"] for cause in error["info"]["causes"]]


@pytest.mark.parametrize("parameter", ["login_id", "q", "role", "group"])
async def test_nul_in_a_query_parameter_is_refused_naming_it(project, parameter, caplog):
    caplog.set_level(logging.INFO)
    response = await project.env.client.get(USERS, params={parameter: "ad\x00a"}, headers=project.headers())
    assert _causes(response) == [f"query/{parameter}"]
    assert _errors_logged(caplog) == []


@pytest.mark.parametrize(
    "path",
    [f"{USERS}/us%00er", f"{USERS}/us%00er/enable", "/_api/admin/users/export/task_%00"],
)
async def test_nul_in_a_path_id_is_refused_naming_it(project, path):
    response = await project.env.client.request(
        "POST" if path.endswith("enable") else "GET", path, headers=project.headers()
    )
    locations = _causes(response)
    assert len(locations) == 1 and locations[0].startswith("path/")


async def test_nul_in_an_import_task_id_is_refused_in_the_imports_envelope(project):
    response = await project.env.client.get(f"{USERS}/import/task_%00", headers=project.headers())
    assert response.status_code == 400, response.text
    assert response.json() == {"error": "U+0000 (NUL) is not allowed in text: remove it from path/task_id"}


async def test_a_cursor_that_decodes_to_nul_is_an_invalid_cursor(project):
    cursor = base64.urlsafe_b64encode(b"\x00user").decode().rstrip("=")
    response = await project.env.client.get(USERS, params={"cursor": cursor}, headers=project.headers())
    assert response.status_code == 400, response.text
    assert response.json()["error"]["message"] == "invalid cursor: pass back a next_cursor this API gave"


@pytest.mark.parametrize(
    ("body", "location"),
    [
        ({"email": "bob@example.com", "name": "B\x00b"}, "/name"),
        ({"email": "bob@example.com", "custom_attributes": {"tier": "go\x00ld"}}, "/custom_attributes/tier"),
        ({"email": "bob@example.com", "custom_attributes": {"ti\x00er": "gold"}}, "/custom_attributes/ti\x00er"),
    ],
)
async def test_nul_in_a_user_body_is_refused_naming_where(project, body: dict[str, Any], location, caplog):
    body = dict(body)
    caplog.set_level(logging.INFO)
    created = await project.env.client.post(USERS, json=body, headers=project.headers())
    assert _causes(created) == [location]
    sub = await project.env.client.get(USERS, params={"login_id": "ada@example.com"}, headers=project.headers())
    user_id = sub.json()["result"]["items"][0]["sub"]
    body.pop("email")
    patched = await project.env.client.patch(f"{USERS}/{user_id}", json=body, headers=project.headers())
    assert _causes(patched) == [location]
    assert _errors_logged(caplog) == []


async def test_nul_in_a_disable_reason_is_refused_naming_it(project):
    found = await project.env.client.get(USERS, params={"login_id": "ada@example.com"}, headers=project.headers())
    user_id = found.json()["result"]["items"][0]["sub"]
    response = await project.env.client.post(
        f"{USERS}/{user_id}/disable", json={"reason": "spam\x00"}, headers=project.headers()
    )
    assert _causes(response) == ["/reason"]
    assert (await project.env.client.get(f"{USERS}/{user_id}", headers=project.headers())).json()["result"][
        "disabled"
    ] is False


async def test_a_hosts_own_call_with_nul_is_a_validation_error_not_a_driver_error(project, backend):
    """A host's Python call reaches the database: PostgreSQL's refusal becomes `UnstorableText` there."""
    admin = project.env.services.user_admin
    if backend.name.startswith("postgres"):
        with pytest.raises(errors.UnstorableText):
            await admin.find_by_login_id(project.id, "ada\x00@example.com")
    else:
        assert await admin.find_by_login_id(project.id, "ada\x00@example.com") is None
