"""Per-project settings, kept as JSON on the project row."""

from __future__ import annotations

from typing import Literal

import msgspec

from litestar_userio.config import PasswordHashBounds
from litestar_userio.passwords.firebase import FirebaseHashConfig
from litestar_userio.passwords.formats import HashPolicy
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

    password_algorithm: Literal["bcrypt", "argon2id"] = "bcrypt"
    """What a legacy hash becomes at its user's first good sign-in (`PasswordConfig.bcrypt_cost` for bcrypt,
    argon2-cffi's RFC 9106 defaults for Argon2id); imported bcrypt stays as it is while this is `bcrypt`."""
    firebase_scrypt: FirebaseHashConfig | None = None
    """Firebase's hash config (`signer_key`, `salt_separator`, `rounds`, `mem_cost`) for `firebase_scrypt`
    password objects that do not carry it themselves."""
    allow_weak_password_hashes: bool = False
    """Accept `md5`, `sha1`, `sha256`, `sha512` digests (plain or salted) in imports."""
    allow_secret_export: bool = False
    """Allow the lossless export (`format: "userio"`): every user with its password hash and second-factor
    secrets, age-encrypted to the admin's recipients. Off: `Forbidden/SecretExportDisabled`."""
    allow_special_use_email_domains: bool = False
    """Accept emails on special-use domains (RFC 6761: `.test`, `.local`, `.localhost`, `.invalid`, `.onion`,
    `.arpa`), a host's staff or test accounts, in imports and the admin API; they sign in like any other."""

    def hash_policy(self, bounds: PasswordHashBounds, max_bcrypt_cost: int) -> HashPolicy:
        """The password formats an import into this project accepts."""
        return HashPolicy(bounds, max_bcrypt_cost, self.allow_weak_password_hashes, self.firebase_scrypt)

    def login_id_rules(self) -> LoginIDRules:
        """How this project compares login ids: import matching, sign-in and the stored attributes."""
        return LoginIDRules(self.email_case_sensitive, self.username_case_sensitive)
