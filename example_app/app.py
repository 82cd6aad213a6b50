"""The example auth server: `litestar --app example_app.app:app ...` and `python -m example_app`."""

from __future__ import annotations

from importlib.metadata import version

from litestar import Litestar, get
from litestar.openapi import OpenAPIConfig

from example_app.oauth import token
from example_app.settings import userio_config
from litestar_userio import UserIOPlugin


@get("/", include_in_schema=False)
async def index() -> dict[str, str]:
    """Where to look next."""
    return {
        "service": "litestar-userio example",
        "docs": "/schema",
        "import": "/_api/admin/users/import",
        "export": "/_api/admin/users/export",
        "hooks": "/_api/admin/hooks",
        "token": "/oauth2/token",
        "jwks": "/.well-known/jwks.json",
    }


def create_app() -> Litestar:
    """The app for the environment as it is now: one process can build one per environment (the CLI tests do)."""
    return Litestar(
        route_handlers=[index, token],
        plugins=[UserIOPlugin(userio_config())],
        openapi_config=OpenAPIConfig(
            title="litestar-userio example",
            version=version("litestar-userio"),
            description="The admin API (Bearer: an Admin API JWT, `litestar userio admin-token`) and a demo OAuth "
            "token endpoint. Try it at /schema/swagger.",
        ),
    )


app = create_app()
