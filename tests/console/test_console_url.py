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

from litestar_userio import UserIOConfig, UserIOPlugin
from litestar_userio.cli import userio_group
from tests.server_cli import run_userio


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
