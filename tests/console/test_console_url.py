"""`litestar userio console-url`: the last line is a sign-in link with a short-lived admin token in its fragment."""

from __future__ import annotations

import os
import time
from urllib.parse import urlsplit

import jwt
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from litestar import Litestar
from litestar.cli._utils import LitestarEnv

from litestar_userio import ConsoleConfig, UserIOConfig, UserIOPlugin
from litestar_userio.cli import userio_group
from tests.changes.test_log import all_entries
from tests.server_cli import run_userio
from userio_core.admin_keys import ORIGIN_CLAIM

USERS = "/_api/admin/users"


def test_console_url_prints_a_link_with_a_short_lived_token_in_the_fragment(tmp_path):
    env = {**os.environ, "USERIO_HOME": str(tmp_path), "USERIO_REDIS_URL": "", "PORT": "9443"}
    env["USERIO_DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    key = tmp_path / "demo.pem"
    assert run_userio(env, "migrate").returncode == 0
    assert (
        run_userio(env, "project", "create", "--id", "demo", "--domain", "localhost", "--key-out", str(key)).returncode
        == 0
    )

    result = run_userio(env, "console-url", "--project", "demo", "--key", str(key))

    assert result.returncode == 0, result.stderr
    link = urlsplit(result.stdout.strip().splitlines()[-1])
    assert (link.scheme, link.netloc, link.path, link.query) == ("https", "localhost:9443", "/_userio/console/", "")
    name, _, token = link.fragment.partition("=")
    assert name == "token"
    public = serialization.load_pem_private_key(key.read_bytes(), None).public_key()
    claims = jwt.decode(token, public, algorithms=["RS256"], audience="demo")
    assert 0 < claims["exp"] - time.time() <= 30 * 60
    assert token not in result.stderr


def test_console_url_refuses_when_the_console_is_off(tmp_path):
    app = Litestar(plugins=[UserIOPlugin(UserIOConfig(database_url=f"sqlite:///{tmp_path / 'x.sqlite3'}"))])
    runner = CliRunner()

    result = runner.invoke(
        userio_group, ["console-url", "--project", "demo"], obj=LitestarEnv(app_path="x:app", app=app, cwd=tmp_path)
    )

    assert result.exit_code != 0
    assert "console is off" in result.output


def console_token(project, tmp_path) -> str:
    """The token of the link `console-url` prints for `project` (the command reads only its config and the key)."""
    key = tmp_path / "admin.pem"
    key.write_text(project.key.private_pem)
    config = UserIOConfig(database_url=f"sqlite:///{tmp_path / 'cli.sqlite3'}", console=ConsoleConfig())
    app = Litestar(plugins=[UserIOPlugin(config)])
    result = CliRunner().invoke(
        userio_group,
        ["console-url", "--project", project.id, "--key", str(key)],
        obj=LitestarEnv(app_path="x:app", app=app, cwd=tmp_path),
    )
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()[-1].split("#token=")[1]


async def change_every_way(project, token: str) -> str:
    """What the console's user page does (and a create and a PATCH), with `token`; the user's id."""
    headers = project.headers(token)
    client = project.env.client
    created = await client.post(USERS, json={"email": "ada@example.com"}, headers=headers)
    assert created.status_code == 201, created.text
    path = f"{USERS}/{created.json()['result']['sub']}"
    assert (await client.patch(path, json={"name": "Ada"}, headers=headers)).status_code == 200
    assert (await client.put(f"{path}/password", json={"password": "secret words"}, headers=headers)).status_code == 204
    assert (await client.post(f"{path}/disable", json={}, headers=headers)).status_code == 200
    assert (await client.post(f"{path}/enable", headers=headers)).status_code == 200
    assert (await client.delete(path, headers=headers)).status_code == 204
    return str(created.json()["result"]["sub"])


async def test_changes_made_with_the_consoles_token_are_logged_as_the_consoles(env, tmp_path):
    project = await env.make_project()
    token = console_token(project, tmp_path)
    assert jwt.decode(token, options={"verify_signature": False})[ORIGIN_CLAIM] == "console"

    await change_every_way(project, token)
    await change_every_way(project, project.token())  # an ordinary admin token (`admin-token`, the client)

    entries = await all_entries(project, 12)
    assert [e["origin"] for e in entries] == [{"kind": "console"}] * 6 + [{"kind": "admin_api"}] * 6
    assert [e["type"] for e in entries[:6]] == [e["type"] for e in entries[6:]]


async def test_only_the_consoles_claim_makes_a_change_the_consoles(env):
    project = await env.make_project()
    now = int(env.clock.now().timestamp())
    claims = {"aud": project.id, "iat": now, "exp": now + 300, ORIGIN_CLAIM: "scim"}
    forged_kind = jwt.encode(claims, project.key.private_key, algorithm="RS256", headers={"kid": project.key.kid})
    headers = {"X-Userio-Origin": "console", "Origin": "https://localhost:8443"}  # a header names no origin

    for index, token in enumerate((forged_kind, project.token())):
        response = await env.client.post(
            USERS, json={"email": f"u{index}@example.com"}, headers={**project.headers(token), **headers}
        )
        assert response.status_code == 201, response.text

    assert [e["origin"] for e in await all_entries(project, 2)] == [{"kind": "admin_api"}] * 2
