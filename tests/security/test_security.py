"""Security properties, one explicit test each (issue 6; SECURITY.md lists what each control stops)."""

from __future__ import annotations

import base64
import json
import logging

import httpx
import jwt
import pytest

from tests.exports.helpers import EXPORT, download, export_and_wait
from tests.helpers import HASH_2B, IMPORT, PASSWORD, import_one, run_import

HOOKS = "/_api/admin/hooks"
TOTP = "JBSWY3DPEHPK3PXPJBSWY3DP"


def b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


# Tenant isolation.


@pytest.mark.parametrize(("method", "path"), [("post", IMPORT), ("post", EXPORT), ("get", HOOKS)])
async def test_a_projects_admin_token_does_not_open_another_project(env, method, path):
    a, b = await env.make_project(), await env.make_project()

    response = await env.client.request(
        method,
        path,
        json={"identifier": "email", "records": [{}]} if method == "post" else None,
        headers={"Authorization": f"Bearer {a.token()}", "Host": b.host},
    )

    assert response.status_code == 403


async def test_task_ids_of_one_project_are_unknown_to_another(env):
    a, b = await env.make_project(), await env.make_project()
    imported = await run_import(a, [{"email": "x@example.com"}])
    exported = await export_and_wait(a, {"format": "ndjson"})

    assert (await b.get(f"{IMPORT}/{imported['id']}")).status_code == 404
    assert (await b.get(f"{EXPORT}/{exported['id']}")).status_code == 404


async def test_a_projects_export_holds_only_its_users(env):
    a, b = await env.make_project(), await env.make_project()
    await run_import(a, [{"email": "a@example.com"}])
    await run_import(b, [{"email": "b@example.com"}])

    result = await export_and_wait(a, {"format": "ndjson"})
    content = (await download(a, result["download_url"])).content

    assert b"a@example.com" in content
    assert b"b@example.com" not in content


async def test_hooks_of_one_project_never_see_another_projects_users(env):
    a, b = await env.make_project(), await env.make_project()
    detail = await import_one(b, {"email": "b@example.com"})
    await env.services.tokens.applications.create(a.id, "app", issue_jwt_access_token=True)

    response = await a.post(
        f"{HOOKS}/test", {"event": "oidc.jwt.pre_create", "user_id": detail["user_id"], "client_id": "app"}
    )

    assert response.status_code == 404
    assert "b@example.com" not in response.text


async def test_a_hook_cannot_pass_state_to_another_projects_hook(env):
    """Intrinsics and globals are frozen; a hook's own top-level state is evaluated afresh on every run."""
    a, b = await env.make_project(), await env.make_project()
    user_a = await import_one(a, {"email": "secret-a@example.com"})
    user_b = await import_one(b, {"email": "b@example.com"})
    for project in (a, b):
        await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=True)
    stash = (
        "let seen: string[] = [];\n"
        "export default function (e: any) {\n"
        "  seen.push(e.payload.user.standard_attributes.email);\n"
        "  try { (globalThis as any).leak = e.payload.user.standard_attributes.email; } catch (x) {}\n"
        "  try { (Object.prototype as any).leak = e.payload.user.standard_attributes.email; } catch (x) {}\n"
        "  try { (JSON as any).leak = e.payload.user.standard_attributes.email; } catch (x) {}\n"
        "  return { is_allowed: true };\n"
        "}\n"
    )
    snoop = (
        "let seen: string[] = [];\n"
        "export default function (e: any) {\n"
        "  const found = [(globalThis as any).leak, ({} as any).leak, (JSON as any).leak, seen.length];\n"
        "  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, found } } } };\n"
        "}\n"
    )
    await a.env.client.put(
        HOOKS, json={"hooks": [{"event": "oidc.jwt.pre_create", "source": stash}]}, headers=a.headers()
    )
    for _ in range(3):
        await env.services.tokens.issue_access_token(a.id, "app", user_a["user_id"], issuer="https://a")
    await b.env.client.put(
        HOOKS, json={"hooks": [{"event": "oidc.jwt.pre_create", "source": snoop}]}, headers=b.headers()
    )

    token = await env.services.tokens.issue_access_token(b.id, "app", user_b["user_id"], issuer="https://b")

    claims = jwt.decode(token.token, options={"verify_signature": False})
    assert claims["found"] == [None, None, None, 0]


# Admin JWT: every broken token is 403 on every admin endpoint.


def broken_tokens(project) -> dict[str, str]:
    now = int(project.env.clock.now().timestamp())
    good = {"aud": project.id, "iat": now, "exp": now + 300}

    def sign(claims, **header):
        return jwt.encode(
            claims, project.key.private_pem, algorithm="RS256", headers={"kid": project.key.kid, **header}
        )

    import hashlib
    import hmac

    header, payload = b64({"alg": "HS256", "kid": project.key.kid}), b64(good)
    hs256 = (
        base64.urlsafe_b64encode(
            hmac.new(project.key.public_pem.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
        )
        .rstrip(b"=")
        .decode()
    )
    return {
        "alg none": f"{b64({'alg': 'none', 'kid': project.key.kid})}.{b64(good)}.",
        "HS256 with the public key": f"{header}.{payload}.{hs256}",
        "unknown kid": sign(good, kid="nope"),
        "wrong aud": sign({**good, "aud": "other"}),
        "expired": sign({**good, "exp": now - 3600}),
        "future nbf": sign({**good, "nbf": now + 3600}),
        "missing exp": sign({k: v for k, v in good.items() if k != "exp"}),
        "garbage": "not.a.jwt",
    }


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", IMPORT),
        ("get", f"{IMPORT}/task_X"),
        ("post", EXPORT),
        ("get", f"{EXPORT}/userexport_X"),
        ("get", HOOKS),
        ("put", HOOKS),
        ("post", f"{HOOKS}/test"),
    ],
)
async def test_every_broken_admin_token_is_403_everywhere(project, method, path):
    for name, token in broken_tokens(project).items():
        response = await project.env.client.request(
            method, path, json={}, headers={"Authorization": f"Bearer {token}", "Host": project.host}
        )
        assert response.status_code == 403, (name, response.text)


# Download URLs.


async def test_download_urls_refuse_traversal_and_tampering(env, project):
    url = httpx.URL((await export_and_wait(project, {"format": "ndjson"}))["download_url"])
    query = dict(url.params)
    attempts = [
        url.copy_with(path="/_userio/downloads/../../../etc/passwd"),
        url.copy_with(path="/_userio/downloads/%2e%2e/%2e%2e/etc/passwd"),
        url.copy_with(path=url.path + "x"),
        url.copy_with(params={**query, "signature": "A" * len(query["signature"])}),
        url.copy_with(params={**query, "expires": str(int(query["expires"]) + 1)}),
        url.copy_with(params={"expires": query["expires"]}),
        url.copy_with(query=b""),
    ]
    for attempt in attempts:
        response = await env.client.get(str(attempt))
        assert response.status_code in (403, 404), (str(attempt), response.status_code)
        assert b"root:" not in response.content


# Hooks may not touch the server's claims.


@pytest.mark.parametrize("claim", ["sub", "exp", "iss", "aud", "client_id", "jti"])
async def test_a_hook_changing_a_server_claim_stops_issuance(env, project, claim):
    detail = await import_one(project, {"email": "a@example.com"})
    await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=True)
    source = f"export default (e: any) => ({{ is_allowed: true, mutations: {{ jwt: {{ payload: {{ ...e.payload.jwt.payload, {claim}: 'x' }} }} }} }});"
    await project.env.client.put(
        HOOKS, json={"hooks": [{"event": "oidc.jwt.pre_create", "source": source}]}, headers=project.headers()
    )

    from litestar_userio.errors import InvalidJWTMutations

    with pytest.raises(InvalidJWTMutations) as refused:
        await env.services.tokens.issue_access_token(project.id, "app", detail["user_id"], issuer="https://a")
    assert refused.value.info == {"removed": [], "changed": [claim]}


# Secrets never leak into logs, errors, the import report or the export file.


async def test_no_secret_appears_in_logs_errors_reports_or_exports(env, project, caplog):
    caplog.set_level(logging.DEBUG)
    token = project.token()
    await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=True)
    records = [
        {
            "email": "a@example.com",
            "password": {"type": "bcrypt", "password_hash": HASH_2B},
            "mfa": {"totp": {"secret": TOTP}, "password": {"type": "bcrypt", "password_hash": HASH_2B}},
        },
        {"email": "bad", "password": {"type": "bcrypt", "password_hash": HASH_2B}, "mfa": {"totp": {"secret": TOTP}}},
        {"email": "b@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B[:-3] + "!!!"}},
        {"email": "c@example.com", "mfa": {"totp": {"secret": TOTP.lower()}}},
    ]
    report = await run_import(project, records)
    again = await run_import(project, records, upsert=True)
    user_id = report["details"][0]["user_id"]
    assert await env.services.users.verify_password(project.id, "a@example.com", PASSWORD) == user_id
    await env.services.users.verify_password(project.id, "a@example.com", "wrong")
    errors = [
        await project.post(IMPORT, {"identifier": "email", "records": records, "bogus": HASH_2B}),
        await project.post(EXPORT, {"format": "csv", "csv": {"fields": [{"pointer": "/password"}]}}),
        await project.env.client.get(
            f"{IMPORT}/task_X", headers={"Authorization": f"Bearer {token}x", "Host": project.host}
        ),
    ]
    csv = await download(project, (await export_and_wait(project, {"format": "csv"}))["download_url"])
    project.env.clock.advance(__import__("datetime").timedelta(days=1))
    ndjson = await download(project, (await export_and_wait(project, {"format": "ndjson"}))["download_url"])
    await env.services.tokens.issue_access_token(project.id, "app", user_id, issuer="https://a")

    reports = json.dumps([report, again])
    assert HASH_2B not in reports
    assert TOTP not in reports
    assert TOTP.lower() not in reports
    for response in errors:
        assert HASH_2B not in response.text
        assert token not in response.text
    for file in (csv.text, ndjson.text):
        assert "$2b$" not in file
    # SPEC 2.6 exports TOTP secrets on purpose, under /mfa/totps and nowhere else.
    for line in ndjson.text.splitlines():
        document = json.loads(line)
        totps = document.pop("mfa")["totps"]
        assert TOTP not in json.dumps(document)
        assert all(t["secret"] == TOTP for t in totps)
    logged = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert HASH_2B not in logged
    assert HASH_2B[:-3] not in logged
    assert TOTP not in logged
    assert token not in logged
