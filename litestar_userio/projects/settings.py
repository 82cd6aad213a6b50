"""Per-project settings, kept as JSON on the project row."""

from __future__ import annotations

import msgspec

__all__ = ["ProjectSettings"]


class ProjectSettings(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    """What a project decides for itself; the defaults are the reference's behaviour."""

    create_unknown_roles_on_import: bool = False
    """Unknown role keys in a record create the role instead of failing it (`RoleUnknownKeys`)."""
    create_unknown_groups_on_import: bool = False
    """Likewise for groups (`GroupUnknownKeys`)."""
    export_enabled: bool = True
    """False answers `UserExportDisabled` on both export endpoints."""
    export_rate_limit: int | None = None
    """Overrides the plugin's `UserExport` bucket size for this project."""
    export_rate_period_seconds: int | None = None
    """Overrides the plugin's `UserExport` bucket period for this project."""
