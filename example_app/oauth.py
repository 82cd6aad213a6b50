"""The example's OAuth endpoints: a token endpoint (password and refresh_token grants) and the JWKS (SPEC 6).

A real auth server has more grants; this one shows how a host uses the plugin's services: verify an
imported bcrypt password, refuse accounts outside their valid period and expired passwords, issue tokens
(hooks run inside `issue_*`, refreshes too), rotate refresh tokens, publish the signing keys.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.di import NamedDependency

from litestar_userio.errors import PasswordExpired, RefreshTokenInvalid, UserOutsideValidPeriod
from litestar_userio.hooks.events import EventContext
from litestar_userio.projects.service import ProjectService
from litestar_userio.tokens.refresh import RefreshGrant
from litestar_userio.tokens.service import TokenService
from litestar_userio.users.service import UserService


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
    grant_type = form.get("grant_type")
    client_id = form.get("client_id")
    if grant_type not in {"password", "refresh_token"}:
        return oauth_error("unsupported_grant_type", "grant_type must be password or refresh_token")
    if not client_id:
        return oauth_error("invalid_request", "client_id is required")
    if await userio_tokens.applications.get(project.id, client_id) is None:
        return oauth_error("invalid_client", "unknown client_id", 401)
    grant: RefreshGrant | None = None
    if grant_type == "password":
        username, password = form.get("username"), form.get("password")
        if not username or not password:
            return oauth_error("invalid_request", "username, password and client_id are required")
        scope = str(form.get("scope") or "openid")
        user_id = await userio_users.verify_password(project.id, username, password)
        if user_id is None:
            return oauth_error("invalid_grant", "wrong login id or password")
    else:
        presented = form.get("refresh_token")
        if not presented:
            return oauth_error("invalid_request", "refresh_token is required")
        try:
            grant = await userio_tokens.refresh_tokens.check(project.id, client_id, presented)
        except RefreshTokenInvalid as exc:
            return oauth_error("invalid_grant", exc.message)
        user_id, scope = grant.user_id, grant.scope
    user = await userio_tokens.load_user(project.id, user_id)
    if user.disabled:
        return oauth_error("invalid_grant", "the account is disabled")
    try:
        await userio_users.check_sign_in(project.id, user_id, password=grant_type == "password")
    except (UserOutsideValidPeriod, PasswordExpired) as exc:
        answer = oauth_error("invalid_grant", _refusal(exc))
        return Response({**answer.content, "error_reason": exc.reason}, status_code=400, headers=answer.headers)
    context = EventContext(
        client_id=client_id,
        app_id=project.id,
        ip_address=request.client.host if request.client else None,
        user_agent=request.headers.get("user-agent"),
        language=request.headers.get("accept-language", "en").split(",")[0] or "en",
    )
    access = await userio_tokens.issue_access_token(
        project.id, client_id, user_id, issuer=_origin(request), scope=scope, context=context
    )
    body: dict[str, Any] = {
        "access_token": access.token,
        "token_type": access.token_type,
        "expires_in": access.expires_in,
        "scope": scope,
    }
    if "openid" in scope.split():
        body["id_token"] = await userio_tokens.issue_id_token(
            project.id, client_id, user_id, issuer=_origin(request), context=context
        )
    # Only now, with every token issued, is a refresh token stored or rotated: a failure above (a hook that threw
    # or timed out, no free worker) has used nothing up, and the client's retry works (issue 29).
    if grant is not None:
        try:
            await userio_tokens.refresh_tokens.rotate(project.id, grant)
        except RefreshTokenInvalid as exc:  # a concurrent refresh used it first: a reuse
            return oauth_error("invalid_grant", exc.message)
        body["refresh_token"] = grant.refresh_token
    elif "offline_access" in scope.split():
        body["refresh_token"] = await userio_tokens.refresh_tokens.issue(project.id, client_id, user_id, scope)
    return Response(body, headers={"Cache-Control": "no-store"})


def _refusal(exc: UserOutsideValidPeriod | PasswordExpired) -> str:
    if isinstance(exc, PasswordExpired):
        return f"{exc.message} (change the password, then sign in again)"
    info = exc.info or {}
    return (
        f"the account can sign in only from {info.get('account_valid_from') or 'any time'}"
        f" until {info.get('account_valid_until') or 'any time'}"
    )


@get("/.well-known/jwks.json")
async def jwks(
    request: Request[Any, Any, Any],
    userio_projects: NamedDependency[ProjectService],
    userio_tokens: NamedDependency[TokenService],
) -> Response[Any]:
    """The public keys that verify this project's tokens."""
    project = await userio_projects.by_host(request.headers.get("host", ""))
    if project is None:
        return oauth_error("invalid_request", "unknown host", 404)
    return Response(await userio_tokens.keys.jwks(project.id), headers={"Cache-Control": "max-age=300"})
