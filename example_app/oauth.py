"""The example's OAuth endpoints: a password-grant token endpoint and the JWKS (the host's side of SPEC 6).

A real auth server has more grants; this one shows how a host uses the plugin's services: verify an
imported bcrypt password, issue tokens (hooks run inside `issue_*`), publish the signing keys.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.di import NamedDependency

from litestar_userio.hooks.events import EventContext
from litestar_userio.services import Services


def oauth_error(error: str, description: str, status_code: int = 400) -> Response[Any]:
    """RFC 6749 section 5.2."""
    return Response(
        {"error": error, "error_description": description},
        status_code=status_code,
        headers={"Cache-Control": "no-store"},
    )


def _origin(request: Request[Any, Any, Any]) -> str:
    return str(request.base_url).rstrip("/")


@post("/oauth2/token", status_code=200)
async def token(request: Request[Any, Any, Any], userio: NamedDependency[Services]) -> Response[Any]:
    """`grant_type=password`: a login id and password in, an access token (and an ID token for `openid`) out."""
    project = await userio.projects.by_host(request.headers.get("host", ""))
    if project is None:
        return oauth_error("invalid_request", "unknown host", 404)
    form = await request.form()
    grant_type = form.get("grant_type")
    if grant_type != "password":
        return oauth_error("unsupported_grant_type", "only grant_type=password is supported here")
    username, password, client_id = form.get("username"), form.get("password"), form.get("client_id")
    if not username or not password or not client_id:
        return oauth_error("invalid_request", "username, password and client_id are required")
    scope = str(form.get("scope") or "openid")
    if await userio.tokens.applications.get(project.id, client_id) is None:
        return oauth_error("invalid_client", "unknown client_id", 401)
    user_id = await userio.users.verify_password(project.id, username, password)
    if user_id is None:
        return oauth_error("invalid_grant", "wrong login id or password")
    user = await userio.tokens.load_user(project.id, user_id)
    if user.disabled:
        return oauth_error("invalid_grant", "the account is disabled")
    context = EventContext(
        client_id=client_id,
        app_id=project.id,
        ip_address=request.client.host if request.client else None,
        user_agent=request.headers.get("user-agent"),
        language=request.headers.get("accept-language", "en").split(",")[0] or "en",
    )
    access = await userio.tokens.issue_access_token(
        project.id, client_id, user_id, issuer=_origin(request), scope=scope, context=context
    )
    body: dict[str, Any] = {
        "access_token": access.token,
        "token_type": access.token_type,
        "expires_in": access.expires_in,
        "scope": scope,
    }
    if "openid" in scope.split():
        body["id_token"] = await userio.tokens.issue_id_token(
            project.id, client_id, user_id, issuer=_origin(request), context=context
        )
    return Response(body, headers={"Cache-Control": "no-store"})


@get("/.well-known/jwks.json")
async def jwks(request: Request[Any, Any, Any], userio: NamedDependency[Services]) -> Response[Any]:
    """The public keys that verify this project's tokens."""
    project = await userio.projects.by_host(request.headers.get("host", ""))
    if project is None:
        return oauth_error("invalid_request", "unknown host", 404)
    return Response(await userio.tokens.keys.jwks(project.id), headers={"Cache-Control": "max-age=300"})
