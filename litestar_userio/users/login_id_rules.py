"""Per-project login-id rules (ref: `identity.login_id.types.<type>.case_sensitive`, default false).

`normalize_login_id` (userio_core/login_ids.py) gives the case-insensitive form. A project may make emails or
usernames case sensitive, as the reference configures it: an email then keeps the case of its local part
(the domain is still folded, NFKC applies), a username is only NFKC-normalized. Import matching, sign-in
and the stored attributes all go through `LoginIDRules.normalize`, so they agree.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from userio_core.login_ids import normalize_login_id

__all__ = ["CASE_INSENSITIVE", "LoginIDRules"]


@dataclass(frozen=True)
class LoginIDRules:
    """How a project compares login ids."""

    email_case_sensitive: bool = False
    """`lowerUPPER@ca.se` stays as is (the domain is still folded); default: `lowerupper@ca.se`."""
    username_case_sensitive: bool = False
    """`lowerUPPER` stays as is; default: `lowerupper`."""

    def normalize(self, attribute: str, value: str) -> str:
        """The value a login id is unique on, matched by and stored as (attribute: email, phone_number, ...)."""
        if attribute == "email" and self.email_case_sensitive:
            local, at, _ = value.rpartition("@")
            if at:
                domain = normalize_login_id("email", value).rpartition("@")[2]
                return f"{unicodedata.normalize('NFKC', local)}@{domain}"
        if attribute == "preferred_username" and self.username_case_sensitive:
            return unicodedata.normalize("NFKC", value)
        return normalize_login_id(attribute, value)


CASE_INSENSITIVE = LoginIDRules()
"""The reference's default."""
