"""`python -m example_app`: HTTPS on https://localhost:8443 (PORT overrides), demo project ready."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from datetime import timedelta
from pathlib import Path

import uvicorn

from example_app.bootstrap import DEMO_PROJECT, ensure_certificate, ensure_demo_project
from example_app.logs import uvicorn_log_config
from example_app.settings import home, userio_config
from litestar_userio.runtime import tune_gc
from userio_core.admin_keys import sign_admin_token

ADA_REQUEST = (
    '{"identifier": "email", "records": [{"email": "ada@example.com", "email_verified": true, "name": "Ada Lovelace",'
    ' "roles": ["admin"], "custom_attributes": {"plan": "pro"}, "password": {"type": "bcrypt", "password_hash":'
    ' "$2b$04$gfLwerl3GiBpgFfuAmfck.Bxn1y20no2FfB9SHzdpb6loeI/1UMZS"}}]}'
)
"""The README's Ada: her hash is bcrypt("correct horse"), so step 4 (sign in as Ada) works after this."""


def main() -> None:
    host, port = os.environ.get("HOST", "127.0.0.1"), int(os.environ.get("PORT", "8443"))
    if not port_is_free(host, port):
        sys.exit(f"port {port} on {host} is in use (another demo?): pick another, e.g. PORT={port + 1} make demo")
    state = home()
    state.mkdir(parents=True, exist_ok=True)
    cert, key = ensure_certificate(state / "tls")
    key_path = asyncio.run(ensure_demo_project(userio_config()))
    token = sign_admin_token(key_path.read_text(), DEMO_PROJECT, ttl=timedelta(hours=12))
    base = f"https://localhost:{port}"
    if sys.stdout.isatty():
        shown = f"export TOKEN={token}"
    else:  # a log file or a pipe: a live 12-hour credential stays out of it
        token_path = write_private(state / "admin-token.jwt", token)
        shown = f"(not printed: this output is not a terminal; it is in {token_path.resolve()}, mode 0600)\n"
        shown += f"export TOKEN=$(cat {token_path.resolve()})"
    print(
        f"""
litestar-userio example: {base}   (state in {state.resolve()}; API docs at {base}/schema/swagger)

Admin API JWT for project "{DEMO_PROJECT}" (valid 12 h; make another with
  USERIO_HOME={state} .venv/bin/litestar --app example_app.app:app userio admin-token --project {DEMO_PROJECT}):

{shown}

Import Ada with her bcrypt password ("correct horse"), step 1 of the README's quick start:

curl --cacert {cert} -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -d '{ADA_REQUEST}' \\
  {base}/_api/admin/users/import

or a whole file with the `userio` client: .venv/bin/userio import docs/samples/users.ndjson

Admin console (prints a sign-in link):
  USERIO_HOME={state} .venv/bin/litestar --app example_app.app:app userio console-url --project {DEMO_PROJECT}
""",
        flush=True,
    )
    from example_app.app import app

    tune_gc()  # the app is loaded: docs/deployment.md, "Python's garbage collector"
    uvicorn.run(
        app,
        host=host,
        port=port,
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
        log_level=os.environ.get("LOG_LEVEL", "info"),
        log_config=uvicorn_log_config(),
    )


def port_is_free(host: str, port: int) -> bool:
    """Whether the server could listen there: checked before the banner, which would otherwise promise a URL."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is not "in use"
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def write_private(path: Path, text: str) -> Path:
    """Write `text` to a file only its owner can read (0600, also when the file existed before)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(text + "\n")
    return path


if __name__ == "__main__":
    main()
