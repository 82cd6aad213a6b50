"""Where the plugin's migrations live and which they are, known without loading Piccolo's migration runner."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

__all__ = ["APP_NAME", "migration_ids", "migrations_folder"]

APP_NAME = "userio"
"""The Piccolo app of the plugin's tables, as its `migration` table records it."""

_ID = re.compile(r'^ID = "([^"]+)"$', re.MULTILINE)


def migrations_folder() -> Path:
    """The migrations: inside the wheel (`_migrations`), or the repository's top-level `migrations/`."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "_migrations"
    return shipped if shipped.is_dir() else package.parent / "migrations"


@cache
def migration_ids() -> frozenset[str]:
    """The `ID` of every migration file, as Piccolo records it in its `migration` table once applied."""
    return frozenset(i for path in migrations_folder().glob("*.py") for i in _ID.findall(path.read_text("utf-8")))
