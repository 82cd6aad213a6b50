"""Stored login ids and per-project case sensitivity, as the reference behaves.

Facts from the reference's e2e cases (`e2e/tests/issue_DEV_1458_import_uppercase`): with the default
`case_sensitive: false`, `lowerUPPER@ca.se` (and username `lowerUPPER`) are stored as `lowerupper@ca.se`
(`lowerupper`) in the standard attributes; with `case_sensitive: true` they are stored as submitted.
Attribute and identity agree in the export, in token claims and in hook payloads; import matching and
sign-in compare the same way.
"""

from __future__ import annotations

import json

import jwt
import pytest

from example_app.oauth import token
from litestar_userio.projects.settings import ProjectSettings
from tests.exports.helpers import exported_bytes
from tests.helpers import HASH_2B, PASSWORD, import_one, user_row

pytestmark = pytest.mark.engine

REFERENCE_HASH = "$2y$10$/wLavnCmYGP/zzpw/mR1iOK5y5hGyrEFJtmaIbvFf9VA6l2O4NMKO"
"""The hash in the reference's e2e user.json."""

ADD_STANDARD_ATTRIBUTES = """
export default async function (e: any): Promise<any> {
  return { is_allowed: true, mutations: { jwt: { payload: {
    ...e.payload.jwt.payload,
    standard_attributes: e.payload.user.standard_attributes,
    identity_claims: e.payload.identities.map((i: any) => i.claims),
  } } } };
}
"""

CASE_SENSITIVE = ProjectSettings(email_case_sensitive=True, username_case_sensitive=True)


@pytest.fixture
async def signin_env(backend, make_env):
    return await make_env(backend, route_handlers=[token])


async def sign_in(project, username, password=PASSWORD):
    return await project.env.client.post(
        "/oauth2/token",
        data={"grant_type": "password", "username": username, "password": password, "client_id": "jwt-app"},
        headers={"Host": project.host},
    )


@pytest.mark.parametrize(
    ("identifier", "value", "attribute", "stored"),
    [
        ("email", "lowerUPPER@ca.se", "email", "lowerupper@ca.se"),
        ("preferred_username", "lowerUPPER", "preferred_username", "lowerupper"),
        ("phone_number", "+85298765432", "phone_number", "+85298765432"),
    ],
)
async def test_default_stores_the_normalized_login_id_as_the_standard_attribute(
    project, identifier, value, attribute, stored
):
    password = {"type": "bcrypt", "password_hash": REFERENCE_HASH}
    detail = await import_one(project, {identifier: value, "password": password}, identifier=identifier)

    assert detail["outcome"] == "inserted", detail
    assert (await user_row(project, detail["user_id"]))["standard"][attribute] == stored


@pytest.mark.parametrize(
    ("identifier", "value", "attribute"),
    [("email", "lowerUPPER@ca.se", "email"), ("preferred_username", "lowerUPPER", "preferred_username")],
)
async def test_case_sensitive_project_stores_the_login_id_as_submitted(env, identifier, value, attribute):
    project = await env.make_project(CASE_SENSITIVE)
    password = {"type": "bcrypt", "password_hash": REFERENCE_HASH}

    detail = await import_one(project, {identifier: value, "password": password}, identifier=identifier)

    assert (await user_row(project, detail["user_id"]))["standard"][attribute] == value


async def test_case_sensitive_email_still_folds_the_domain(env):
    project = await env.make_project(CASE_SENSITIVE)

    detail = await import_one(project, {"email": "Ada@EXAMPLE.com"})

    assert (await user_row(project, detail["user_id"]))["standard"]["email"] == "Ada@example.com"


async def test_export_attribute_and_identity_agree(project):
    await import_one(project, {"email": "lowerUPPER@ca.se", "preferred_username": "AdaL"})

    (line,) = (await exported_bytes(project, {"format": "ndjson"})).decode().splitlines()

    document = json.loads(line)
    assert document["email"] == "lowerupper@ca.se"
    assert document["preferred_username"] == "adal"
    by_key = {i["login_id"]["key"]: i for i in document["identities"]}
    assert by_key["email"]["login_id"]["value"] == document["email"] == by_key["email"]["claims"]["email"]
    assert by_key["email"]["login_id"]["original_value"] == "lowerUPPER@ca.se"
    assert by_key["username"]["login_id"]["value"] == document["preferred_username"]


async def test_token_claims_and_hook_payload_carry_the_normalized_login_id(signin_env):
    project = await signin_env.make_project()
    await import_one(project, {"email": "Ada@Example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}})
    await signin_env.services.tokens.applications.create(project.id, "jwt-app", issue_jwt_access_token=True)
    response = await project.env.client.put(
        "/_api/admin/hooks",
        json={"hooks": [{"event": "oidc.jwt.pre_create", "source": ADD_STANDARD_ATTRIBUTES}]},
        headers=project.headers(),
    )
    assert response.status_code == 200, response.text

    answer = await sign_in(project, "ADA@example.COM")

    assert answer.status_code == 200, answer.text
    claims = jwt.decode(answer.json()["access_token"], options={"verify_signature": False})
    assert claims["standard_attributes"]["email"] == "ada@example.com"
    assert claims["identity_claims"] == [{"email": "ada@example.com"}]


async def test_default_import_matches_login_ids_whatever_their_case(project):
    first = await import_one(project, {"email": "lowerUPPER@ca.se"})

    again = await import_one(project, {"email": "LOWERupper@CA.se"})

    assert (again["outcome"], again["user_id"]) == ("skipped", first["user_id"])


async def test_case_sensitive_import_treats_another_case_as_another_user(env):
    project = await env.make_project(CASE_SENSITIVE)
    first = await import_one(project, {"email": "lowerUPPER@ca.se"})

    again = await import_one(project, {"email": "LOWERupper@ca.se"})
    same = await import_one(project, {"email": "lowerUPPER@CA.SE"})

    assert again["outcome"] == "inserted"
    assert again["user_id"] != first["user_id"]
    assert (same["outcome"], same["user_id"]) == ("skipped", first["user_id"])


async def test_default_sign_in_ignores_the_case_of_the_login_id(signin_env):
    project = await signin_env.make_project()
    await signin_env.services.tokens.applications.create(project.id, "jwt-app", issue_jwt_access_token=True)
    await import_one(project, {"email": "ada@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}})

    assert (await sign_in(project, "ADA@Example.com")).status_code == 200


async def test_case_sensitive_sign_in_needs_the_exact_case(signin_env):
    project = await signin_env.make_project(CASE_SENSITIVE)
    await signin_env.services.tokens.applications.create(project.id, "jwt-app", issue_jwt_access_token=True)
    password = {"type": "bcrypt", "password_hash": HASH_2B}
    await import_one(project, {"preferred_username": "AdaL", "password": password}, identifier="preferred_username")

    assert (await sign_in(project, "AdaL")).status_code == 200
    wrong_case = await sign_in(project, "adal")
    assert wrong_case.status_code == 400
    assert wrong_case.json()["error"] == "invalid_grant"


async def test_case_sensitive_export_keeps_the_case(env):
    project = await env.make_project(CASE_SENSITIVE)
    await import_one(project, {"email": "lowerUPPER@ca.se"})

    (line,) = (await exported_bytes(project, {"format": "ndjson"})).decode().splitlines()

    document = json.loads(line)
    assert document["email"] == "lowerUPPER@ca.se"
    assert document["identities"][0]["login_id"]["value"] == "lowerUPPER@ca.se"
