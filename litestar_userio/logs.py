"""Keeping live credentials out of logs: a filter for access logs and anything else a host routes through it.

Access logs (uvicorn's, and most servers') record the request line with its query string, where signed
download URLs carry their signature and careless clients put tokens. `RedactSecrets` drops every query string
from uvicorn's access records and masks whatever looks like a JWT or a bearer credential in any record.
"""

from __future__ import annotations

import logging
import re

__all__ = ["RedactSecrets", "redact_secrets"]

_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+")
_ACCESS_ARGS = 5
"""uvicorn's access records carry (client_addr, method, full_path, http_version, status_code)."""


def redact_secrets(text: str) -> str:
    """`text` with JWTs and bearer credentials masked."""
    return _BEARER.sub(r"\1[REDACTED]", _JWT.sub("[REDACTED JWT]", text))


class RedactSecrets(logging.Filter):
    """Drops query strings from access-log records and masks JWTs and bearer credentials in every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record in place; never drops it."""
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == _ACCESS_ARGS:
            path, had_query, _ = str(args[2]).partition("?")
            path = redact_secrets(path) + ("?[query dropped]" if had_query else "")
            record.args = (args[0], args[1], path, *args[3:])
            return True
        message = record.getMessage()
        redacted = redact_secrets(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True
