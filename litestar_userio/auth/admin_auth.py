"""Admin API authentication: HTTPS, the project from Host, then the JWT.

See docs/reference.md#authentication.

Failures raise errors of `litestar_userio.errors`; each controller's handler puts them in its own envelope
(import: `{"error": "..."}`, export: the error object), always 403.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import jwt
from litestar.connection import ASGIConnection

from litestar_userio.changes.entries import ADMIN_API, CONSOLE, ChangeOrigin
from litestar_userio.config import AuthConfig
from litestar_userio.errors import AdminAuthFailed, HTTPSRequired, UnknownHost
from litestar_userio.projects.project_service import ProjectRecord, ProjectService
from userio_core.admin_keys import ORIGIN_CLAIM, load_public_key
from userio_core.clock import Clock

__all__ = ["ADMIN_IDENTITY", "AdminAuthenticator", "AdminIdentity"]

_ALLOWED_ALGORITHMS = ["RS256"]
ADMIN_IDENTITY = "userio_admin_identity"
"""Where `authenticate` leaves the request's `AdminIdentity` in the connection's scope state."""


@dataclass(frozen=True)
class AdminIdentity:
    """Who made an admin request, as its verified token says: the admin key (`kid`), the `sub`, the changes' origin.

    `origin` is `console` for a token carrying the console's claim (`userio_core.admin_keys.ORIGIN_CLAIM`), else
    `admin_api`.
    """

    key_id: str
    sub: str | None
    origin: ChangeOrigin = ADMIN_API


class AdminAuthenticator:
    """Checks an admin request and answers the project it acts on."""

    def __init__(self, config: AuthConfig, projects: ProjectService, clock: Clock) -> None:
        self.config = config
        self.projects = projects
        self.clock = clock

    async def authenticate(self, connection: ASGIConnection[Any, Any, Any, Any]) -> ProjectRecord:
        """The project of an authenticated admin request, or a 403 error."""
        if connection.scope["scheme"] != "https" and not self.config.allow_http:
            raise HTTPSRequired("HTTPS is required")
        project = await self.projects.by_host(connection.headers.get("host", ""))
        if project is None:
            raise UnknownHost()
        scheme, _, token = connection.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AdminAuthFailed("missing Authorization: Bearer <Admin API JWT>")
        claims = await self.verify(token.strip(), project.id)
        sub = claims.get("sub")
        key_id = str(jwt.get_unverified_header(token.strip()).get("kid"))
        origin = CONSOLE if claims.get(ORIGIN_CLAIM) == "console" else ADMIN_API
        identity = AdminIdentity(key_id, sub if isinstance(sub, str) else None, origin)
        connection.scope.setdefault("state", {})[ADMIN_IDENTITY] = identity
        return project

    async def verify(self, token: str, project_id: str) -> dict[str, Any]:
        """The claims of a valid Admin API JWT for `project_id`; raises `AdminAuthFailed` otherwise."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise AdminAuthFailed("invalid Admin API JWT: malformed token") from exc
        if header.get("alg") not in _ALLOWED_ALGORITHMS:
            raise AdminAuthFailed("invalid Admin API JWT: alg must be RS256")
        keys = await self.projects.admin_keys(project_id)
        public_pem = keys.get(str(header.get("kid")))
        if public_pem is None:
            raise AdminAuthFailed("invalid Admin API JWT: unknown kid")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                load_public_key(public_pem),
                algorithms=_ALLOWED_ALGORITHMS,
                audience=project_id,
                options={"require": ["exp"], "verify_exp": False, "verify_nbf": False, "verify_iat": False},
            )
        except jwt.InvalidAudienceError as exc:
            raise AdminAuthFailed("invalid Admin API JWT: aud does not name this project") from exc
        except jwt.MissingRequiredClaimError as exc:
            raise AdminAuthFailed(f"invalid Admin API JWT: missing {exc.claim}") from exc
        except jwt.PyJWTError as exc:
            raise AdminAuthFailed("invalid Admin API JWT: bad signature or claims") from exc
        self._check_times(claims)
        return claims

    def _check_times(self, claims: dict[str, Any]) -> None:
        """`exp`, `nbf`, `iat` against the injected clock, with the configured leeway.

        Each must be a finite number: PyJWT's JSON parser reads `NaN` and `Infinity`, and an `exp` of NaN
        compares false with every time, so it would never expire.
        """
        now = self.clock.now().timestamp()
        leeway = self.config.leeway.total_seconds()
        times = {name: _finite_time(name, claims[name]) if name in claims else None for name in ("exp", "nbf", "iat")}
        if now > times["exp"] + leeway:  # type: ignore[operator]
            raise AdminAuthFailed("invalid Admin API JWT: expired")
        if times["nbf"] is not None and now < times["nbf"] - leeway:
            raise AdminAuthFailed("invalid Admin API JWT: not yet valid")
        if times["iat"] is not None and now < times["iat"] - leeway:
            raise AdminAuthFailed("invalid Admin API JWT: issued in the future")


def _finite_time(name: str, value: Any) -> float:
    """A time claim as seconds; anything but a finite JSON number (null included) is refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AdminAuthFailed("invalid Admin API JWT: exp, nbf and iat must be numbers")
    try:
        seconds = float(value)
    except OverflowError:
        seconds = math.inf
    if not math.isfinite(seconds):
        raise AdminAuthFailed(f"invalid Admin API JWT: {name} must be a finite number")
    return seconds
