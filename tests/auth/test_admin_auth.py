"""Admin API authentication (SPEC 5, DECISIONS 2): every failure is 403 with the endpoint's envelope."""

from __future__ import annotations

import base64
import json

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from tests.conftest import admin_key
from tests.helpers import IMPORT

BODY = {"identifier": "email", "records": [{"email": "a@example.com"}]}


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _claims(project, **changes):
    now = int(project.env.clock.now().timestamp())
    claims = {"aud": project.id, "iat": now, "exp": now + 300}
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def _sign(project, claims, **header):
    return jwt.encode(claims, project.key.private_pem, algorithm="RS256", headers={"kid": project.key.kid, **header})


async def _post(project, token):
    return await project.post(IMPORT, BODY, headers={"Authorization": f"Bearer {token}"})


async def test_valid_token_is_accepted(project):
    response = await _post(project, _sign(project, _claims(project)))

    assert response.status_code == 202


async def test_aud_may_be_a_list_containing_the_project(project):
    response = await _post(project, _sign(project, _claims(project, aud=["other", project.id])))

    assert response.status_code == 202


@pytest.mark.parametrize(
    ("make_token", "message"),
    [
        (lambda p: _sign(p, _claims(p), kid="unknown-kid"), "unknown kid"),
        (lambda p: _sign(p, _claims(p, aud="another-project")), "aud does not name this project"),
        (lambda p: _sign(p, _claims(p, aud=None)), "missing aud"),
        (lambda p: _sign(p, _claims(p, exp=int(p.env.clock.now().timestamp()) - 301)), "expired"),
        (lambda p: _sign(p, _claims(p, exp=None)), "missing exp"),
        (lambda p: _sign(p, _claims(p, nbf=int(p.env.clock.now().timestamp()) + 301)), "not yet valid"),
        (lambda p: _sign(p, _claims(p, iat=int(p.env.clock.now().timestamp()) + 301)), "issued in the future"),
        (lambda p: _sign(p, _claims(p, exp="tomorrow")), "must be numbers"),
        (lambda p: f"{_b64({'alg': 'none', 'kid': p.key.kid})}.{_b64(_claims(p))}.", "alg must be RS256"),
        (lambda p: "garbage", "malformed token"),
        (lambda p: _sign(p, _claims(p))[:-4] + "AAAA", "bad signature"),
    ],
    ids=[
        "wrong-kid",
        "wrong-aud",
        "no-aud",
        "expired",
        "no-exp",
        "future-nbf",
        "future-iat",
        "exp-string",
        "alg-none",
        "garbage",
        "bad-signature",
    ],
)
async def test_bad_tokens_are_403(project, make_token, message):
    response = await _post(project, make_token(project))

    assert response.status_code == 403
    assert set(response.json()) == {"error"}
    assert message in response.json()["error"]


async def test_hs256_signed_with_the_public_key_is_refused(project):
    """The classic algorithm confusion: an HMAC token keyed with the (public) RSA key."""
    public_der = serialization.load_pem_public_key(project.key.public_pem.encode()).public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = _b64({"alg": "HS256", "kid": project.key.kid, "typ": "JWT"})
    payload = _b64(_claims(project))
    import hashlib
    import hmac

    signature = (
        base64.urlsafe_b64encode(hmac.new(public_der, f"{header}.{payload}".encode(), hashlib.sha256).digest())
        .rstrip(b"=")
        .decode()
    )

    response = await _post(project, f"{header}.{payload}.{signature}")

    assert response.status_code == 403
    assert "alg must be RS256" in response.json()["error"]


async def test_leeway_of_five_minutes_is_tolerated(project):
    now = int(project.env.clock.now().timestamp())

    response = await _post(project, _sign(project, _claims(project, exp=now - 299, nbf=now + 299)))

    assert response.status_code == 202


async def test_a_rotated_second_key_also_works(env, project):
    from userio_core.admin_keys import generate_key_pair, sign_admin_token

    second = generate_key_pair()
    await env.services.projects.add_admin_key(project.id, second.kid, second.public_pem)

    response = await _post(project, sign_admin_token(second.private_pem, project.id, clock=env.clock))

    assert response.status_code == 202


async def test_missing_authorization_is_403(project):
    response = await project.env.client.post(IMPORT, json=BODY, headers={"Host": project.host})

    assert response.status_code == 403
    assert response.json() == {"error": "missing Authorization: Bearer <Admin API JWT>"}


async def test_project_a_token_on_project_b_host_is_403(env, project):
    other = await env.make_project()

    response = await env.client.post(
        IMPORT, json=BODY, headers={"Authorization": f"Bearer {project.token()}", "Host": other.host}
    )

    assert response.status_code == 403


async def test_unknown_host_is_403(project):
    response = await project.post(IMPORT, BODY, headers={"Host": "nobody.example.test"})

    assert response.status_code == 403
    assert response.json() == {"error": "the Host header does not name a project"}


async def test_host_port_is_ignored(project):
    response = await project.post(IMPORT, BODY, headers={"Host": f"{project.host.upper()}:8443"})

    assert response.status_code == 202


async def test_plain_http_is_refused(env, project):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=env.app), base_url="http://testserver") as client:
        response = await client.post(IMPORT, json=BODY, headers=project.headers())

    assert response.status_code == 403
    assert response.json() == {"error": "HTTPS is required"}


async def test_status_endpoint_requires_auth_too(project):
    response = await project.env.client.get(f"{IMPORT}/task_X", headers={"Host": project.host})

    assert response.status_code == 403


def test_admin_key_fixture_is_rsa():
    assert "BEGIN PUBLIC KEY" in admin_key().public_pem


def _raw_token(project, payload_json: str) -> str:
    """A correctly signed token whose payload is exactly `payload_json` (JSON's NaN/Infinity included)."""
    header = _b64({"alg": "RS256", "kid": project.key.kid, "typ": "JWT"})
    payload = base64.urlsafe_b64encode(payload_json.encode()).rstrip(b"=").decode()
    key = serialization.load_pem_private_key(project.key.private_pem.encode(), password=None)
    signature = jwt.algorithms.RSAAlgorithm(jwt.algorithms.RSAAlgorithm.SHA256).sign(
        f"{header}.{payload}".encode(),
        key,  # type: ignore[arg-type]
    )
    return f"{header}.{payload}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


NON_FINITE_TIMES = {
    "exp-nan": '"exp": NaN',
    "exp-infinity": '"exp": Infinity',
    "exp-huge": '"exp": 1e999',
    "exp-bigint": '"exp": 1' + "0" * 400,
    "exp-string": '"exp": "9999999999"',
    "exp-true": '"exp": true',
    "nbf-nan": '"exp": {exp}, "nbf": NaN',
    "nbf-minus-infinity": '"exp": {exp}, "nbf": -Infinity',
    "nbf-null": '"exp": {exp}, "nbf": null',
    "iat-nan": '"exp": {exp}, "iat": NaN',
    "iat-string": '"exp": {exp}, "iat": "now"',
    "iat-false": '"exp": {exp}, "iat": false',
}


@pytest.mark.parametrize("claims", list(NON_FINITE_TIMES.values()), ids=list(NON_FINITE_TIMES))
async def test_time_claims_that_are_not_finite_numbers_are_403_on_import_and_export(project, claims):
    exp = int(project.env.clock.now().timestamp()) + 300
    token = _raw_token(project, f'{{"aud": "{project.id}", {claims.format(exp=exp)}}}')
    auth = {"Authorization": f"Bearer {token}"}

    imported = await project.post(IMPORT, BODY, headers=auth)
    import_status = await project.get(f"{IMPORT}/task_X", headers=auth)
    exported = await project.post("/_api/admin/users/export", {"format": "ndjson"}, headers=auth)
    export_status = await project.get("/_api/admin/users/export/userexport_X", headers=auth)

    for response in (imported, import_status):
        assert response.status_code == 403
        assert response.json()["error"].startswith("invalid Admin API JWT: ")
    for response in (exported, export_status):
        assert response.status_code == 403
        assert response.json()["error"]["name"] == "Forbidden"
        assert response.json()["error"]["code"] == 403


async def test_the_raw_token_helper_signs_a_token_the_server_accepts(project):
    """The control for the non-finite cases: the same construction with ordinary numbers passes."""
    exp = int(project.env.clock.now().timestamp()) + 300
    token = _raw_token(project, f'{{"aud": "{project.id}", "exp": {exp}, "nbf": {exp - 600}, "iat": {exp - 300}.5}}')

    response = await _post(project, token)

    assert response.status_code == 202


REFUSED_BODIES = {
    "not JSON": (b"{", "application/json"),
    "not JSON content": (b'{"format": "csv"}', "text/plain"),
    "empty": (b"", "application/json"),
    "over every body limit": (b'{"a": "' + b"x" * 2_100_000 + b'"}', "application/json"),
}
BODY_ENDPOINTS = [
    ("POST", IMPORT),
    ("POST", "/_api/admin/users/export"),
    ("PUT", "/_api/admin/hooks"),
    ("POST", "/_api/admin/hooks/test"),
    ("PUT", "/_api/admin/hooks/secrets/CRM_KEY"),
]


@pytest.mark.parametrize(("method", "path"), BODY_ENDPOINTS)
@pytest.mark.parametrize("case", list(REFUSED_BODIES))
async def test_without_a_token_the_body_is_never_judged(project, method, path, case):
    """403 whatever the body: authentication comes before the body is read (and before its 400, 413 or 415)."""
    body, content_type = REFUSED_BODIES[case]

    response = await project.env.client.request(
        method, path, content=body, headers={"Host": project.host, "Content-Type": content_type}
    )

    assert response.status_code == 403
    error = response.json()["error"]
    message = error if path == IMPORT else error["message"]
    assert message == "missing Authorization: Bearer <Admin API JWT>"
