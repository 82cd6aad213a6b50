"""The example's token endpoint: the password and refresh_token grants (SPEC 6).

A real auth server has more grants; this one shows how a host uses the plugin's services: `sign_in` checks the
client, the imported password and every rule that refuses a sign-in (disabled, outside the valid period, an
expired password), `token_response` issues the tokens (hooks run inside, refreshes too), refresh tokens rotate.
Every refusal is a typed error the plugin's exception handler answers per RFC 6749; the plugin serves the JWKS.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, post
from litestar.di import NamedDependency

from litestar_userio import EventContext, ProjectService, RefreshGrant, TokenService, UserService


def oauth_error(error: str, description: str, status_code: int = 400) -> Response[Any]:
    """RFC 6749 section 5.2."""
    return Response(
        {"error": error, "error_description": description},
        status_code=status_code,
        headers={"Cache-Control": "no-store"},
    )


@post("/oauth2/token", status_code=200)
async def token(
    request: Request[Any, Any, Any],
    userio_projects: NamedDependency[ProjectService],
    userio_users: NamedDependency[UserService],
    userio_tokens: NamedDependency[TokenService],
) -> Response[Any]:
    """`grant_type=password` (a login id and password) or `refresh_token`: tokens out.

    An access token, an ID token for `openid`, and a refresh token for `offline_access` (rotated on every use,
    revoked with its whole sign-in when a used one comes back). Hooks run on every issuance, refreshes too,
    with the user's current attributes.
    """
    project = await userio_projects.by_host(request.headers.get("host", ""))
    if project is None:
        return oauth_error("invalid_request", "unknown host", 404)
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        return oauth_error("invalid_request", "the body must be application/x-www-form-urlencoded (RFC 6749 3.2)")
    form = await request.form()
    grant_type, client_id = form.get("grant_type"), form.get("client_id")
    if grant_type not in {"password", "refresh_token"}:
        return oauth_error("unsupported_grant_type", "grant_type must be password or refresh_token")
    if not client_id:
        return oauth_error("invalid_request", "client_id is required")
    grant: RefreshGrant | None = None
    if grant_type == "password":
        username, password = form.get("username"), form.get("password")
        if not username or not password:
            return oauth_error("invalid_request", "username, password and client_id are required")
        scope = str(form.get("scope") or "openid")
        signed_in = await userio_users.password_grant(project, username, password, client_id)
        user, application = signed_in.user, signed_in.application
    else:
        presented = form.get("refresh_token")
        if not presented:
            return oauth_error("invalid_request", "refresh_token is required")
        # The client (an unknown one: invalid_client), then the token and its user in one read; a disabled user is
        # refused, a reused token revokes its whole sign-in.
        refreshed = await userio_users.refresh_grant(project, client_id, presented)
        grant, user, application, scope = refreshed.grant, refreshed.user, refreshed.application, refreshed.grant.scope
    context = EventContext(
        client_id=client_id,
        app_id=project.id,
        ip_address=request.client.host if request.client else None,
        user_agent=request.headers.get("user-agent"),
        language=request.headers.get("accept-language", "en").split(",")[0] or "en",
    )
    body = await userio_tokens.token_response(
        project.id,
        client_id,
        user.id,
        issuer=str(request.base_url).rstrip("/"),
        scope=scope,
        refresh=grant,
        context=context,
        user=user,  # read once by the grant, passed down
        application=application,
    )
    return Response(body, headers={"Cache-Control": "no-store"})
