"""uvicorn's logging for the example app: its own format, with `RedactSecrets` on every handler."""

from __future__ import annotations

import copy
from typing import Any

from uvicorn.config import LOGGING_CONFIG

from litestar_userio.logs import RedactSecrets


def uvicorn_log_config() -> dict[str, Any]:
    """uvicorn's default logging config, each handler filtered: no query string, JWT or bearer token is logged."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {"redact_secrets": {"()": RedactSecrets}}
    for handler in config["handlers"].values():
        handler["filters"] = ["redact_secrets"]
    return config
