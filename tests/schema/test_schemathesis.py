"""Schemathesis against the OpenAPI schema of every admin endpoint of a running example app (issue 6):
no 5xx, and every answer is documented (status code, content type, body schema)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from userio_core.admin_keys import sign_admin_token

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("USERIO_SCHEMATHESIS_EXAMPLES", "15"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = tmp_path_factory.mktemp("schemathesis")
    port = _free_port()
    env = {**os.environ, "USERIO_HOME": str(home), "PORT": str(port), "LOG_LEVEL": "warning", "USERIO_REDIS_URL": ""}
    process = subprocess.Popen(
        [sys.executable, "-m", "example_app"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"https://localhost:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/", verify=False).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("the example app did not start")
    token = sign_admin_token((home / "demo-admin-key.pem").read_text(), "demo")
    # One session for every case: a connection per case loaded the system's CA bundle each time (~50 ms, two
    # thirds of this module's time) though the example app's certificate is not verified.
    with requests.Session() as session:
        session.verify = False
        yield base, token, session
    process.terminate()
    process.wait(timeout=20)


def _schema() -> dict:
    """The schema the app serves at /schema/openapi.json, built without starting anything."""
    from litestar import Litestar

    from litestar_userio import UserIOConfig, UserIOPlugin

    document = Litestar(plugins=[UserIOPlugin(UserIOConfig())]).openapi_schema.to_schema()
    # A handler served at two paths (`/users/{id}` and `/users/id/{id}`) keeps them in a set, so their order in the
    # schema differs between processes; pytest-xdist needs every worker to collect the same tests in the same order.
    document["paths"] = dict(sorted(document["paths"].items()))
    return document


schema = schemathesis.openapi.from_dict(_schema()).include(path_regex="^/_api/admin/")


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_admin_endpoints_answer_as_documented(case, server):
    base, token, session = server
    headers = {"Authorization": f"Bearer {token}", "Host": "localhost"}
    response = case.call(base_url=base, headers=headers, session=session, verify=False)

    case.validate_response(
        response,
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
    )
