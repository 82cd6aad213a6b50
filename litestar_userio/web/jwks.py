"""The JWKS route the plugin serves (`TokenConfig.jwks_path`): the public keys of the `Host`'s project.

Public like a token endpoint: no admin guard, and the answer is the same for everyone, so caches may keep it a while.
"""

from typing import Any

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency, Provide

from litestar_userio.projects.project_service import ProjectService
from litestar_userio.tokens.token_service import TokenService
from litestar_userio.web.providers import provide_project_service, provide_token_service

__all__ = ["JWKSController"]

_CACHE_CONTROL = "max-age=300"
"""Clients re-read the keys within five minutes of a rotation."""


class JWKSController(Controller):
    """The signing keys' public halves (RFC 7517), per project: `GET /`, mounted at `TokenConfig.jwks_path`."""

    opt = {"exclude_from_auth": True}
    dependencies = {
        "jwks_projects": Provide(provide_project_service, sync_to_thread=False),
        "jwks_tokens": Provide(provide_token_service, sync_to_thread=False),
    }

    @get("/", name="userio-jwks", summary="JSON Web Key Set", tags=["OAuth"])
    async def jwks(
        self,
        request: Request[Any, Any, Any],
        jwks_projects: NamedDependency[ProjectService],
        jwks_tokens: NamedDependency[TokenService],
    ) -> Response[Any]:
        """The public keys that verify this project's tokens; 404 for a host that names no project."""
        project = await jwks_projects.by_host(request.headers.get("host", ""))
        if project is None:
            body = {"error": "invalid_request", "error_description": "unknown host"}
            return Response(body, status_code=404, headers={"Cache-Control": "no-store"})
        return Response(await jwks_tokens.keys.jwks(project.id), headers={"Cache-Control": _CACHE_CONTROL})
