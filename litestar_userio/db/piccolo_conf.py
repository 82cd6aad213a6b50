"""The Piccolo configuration `migrate` points `PICCOLO_CONF` at.

Piccolo's migration runner finds its engine only through such a module, never through a table's bound engine.
"""

from __future__ import annotations

from typing import Any

from piccolo.conf.apps import AppRegistry
from piccolo.engine.base import Engine

DB: Engine[Any] | None = None
"""Set by `litestar_userio.db.migrate` for the duration of a run."""

APP_REGISTRY = AppRegistry(apps=["litestar_userio.db.piccolo_app"])
