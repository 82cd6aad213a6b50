"""Per-project settings, kept as JSON on the project row."""

from __future__ import annotations

import msgspec

from litestar_userio.users.login_id_rules import LoginIDRules

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
    email_case_sensitive: bool = False
    """Email login ids keep the case of their local part (ref: `login_id.types.email.case_sensitive`)."""
    username_case_sensitive: bool = False
    """Usernames keep their case (ref: `login_id.types.username.case_sensitive`)."""

    def login_id_rules(self) -> LoginIDRules:
        """How this project compares login ids: import matching, sign-in and the stored attributes."""
        return LoginIDRules(self.email_case_sensitive, self.username_case_sensitive)
