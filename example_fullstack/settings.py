"""Settings from the environment, as litestar-fullstack reads them."""

from __future__ import annotations

import os

DATABASE_URL = os.environ.get("DATABASE_URL", "postgresql+asyncpg://root@127.0.0.1:5432/fullstack")
"""The app's database (SQLAlchemy URL)."""
SECRET_KEY = os.environ.get("SECRET_KEY", "change-me-in-production-please-32b")
"""Signs the app's own access tokens (HS256)."""
USERIO_PROJECT = "fullstack"
"""The plugin's project that holds the app's users (created by `move_users`)."""
USERIO_CLIENT = "fullstack-web"
"""The plugin's client the login signs in through."""
