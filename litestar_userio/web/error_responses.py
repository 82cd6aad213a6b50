"""The HTTP side of the errors: one table from error class to status and headers, and the handlers.

The import API answers `{"error": "<message>"}` (docs/reference.md#errors-import), the export, hook and admin APIs
`{"error": {"name", "reason", "message", "code", "info"?}}` (docs/reference.md#errors-envelope), the token endpoints
RFC 6749 5.2.
"""

from __future__ import annotations

import logging
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from litestar_userio.errors import (
    BodyTooLarge,
    Forbidden,
    HookDisallowed,
    InternalError,
    Invalid,
    InvalidRequest,
    NotFound,
    PasswordVerificationBusy,
    ServiceUnavailable,
    SignInRefused,
    TooManyRequest,
    UnsupportedMediaType,
    UserIOError,
)
from litestar_userio.statuses import HTTP_ANSWERS, HTTPAnswer, error_object, http_answer
from litestar_userio.web.bodies import empty_body_refusal

__all__ = [
    "HTTP_ANSWERS",
    "HTTPAnswer",
    "error_object",
    "export_error_handler",
    "http_answer",
    "import_error_handler",
    "oauth_busy_handler",
    "oauth_error_handler",
    "oauth_refusal_handler",
]

logger = logging.getLogger("litestar_userio")


_HTTP_ERRORS: dict[int, type[UserIOError]] = {
    400: InvalidRequest,
    403: Forbidden,
    404: NotFound,
    413: BodyTooLarge,
    415: UnsupportedMediaType,
    429: TooManyRequest,
}
"""Litestar's own refusals (by status) as our errors."""


def _body_refusal(request: Request[Any, Any, Any], exc: ValidationException) -> UserIOError | None:
    """The route's own answer to an empty body, which Litestar reports as a missing `data` argument.

    Litestar hands an empty body to no parser; the route's strict parser (its `opt`, `bodies.BODY_PARSER`) refuses
    `b""` in the endpoint's words (415 for a wrong content type, else "not valid JSON"), as it did when handlers
    parsed.
    """
    missing_body = isinstance(exc.extra, list) and any(
        isinstance(e, dict) and e.get("source") == "body" for e in exc.extra
    )
    return empty_body_refusal(request) if missing_body else None


def _parameter_refusal(exc: ValidationException) -> UserIOError | None:
    """A query or path parameter Litestar refused, named with why (its own detail only names the request line)."""
    causes = [
        f"invalid {getattr(e['source'], 'value', e['source'])} parameter {e['key']}: {e['message']}"
        for e in exc.extra if isinstance(e, dict) and {"key", "message", "source"} <= e.keys()
    ] if isinstance(exc.extra, list) else []  # fmt: skip
    return InvalidRequest("; ".join(causes)) if causes else None


def _answer(request: Request[Any, Any, Any], exc: Exception) -> tuple[UserIOError, int, dict[str, str]]:
    """Any exception of an admin route as the error it reports, its status and its headers."""
    if isinstance(exc, ValidationException) and (refusal := _body_refusal(request, exc)) is not None:
        return refusal, *http_answer(refusal)
    if isinstance(exc, ValidationException) and (refusal := _parameter_refusal(exc)) is not None:
        return refusal, *http_answer(refusal)
    if isinstance(exc, ServiceUnavailable):
        logger.warning("userio admin API: %s (%s)", exc.message, exc.__cause__ or exc)
    if isinstance(exc, UserIOError):
        return exc, *http_answer(exc)
    if isinstance(exc, HTTPException) and exc.status_code < 500:
        error = _HTTP_ERRORS.get(exc.status_code, Invalid)(exc.detail or None)
        return error, exc.status_code, dict(exc.headers or {})
    logger.exception("unexpected error in the userio admin API", exc_info=exc)
    error = InternalError()
    return error, *http_answer(error)


def oauth_error_handler(_: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """A hook stopping issuance at a token endpoint, as an RFC 6749 error answer.

    `access_denied` (403) when a hook disallowed it, with the hook's title and reason (secrets masked, length
    bounded: the client may be anyone); `server_error` (500)
    for every other failure, whose cause goes to the log, not to the client.
    """
    if isinstance(exc, HookDisallowed):
        body: dict[str, Any] = {"error": "access_denied", "error_description": exc.message}
        if exc.info:
            body.update({f"hook_{k}": v for k, v in exc.info.items()})
        return Response(body, status_code=http_answer(exc)[0], headers={"Cache-Control": "no-store"})
    logger.error("token issuance stopped by a hook: %s", exc)
    return Response(
        {"error": "server_error", "error_description": "the token could not be issued"},
        status_code=500,
        headers={"Cache-Control": "no-store"},
    )


def oauth_refusal_handler(_: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """A refused sign-in, refresh or client at a token endpoint: RFC 6749 5.2's answer, nothing as 500.

    `invalid_client` is 401 (5.2), the rest 400; the description is the refusal's fixed text
    (docs/reference.md#users-sign-in-refusals).
    """
    if not isinstance(exc, SignInRefused):  # registered for SignInRefused only
        raise exc
    status, headers = http_answer(exc)
    body = {"error": exc.oauth_error, "error_description": exc.message, "error_reason": exc.reason}
    return Response(body, status_code=status, headers={"Cache-Control": "no-store", **headers})


def oauth_busy_handler(_: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """`PasswordVerificationBusy` at a token endpoint: 429 `temporarily_unavailable` with `Retry-After`."""
    if not isinstance(exc, PasswordVerificationBusy):  # registered for PasswordVerificationBusy only
        raise exc
    status, headers = http_answer(exc)
    body = {"error": "temporarily_unavailable", "error_description": str(exc)}
    return Response(body, status_code=status, headers={"Cache-Control": "no-store", **headers})


def import_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """The import endpoints answer `{"error": "<short message>"}` (docs/reference.md#errors-import)."""
    error, status, headers = _answer(request, exc)
    return Response({"error": error.message}, status_code=status, headers=headers)


def export_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """The export envelope `{"error": {"name", "reason", "message", "code", "info"?}}`.

    See docs/reference.md#errors-envelope.
    """
    error, status, headers = _answer(request, exc)
    return Response({"error": error.to_object(status)}, status_code=status, headers=headers)
