"""A failure as RFC 7644 3.12 reports it: its HTTP status, `scimType` where the RFC names one, a detail.

One mapping for the SCIM routes' error handler and for each failed operation of a Bulk request.
"""

from __future__ import annotations

import logging
from typing import Any

from litestar_userio.errors import (
    DuplicatedIdentity,
    DuplicatedUserID,
    Forbidden,
    HookDisallowed,
    Invalid,
    NotFound,
    ScimError,
    ServiceUnavailable,
    UnsupportedMediaType,
    UserIOError,
    WebHookDisallowed,
)
from litestar_userio.scim.resources import ERROR_SCHEMA
from litestar_userio.statuses import http_answer

__all__ = ["error_body", "scim_failure"]

logger = logging.getLogger("litestar_userio.scim")


def scim_failure(exc: BaseException) -> tuple[int, str | None, str]:
    """(status, scimType or None, detail) of an error; anything unexpected is logged and answered 500."""
    if isinstance(exc, ScimError):
        return http_answer(exc)[0], exc.scim_type, exc.message
    if isinstance(exc, DuplicatedIdentity | DuplicatedUserID):
        return 409, "uniqueness", exc.message
    if isinstance(exc, UnsupportedMediaType):
        return 415, None, exc.message
    if isinstance(exc, WebHookDisallowed):
        return 403, None, _refused(exc)
    if isinstance(exc, HookDisallowed | Forbidden):
        return 403, None, exc.message
    if isinstance(exc, Invalid):
        detail = exc.message
        causes: Any = exc.info.get("causes") if isinstance(exc.info, dict) else None
        if isinstance(causes, list) and causes:
            detail += ": " + "; ".join(_cause(c) for c in causes[:5])
        return 400, "invalidValue", detail
    if isinstance(exc, NotFound):
        return 404, None, exc.message
    if isinstance(exc, ServiceUnavailable):
        return 503, None, exc.message
    if isinstance(exc, UserIOError):
        return http_answer(exc)[0], None, exc.message
    logger.error("SCIM request failed", exc_info=exc)
    return 500, None, "internal error"


def _refused(exc: WebHookDisallowed) -> str:
    """A blocking user hook's refusal as `detail`: the message, then each `title: reason` of its `info.reasons`.

    The admin API answers them in `info`; SCIM's error has only `detail`, so the IdP's provisioning log says why.
    """
    reasons: Any = exc.info.get("reasons") if isinstance(exc.info, dict) else None
    said = [
        ": ".join(str(part) for part in (r.get("title"), r.get("reason")) if part)
        for r in reasons or []
        if isinstance(r, dict)
    ]
    said = [s for s in said if s]
    return exc.message + (": " + "; ".join(said) if said else "")


def _cause(cause: Any) -> str:
    if isinstance(cause, dict):
        return f"{cause.get('location', '')} {cause.get('kind', '')}".strip()
    return str(cause)


def error_body(status: int, scim_type: str | None, detail: str) -> dict[str, Any]:
    """`{"schemas": [Error], "status": "400", "scimType"?, "detail"}`."""
    body: dict[str, Any] = {"schemas": [ERROR_SCHEMA], "status": str(status), "detail": detail}
    if scim_type is not None:
        body["scimType"] = scim_type
    return body
