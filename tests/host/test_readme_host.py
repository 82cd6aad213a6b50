"""The README's host section is complete code: extracted from README.md and run as a host runs it (its own
process, real HTTP), it signs a user in and answers every refusal per RFC 6749, never with a 500."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import jwt
import pytest

from tests.helpers import HASH_2B, PASSWORD, run_import, stop_server

ROOT = Path(__file__).resolve().parents[2]
PAST = "2020-01-01T00:00:00Z"


def readme_host_code() -> str:
    """The first Python block of the README's "The host's side"."""
    section = (ROOT / "README.md").read_text().split("## The host's side", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the host section has a Python block"
    return match.group(1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
async def host(env, tmp_path):
    """The README's app in its own uvicorn process on the deployment's database; its base URL."""
    (tmp_path / "host_app.py").write_text(readme_host_code())
    port = free_port()
    process_env = {
        **os.environ,
        "USERIO_DATABASE_URL": env.config.database_url,
        "PYTHONPATH": str(ROOT),
        "PYTHONFAULTHANDLER": "1",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "host_app:app", "--port", str(port), "--log-level", "warning"],
        cwd=tmp_path,
        env=process_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient(base_url=base) as client:
        while True:
            try:
                await client.get("/.well-known/jwks.json")
                break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    server.kill()
                    pytest.fail(f"the README's app did not start:\n{server.communicate()[0]}")
                await __import__("asyncio").sleep(0.1)  # polling the port with a deadline, not waiting on a timer
    yield base
    output = stop_server(server)
    assert "Traceback" not in output, output


@pytest.fixture
async def project(env):
    project = await env.make_project()
    await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=True)
    password = {"type": "bcrypt", "password_hash": HASH_2B}
    records = [
        {"email": "ok@example.com", "password": password},
        {"email": "off@example.com", "password": password, "disabled": True},
        {"email": "late@example.com", "password": password, "account_valid_until": PAST},
        {"email": "early@example.com", "password": password, "account_valid_from": "2099-01-01T00:00:00Z"},
        {"email": "stale@example.com", "password": {**password, "expire_after": PAST}},
        {"email": "window@example.com", "password": password},
    ]
    body = await run_import(project, records)
    assert body["summary"]["inserted"] == len(records), body
    window_user = await env.services.users.verify_password(project.id, "window@example.com", PASSWORD)
    now = datetime.now(UTC)
    await env.services.user_admin.disable(
        await env.services.projects.get(project.id),
        window_user,
        temporarily_disabled_from=now - timedelta(hours=1),
        temporarily_disabled_until=now + timedelta(hours=1),
    )
    return project


async def test_the_readme_host_signs_in_and_refuses_per_rfc_6749(host, project):
    async with httpx.AsyncClient(base_url=host, headers={"Host": project.host}) as client:

        async def sign_in(username, password=PASSWORD, client_id="app"):
            form = {"grant_type": "password", "username": username, "password": password, "client_id": client_id}
            response = await client.post("/oauth2/token", data=form)
            assert response.headers["cache-control"] == "no-store"
            return response.status_code, response.json()

        ok_status, ok = await sign_in("ok@example.com")
        keys = (await client.get("/.well-known/jwks.json")).json()
        refusals = {
            "unknown user": await sign_in("nobody@example.com"),
            "wrong password": await sign_in("ok@example.com", "wrong"),
            "disabled, wrong password": await sign_in("off@example.com", "wrong"),
            "disabled": await sign_in("off@example.com"),
            "after the valid period": await sign_in("late@example.com"),
            "before the valid period": await sign_in("early@example.com"),
            "expired password": await sign_in("stale@example.com"),
            "temporarily disabled, wrong password": await sign_in("window@example.com", "wrong"),
            "temporarily disabled": await sign_in("window@example.com"),
            "unknown client": await sign_in("ok@example.com", client_id="nope"),
        }

    assert ok_status == 200
    key = jwt.PyJWKSet.from_dict(keys).keys[0].key
    claims = jwt.decode(ok["access_token"], key, algorithms=["RS256"], audience=f"http://{project.host}")
    assert claims["client_id"] == "app"
    assert ok["token_type"] == "Bearer" and "id_token" in ok
    answers = {what: (status, body["error"], body.get("error_reason")) for what, (status, body) in refusals.items()}
    assert answers == {
        "unknown user": (400, "invalid_grant", "InvalidCredentials"),
        "wrong password": (400, "invalid_grant", "InvalidCredentials"),
        "disabled, wrong password": (400, "invalid_grant", "InvalidCredentials"),
        "disabled": (400, "invalid_grant", "DisabledUser"),
        "after the valid period": (400, "invalid_grant", "UserOutsideValidPeriod"),
        "before the valid period": (400, "invalid_grant", "UserOutsideValidPeriod"),
        "expired password": (400, "invalid_grant", "PasswordExpiryForceChange"),
        "temporarily disabled, wrong password": (400, "invalid_grant", "InvalidCredentials"),
        "temporarily disabled": (400, "invalid_grant", "TemporarilyDisabledUser"),
        "unknown client": (401, "invalid_client", "InvalidClient"),
    }
    assert refusals["unknown user"][1] == refusals["wrong password"][1]
