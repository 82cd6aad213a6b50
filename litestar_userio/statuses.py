"""The one table of HTTP statuses of the plugin's errors, and the error object that carries one as its `code`.

The web layer answers with these statuses (`web/error_responses.py` holds the handlers); the import's failed records and
a task's error carry the same status as `code`, as the reference's do, so the domain builds error objects here
without a web import. No Litestar in this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from litestar_userio.errors import (
    BodyTooLarge,
    ErrorObject,
    Forbidden,
    Gone,
    HookDisallowed,
    HookError,
    IdempotencyKeyReused,
    Invalid,
    NotFound,
    PasswordVerificationBusy,
    RateLimited,
    ScimAuthFailed,
    ScimError,
    ScimNotImplemented,
    ScimPreconditionFailed,
    ScimTooLarge,
    ServiceUnavailable,
    SignInRefused,
    TooManyRequest,
    UnknownClient,
    UnsupportedMediaType,
    UserIOError,
)

__all__ = ["HTTP_ANSWERS", "HTTPAnswer", "error_object", "http_answer"]


@dataclass(frozen=True, slots=True)
class HTTPAnswer:
    """The status an error class is answered with, and when the client may try again."""

    status: int
    """The HTTP status, also the `code` of the error object."""
    retry_after: Callable[[Any], int] | None = None
    """Seconds for a `Retry-After` header, read from the error; None: no such header."""


HTTP_ANSWERS: dict[type[UserIOError], HTTPAnswer] = {
    UserIOError: HTTPAnswer(500),
    Invalid: HTTPAnswer(400),
    BodyTooLarge: HTTPAnswer(413),
    UnsupportedMediaType: HTTPAnswer(415),
    IdempotencyKeyReused: HTTPAnswer(409),
    Forbidden: HTTPAnswer(403),
    NotFound: HTTPAnswer(404),
    Gone: HTTPAnswer(410),
    TooManyRequest: HTTPAnswer(429),
    RateLimited: HTTPAnswer(429, lambda error: error.retry_after_seconds),
    PasswordVerificationBusy: HTTPAnswer(429, lambda _: 1),
    HookError: HTTPAnswer(500),
    HookDisallowed: HTTPAnswer(403),
    SignInRefused: HTTPAnswer(400),
    UnknownClient: HTTPAnswer(401),
    ServiceUnavailable: HTTPAnswer(503, lambda _: 5),
    ScimAuthFailed: HTTPAnswer(401),
    ScimPreconditionFailed: HTTPAnswer(412),
    ScimTooLarge: HTTPAnswer(413),
    ScimNotImplemented: HTTPAnswer(501),
    ScimError: HTTPAnswer(400),
}
"""Every error class answered with something other than its nearest listed ancestor's status is listed here."""


def http_answer(error: UserIOError) -> tuple[int, dict[str, str]]:
    """The status and headers of an error: its nearest class in `HTTP_ANSWERS`."""
    answer = next(HTTP_ANSWERS[cls] for cls in type(error).__mro__ if cls in HTTP_ANSWERS)
    headers = {} if answer.retry_after is None else {"Retry-After": str(answer.retry_after(error))}
    return answer.status, headers


def error_object(error: UserIOError) -> ErrorObject:
    """The error object of the export envelope, a failed record or a task: `code` is the error's HTTP status."""
    return error.to_object(http_answer(error)[0])
