"""`python -m example_app`: HTTPS on https://localhost:8443 (PORT overrides), demo project ready."""

from __future__ import annotations

import asyncio
import os
from datetime import timedelta

import uvicorn

from example_app.bootstrap import DEMO_PROJECT, ensure_certificate, ensure_demo_project
from example_app.settings import home, userio_config
from litestar_userio.auth.keys import sign_admin_token


def main() -> None:
    state = home()
    state.mkdir(parents=True, exist_ok=True)
    port = int(os.environ.get("PORT", "8443"))
    cert, key = ensure_certificate(state / "tls")
    key_path = asyncio.run(ensure_demo_project(userio_config()))
    token = sign_admin_token(key_path.read_text(), DEMO_PROJECT, ttl=timedelta(hours=12))
    base = f"https://localhost:{port}"
    print(
        f"""
litestar-userio example: {base}   (state in {state.resolve()})

Admin API JWT for project "{DEMO_PROJECT}" (valid 12 h; make another with
  USERIO_HOME={state} .venv/bin/litestar --app example_app.app:app userio admin-token --project {DEMO_PROJECT}):

export TOKEN={token}

curl --cacert {cert} -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \\
  -d '{{"identifier": "email", "records": [{{"email": "ada@example.com", "name": "Ada"}}]}}' \\
  {base}/_api/admin/users/import
""",
        flush=True,
    )
    uvicorn.run(
        "example_app.app:app",
        host=os.environ.get("HOST", "127.0.0.1"),
        port=port,
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
        log_level=os.environ.get("LOG_LEVEL", "info"),
    )


if __name__ == "__main__":
    main()
