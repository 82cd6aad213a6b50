"""docs/adoption.md followed step by step by an app in litestar-fullstack's shape (`example_fullstack`), on
PostgreSQL with real processes: its users move into the plugin keeping their ids and Argon2 hashes, sign in
through the app's login with their old passwords, and every route of the app answers as before."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import jwt
import pytest
from argon2 import PasswordHasher

from tests.helpers import stop_server
from tests.host.test_readme_host import free_port

ROOT = Path(__file__).resolve().parents[2]
APP_DIR = ROOT / "example_fullstack"
BIN = Path(sys.executable).parent
USERS = [("ada@example.com", "Ada", "analytical-1843"), ("alan@example.com", "Alan", "enigma-1936")]
USERS += [(f"user{i}@example.com", f"User {i}", f"pass-{i}-word") for i in range(3)]


def run(env: dict[str, str], *command: str) -> str:
    """A command as an operator runs it, from the deployment's own folder (what the app writes there, such as
    its export directory, stays out of the repository); its standard output (it must succeed)."""
    done = subprocess.run(command, cwd=env["APP_WORKDIR"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


@pytest.fixture
def app_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    """The app's environment on a fresh database of its own, run from a folder of its own (`APP_WORKDIR`)."""
    url = database_url.replace("postgresql://", "postgresql+asyncpg://")
    return {**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(ROOT), "APP_WORKDIR": str(tmp_path)}


@asynccontextmanager
async def served(env: dict[str, str], app: str, *options: str) -> AsyncIterator[httpx.AsyncClient]:
    """The app in its own uvicorn process (with uvicorn's `options`) on a free loopback port; a client of it."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", app, "--port", str(port), "--log-level", "warning", *options],
        cwd=env["APP_WORKDIR"],
        env={**env, "PYTHONFAULTHANDLER": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            while True:
                try:
                    await client.get("/api/users/me")
                    break
                except httpx.TransportError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        server.kill()
                        pytest.fail(f"{app} did not start:\n{server.communicate()[0]}")
                    await asyncio.sleep(0.1)  # polling the port with a deadline, not waiting on a timer
            yield client
    finally:
        output = stop_server(server)
    assert "Traceback" not in output, output


async def seed(database_url: str) -> dict[str, str]:
    """The app's users (Argon2 hashes of known passwords) and their teams; email -> user id."""
    hasher = PasswordHasher()
    ids = {email: uuid.uuid4() for email, _, _ in USERS}
    teams = {"core": uuid.uuid4(), "ops": uuid.uuid4()}
    conn = await asyncpg.connect(database_url)
    try:
        await conn.executemany(
            "INSERT INTO user_account (id, email, name, hashed_password) VALUES ($1, $2, $3, $4)",
            [(ids[email], email, name, hasher.hash(password)) for email, name, password in USERS],
        )
        await conn.executemany("INSERT INTO team (id, name) VALUES ($1, $2)", [(i, n) for n, i in teams.items()])
        members = [(uuid.uuid4(), ids[email], teams["core"], "member") for email, _, _ in USERS]
        members.append((uuid.uuid4(), ids["ada@example.com"], teams["ops"], "admin"))
        await conn.executemany("INSERT INTO team_member (id, user_id, team_id, role) VALUES ($1, $2, $3, $4)", members)
    finally:
        await conn.close()
    return {email: str(user_id) for email, user_id in ids.items()}


async def what_each_user_sees(client: httpx.AsyncClient) -> dict[str, Any]:
    """Per user: the login's token `sub`, and the app's own routes' JSON with that token."""
    seen: dict[str, Any] = {}
    for email, _, password in USERS:
        login = await client.post("/api/access/login", data={"username": email, "password": password})
        assert login.status_code == 200, login.text
        token = login.json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        me = await client.get("/api/users/me", headers=headers)
        teams = await client.get("/api/teams", headers=headers)
        sub = jwt.decode(token, options={"verify_signature": False})["sub"]
        seen[email] = {"sub": sub, "me": (me.status_code, me.json()), "teams": (teams.status_code, teams.json())}
    return seen


async def test_an_app_with_users_adopts_the_plugin_by_the_guide(app_env, database_url):
    run(app_env, str(BIN / "alembic"), "-c", str(APP_DIR / "alembic.ini"), "upgrade", "head")
    ids = await seed(database_url)
    async with served(app_env, "example_fullstack.app_before:app") as before:
        seen_before = await what_each_user_sees(before)

    # Step 1: the plugin's schema; step 3: the users move in; step 4 is `example_fullstack.app`'s login.
    run(app_env, str(BIN / "litestar"), "--app", "example_fullstack.app:app", "userio", "migrate")
    moved = json.loads(run(app_env, sys.executable, "-m", "example_fullstack.move_users").splitlines()[-1])
    again = json.loads(run(app_env, sys.executable, "-m", "example_fullstack.move_users").splitlines()[-1])
    async with served(app_env, "example_fullstack.app:app") as after:
        seen_after = await what_each_user_sees(after)
        wrong = await after.post("/api/access/login", data={"username": "ada@example.com", "password": "nope"})
        unknown = await after.post("/api/access/login", data={"username": "no@example.com", "password": "x"})

    assert moved["inserted"] == len(USERS) and moved["failed"] == 0, moved
    assert again["inserted"] == 0 and again["failed"] == 0, again
    assert {email: seen["sub"] for email, seen in seen_after.items()} == ids
    assert seen_after == seen_before
    assert seen_after["ada@example.com"]["teams"][1] == [
        {"id": seen_after["ada@example.com"]["teams"][1][0]["id"], "name": "core", "role": "member"},
        {"id": seen_after["ada@example.com"]["teams"][1][1]["id"], "name": "ops", "role": "admin"},
    ]
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    assert (unknown.status_code, unknown.json()["error"]) == (400, "invalid_grant")
    # Step 2: the app's Alembic, comparing every schema, proposes nothing (on the plugin's tables or its own).
    # `alembic check` fails (exit 1) when autogenerate proposes any operation.
    run(app_env, str(BIN / "alembic"), "-c", str(APP_DIR / "alembic.ini"), "check")
    conn = await asyncpg.connect(database_url)
    try:
        public = {
            r["tablename"] for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        }
        users = await conn.fetch("SELECT id FROM userio.userio_user")
    finally:
        await conn.close()
    assert public == {"alembic_version", "user_account", "team", "team_member"}
    assert {row["id"] for row in users} == set(ids.values())


async def test_the_admin_api_behind_a_tls_proxy_takes_https_from_a_trusted_proxy_only(app_env, tmp_path):
    # docs/adoption.md, "The admin API needs HTTPS": plain HTTP is refused; uvicorn trusting the proxy's address
    # (here the loopback one the test's client comes from) takes X-Forwarded-Proto into the scope.
    litestar = [str(BIN / "litestar"), "--app", "example_fullstack.app:app", "userio"]
    run(app_env, *litestar, "migrate")
    key = tmp_path / "admin.pem"
    run(
        app_env, *litestar, "project", "create", "--id", "proxied", "--domain", "app.example.com", "--key-out", str(key)
    )
    token = run(app_env, *litestar, "admin-token", "--project", "proxied", "--key", str(key)).strip()
    headers = {"Host": "app.example.com", "Authorization": f"Bearer {token}"}
    proxy = ["--proxy-headers", "--forwarded-allow-ips", "127.0.0.1"]

    async with served(app_env, "example_fullstack.app:app", *proxy) as client:
        plain = await client.get("/_api/admin/users", headers=headers)
        forwarded = await client.get("/_api/admin/users", headers={**headers, "X-Forwarded-Proto": "https"})
    async with served(app_env, "example_fullstack.app:app", "--forwarded-allow-ips", "10.0.0.5") as client:
        untrusted = await client.get("/_api/admin/users", headers={**headers, "X-Forwarded-Proto": "https"})

    assert plain.status_code == 403
    assert (
        plain.json()["error"]["reason"] == "HTTPSRequired" and plain.json()["error"]["message"] == "HTTPS is required"
    )
    assert forwarded.status_code == 200, forwarded.text
    assert forwarded.json()["result"]["items"] == []
    assert (untrusted.status_code, untrusted.json()["error"]["reason"]) == (403, "HTTPSRequired")
