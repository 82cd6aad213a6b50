"""Where local state lives; shared by the server's CLI and the `userio` client."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_key_path", "userio_home"]


def userio_home() -> Path:
    """The folder that holds local state: `$USERIO_HOME`, default `.userio`."""
    return Path(os.environ.get("USERIO_HOME", ".userio"))


def default_key_path(project_id: str) -> Path:
    """Where a project's admin private key goes unless told otherwise."""
    return userio_home() / f"{project_id}-admin-key.pem"
