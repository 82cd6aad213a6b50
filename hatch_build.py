"""The build hook of the three wheels (pyproject.toml, client/ and core/pyproject.toml): standard wheels only.

The files a `standard-force-include` table names go into the standard wheel and never into an editable one. Hatchling
applies `force-include` to editable builds too, so `pip install -e` put a copy of `userio_core/`, `userio_client/`
and the migrations into site-packages, ahead of the repository on `sys.path`: a Python started outside the
repository then imported the copy as it was at install time. An editable install exposes the source tree alone (its
`.pth` file), so an edit is seen wherever Python starts (tests/test_packaging.py).
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.config import BuilderConfig
from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class StandardWheelFiles(BuildHookInterface[BuilderConfig]):
    """Force-includes `standard-force-include` (source relative to the project -> path in the wheel) when standard."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Called by hatchling before each build; `version` is "standard" or "editable"."""
        if version == "standard":
            build_data["force_include"].update(self.config["standard-force-include"])
