"""Issuing tokens for the host's token endpoint, with the blocking hooks run just before signing.

See docs/reference.md#hooks-events.

JWT access tokens (`typ: at+jwt`) only for applications whose setting says so (rule 4): they run
`oidc.jwt.pre_create`; others get an opaque token and no hook. ID tokens run `oidc.id_token.pre_create`.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime
from typing import Any

import jwt
import msgspec

from litestar_userio.config import TokenConfig
from litestar_userio.db.engine import Database
from litestar_userio.errors import InvalidRequest, NotFound, UnknownClient
from litestar_userio.hooks.hook_service import HookPreview, HookService, SavedHook
from litestar_userio.hooks.token_events import EventContext
from litestar_userio.observability import telemetry
from litestar_userio.statuses import error_object
from litestar_userio.tokens.applications import ApplicationRecord, ApplicationService, refuse_unstorable_sign_in
from litestar_userio.tokens.keys import SigningKeyStore
from litestar_userio.tokens.refresh import RefreshGrant, RefreshTokenService
from litestar_userio.users.model import UserState
from litestar_userio.users.user_repository import UserRepository
from userio_core.clock import Clock

__all__ = ["AccessToken", "TokenResponse", "TokenService"]

_LISTED_CLIENTS = 20
"""Client ids an unknown-client answer of the hooks test lists at most."""


class AccessToken(msgspec.Struct):
    """An issued access token."""

    token: str
    token_type: str
    expires_in: int
    is_jwt: bool


class TokenResponse(msgspec.Struct, omit_defaults=True):
    """RFC 6749 5.1's successful answer, ready to return from a token endpoint (`Response(body)`)."""

    access_token: str
    token_type: str
    expires_in: int
    scope: str
    id_token: str | None = None
    """With the `openid` scope."""
    refresh_token: str | None = None
    """With the `offline_access` scope on a password grant, or the successor of a rotated one."""


class TokenService:
    """Builds claims, runs the project's hooks on them, signs with the project's active key."""

    def __init__(
        self,
        db: Database,
        keys: SigningKeyStore,
        applications: ApplicationService,
        hooks: HookService,
        config: TokenConfig,
        clock: Clock,
    ) -> None:
        self.db = db
        self.keys = keys
        self.applications = applications
        self.hooks = hooks
        self.config = config
        self.clock = clock
        self._users = UserRepository()
        self.refresh_tokens = RefreshTokenService(db, clock, config.refresh_token_lifetime)
        """The `refresh_token` grant: rotating refresh tokens, stored hashed, revoked on reuse."""

    async def load_user(self, project_id: str, user_id: str) -> UserState:
        """The user as the hooks see it; `NotFound` when not in this project."""
        async with self.db.reader() as tx:
            user = await self._users.load_one(tx, project_id, user_id)
        if user is None:
            raise NotFound("no such user")
        return user

    async def application(self, project_id: str, client_id: str) -> ApplicationRecord:
        """The client; `UnknownClient` when unknown (the plugin's handler answers `invalid_client`, 401).

        A client id holding U+0000 is `InvalidSignInRequest` (`invalid_request`, 400), as at sign-in.
        """
        refuse_unstorable_sign_in(client_id=client_id)
        application = await self.applications.get(project_id, client_id)
        if application is None:
            raise UnknownClient()
        return application

    def access_claims(
        self, user: UserState, application: ApplicationRecord, issuer: str, scope: str, now: datetime
    ) -> dict[str, Any]:
        """What the server puts into a JWT access token (all of it protected from hooks)."""
        issued = int(now.timestamp())
        return {
            "iss": issuer,
            "sub": user.id,
            "aud": [issuer],
            "client_id": application.client_id,
            "scope": scope,
            "iat": issued,
            "exp": issued + application.access_token_lifetime,
            "jti": str(uuid.uuid4()),
        }

    def id_token_claims(
        self, user: UserState, application: ApplicationRecord, issuer: str, nonce: str | None, now: datetime
    ) -> dict[str, Any]:
        """What the server puts into an ID token."""
        issued = int(now.timestamp())
        claims = {
            "iss": issuer,
            "sub": user.id,
            "aud": application.client_id,
            "iat": issued,
            "exp": issued + int(self.config.id_token_lifetime.total_seconds()),
            "auth_time": issued,
        }
        if nonce is not None:
            claims["nonce"] = nonce
        return claims

    async def issue_access_token(
        self,
        project_id: str,
        client_id: str,
        user_id: str,
        *,
        issuer: str,
        scope: str = "openid",
        context: EventContext | None = None,
    ) -> AccessToken:
        """A JWT access token after `oidc.jwt.pre_create`, or an opaque one when the client does not use JWTs.

        The token itself is `.token`; `token_response` gives a token endpoint's whole answer.
        """
        application = await self.application(project_id, client_id)
        user = await self.load_user(project_id, user_id) if application.issue_jwt_access_token else None
        hooks = await self.hooks.list(project_id) if user is not None else []
        context = context or EventContext(client_id=client_id, app_id=project_id)
        return await self._access_token(
            project_id, application, user, hooks, issuer=issuer, scope=scope, context=context
        )

    async def token_response(
        self,
        project_id: str,
        client_id: str,
        user_id: str,
        *,
        issuer: str,
        scope: str = "openid",
        refresh: RefreshGrant | None = None,
        context: EventContext | None = None,
        user: UserState | None = None,
        application: ApplicationRecord | None = None,
    ) -> TokenResponse:
        """Everything a token endpoint answers for a user `UserService.sign_in` let in, or a checked refresh.

        The access token; an ID token for `openid`; then, with every token issued, the refresh token: `refresh`
        (from `refresh_tokens.check`) rotated, else a new one for `offline_access`. A failure before (a hook that
        threw) uses nothing up, so the client's retry works (issue 29). The hooks run on each token, as in
        `issue_access_token` and `issue_id_token`.

        The client, the user and the project's hooks are read once and handed to both tokens; a caller that read
        the user and the client already (`UserService.password_grant`, `refresh_grant_user`) passes them.
        """
        scopes = scope.split()
        if application is None:
            application = await self.application(project_id, client_id)
        context = context or EventContext(client_id=client_id, app_id=project_id)
        signed = application.issue_jwt_access_token or "openid" in scopes
        if user is None and signed:
            user = await self.load_user(project_id, user_id)
        hooks = await self.hooks.list(project_id) if signed else []
        access = await self._access_token(
            project_id, application, user, hooks, issuer=issuer, scope=scope, context=context
        )
        id_token = None
        if "openid" in scopes:
            assert user is not None
            id_token = await self._id_token(
                project_id, application, user, hooks, issuer=issuer, nonce=None, context=context
            )
        refresh_token = None
        if refresh is not None:
            await self.refresh_tokens.rotate(project_id, refresh)  # a concurrent use first: RefreshTokenInvalid
            refresh_token = refresh.refresh_token
        elif "offline_access" in scopes:
            refresh_token = await self.refresh_tokens.issue(project_id, client_id, user_id, scope)
        return TokenResponse(access.token, access.token_type, access.expires_in, scope, id_token, refresh_token)

    async def issue_id_token(
        self,
        project_id: str,
        client_id: str,
        user_id: str,
        *,
        issuer: str,
        nonce: str | None = None,
        context: EventContext | None = None,
    ) -> str:
        """An ID token after `oidc.id_token.pre_create`."""
        application = await self.application(project_id, client_id)
        user = await self.load_user(project_id, user_id)
        hooks = await self.hooks.list(project_id)
        context = context or EventContext(client_id=client_id, app_id=project_id)
        return await self._id_token(project_id, application, user, hooks, issuer=issuer, nonce=nonce, context=context)

    async def _access_token(
        self,
        project_id: str,
        application: ApplicationRecord,
        user: UserState | None,
        hooks: list[SavedHook],
        *,
        issuer: str,
        scope: str,
        context: EventContext,
    ) -> AccessToken:
        """The access token of what the caller read: opaque, or a JWT after `oidc.jwt.pre_create` (needs `user`)."""
        if not application.issue_jwt_access_token:
            telemetry.token_issued("access")
            return AccessToken(secrets.token_urlsafe(32), "Bearer", application.access_token_lifetime, False)
        assert user is not None
        claims = self.access_claims(user, application, issuer, scope, self.clock.now())
        result = await self.hooks.run_chain("oidc.jwt.pre_create", hooks, user, claims, context)
        token = await self._sign(project_id, result.payload, typ="at+jwt")
        return AccessToken(token, "Bearer", application.access_token_lifetime, True)

    async def _id_token(
        self,
        project_id: str,
        application: ApplicationRecord,
        user: UserState,
        hooks: list[SavedHook],
        *,
        issuer: str,
        nonce: str | None,
        context: EventContext,
    ) -> str:
        """The ID token of what the caller read, after `oidc.id_token.pre_create`."""
        claims = self.id_token_claims(user, application, issuer, nonce, self.clock.now())
        result = await self.hooks.run_chain("oidc.id_token.pre_create", hooks, user, claims, context)
        return await self._sign(project_id, result.payload, typ="JWT")

    async def preview(
        self,
        project_id: str,
        event_type: str,
        client_id: str,
        user_id: str,
        *,
        issuer: str,
        hooks: list[SavedHook] | None = None,
    ) -> HookPreview:
        """Run the given (or the saved) hooks as a token issuance would, and issue nothing (the test endpoint).

        An admin asks: an unknown client is answered with the project's client ids, an unknown user with what to pass.
        """
        application = await self.applications.get(project_id, client_id)
        if application is None:
            known = await self.applications.client_ids(project_id, _LISTED_CLIENTS + 1)
            listed = ", ".join(known[:_LISTED_CLIENTS]) + (", ..." if len(known) > _LISTED_CLIENTS else "")
            raise InvalidRequest(
                f"unknown client_id {client_id!r}; "
                + (f"this project's clients: {listed}" if known else "this project has no clients")
            )
        try:
            user = await self.load_user(project_id, user_id)
        except NotFound:
            raise NotFound(f"no user {user_id!r} in this project: pass a user's id (`sub` in an export)") from None
        now = self.clock.now()
        if event_type == "oidc.jwt.pre_create":
            claims = self.access_claims(user, application, issuer, "openid", now)
        else:
            claims = self.id_token_claims(user, application, issuer, None, now)
        chain = hooks if hooks is not None else await self.hooks.list(project_id)
        context = EventContext(client_id=client_id, app_id=project_id, triggered_by="admin_api")
        result = await self.hooks.run_chain(
            event_type, chain, user, dict(claims), context, raise_errors=False, test=True
        )
        added = {k: v for k, v in result.payload.items() if k not in claims}
        return HookPreview(
            payload=result.payload,
            added_claims=added,
            hooks=result.runs,
            error=error_object(result.error) if result.error is not None else msgspec.UNSET,
        )

    async def _sign(self, project_id: str, claims: dict[str, Any], *, typ: str) -> str:
        key = await self.keys.active(project_id)
        telemetry.token_issued("access" if typ == "at+jwt" else "id")
        return jwt.encode(claims, key.private_key, algorithm="RS256", headers={"kid": key.kid, "typ": typ})
