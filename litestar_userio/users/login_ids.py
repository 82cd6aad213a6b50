"""The normalization of login ids, shared by every path that matches users.

The server's import, dry run and sign-in, and the migration client's planning all call `normalize_login_id`,
so they agree on which records name the same user. Light on purpose (`idna`, `phonenumbers`, the standard
library), so the client can import it alone.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import idna
import phonenumbers

__all__ = ["LOGIN_ID_ATTRIBUTES", "normalize_email_domain", "normalize_login_id", "parse_phone"]

LOGIN_ID_ATTRIBUTES: dict[str, str] = {
    "email": "email",
    "phone_number": "phone",
    "preferred_username": "username",
}
"""Standard attribute -> login id key (and type), as the reference names them."""


@lru_cache(maxsize=65536)
def parse_phone(value: str) -> tuple[str, bool] | None:
    """(E.164 form, valid) of a phone number, or None; cached: a record's number is checked up to 3 times."""
    try:
        number = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164), phonenumbers.is_valid_number(number)


@lru_cache(maxsize=16384)
def normalize_email_domain(domain: str) -> str:
    """An email domain as matched: its A-label form under IDNA 2008 / UTS 46, non-transitional.

    Non-transitional keeps `ß` (and the other deviation characters) apart from `ss`, as the reference and
    email-validator do: `straße.de` is `xn--strae-oqa.de`, not `strasse.de` (IDNA 2003's mapping).
    A domain IDNA refuses is only lowercased (the record's format check fails it anyway).
    """
    try:
        return idna.encode(domain, uts46=True, transitional=False).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        return domain.lower()


def normalize_login_id(attribute: str, value: str) -> str:
    """The value a login id is unique on and matched by: emails and usernames case-insensitive, phones E.164.

    The one normalization of login ids: the server's import and dry run, sign-in, and the migration client
    call this function. Lenient on bad input (it never raises), so the import can group records before
    validating them.
    """
    if value.isascii():
        if attribute == "email":
            return value.lower()
        if attribute == "preferred_username":
            return value.casefold()
    value = unicodedata.normalize("NFKC", value)
    if attribute == "phone_number":
        parsed = parse_phone(value)
        return parsed[0] if parsed else value
    if attribute == "email":
        local, at, domain = value.rpartition("@")
        if at:
            return f"{local.lower()}@{normalize_email_domain(domain)}"
        return value.lower()
    return value.casefold()
