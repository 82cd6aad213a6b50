"""Formats of standard attributes and the normalization of login ids.

See docs/reference.md#import-records and docs/reference.md#import-login-ids.

Each check answers whether a string is acceptable; the normalization of login ids lives in `login_ids.py`
(re-exported here), which the `userio` client imports too. Well-kept libraries do the hard parts: `phonenumbers`
(libphonenumber rules), `email-validator`, `langcodes` (BCP 47), `zoneinfo` (IANA names).
"""

from __future__ import annotations

import calendar
import re
import unicodedata
import zoneinfo
from collections.abc import Callable
from functools import lru_cache
from urllib.parse import urlsplit

import email_validator
import langcodes
import phonenumbers

from userio_core.login_ids import LOGIN_ID_ATTRIBUTES, normalize_email_domain, normalize_login_id
from userio_core.login_ids import is_valid_e164 as is_e164

__all__ = [
    "ATTRIBUTE_FORMATS",
    "KEY_PATTERN",
    "LOGIN_ID_ATTRIBUTES",
    "NUL_MESSAGE",
    "SPECIAL_USE_HINT",
    "STANDARD_ATTRIBUTES",
    "STANDARD_STRING_ATTRIBUTES",
    "describe_invisible",
    "email_refusal",
    "invisible_character",
    "is_bcp47",
    "is_birthdate",
    "is_country_code",
    "is_e164",
    "is_email",
    "is_http_url",
    "is_timezone",
    "is_username",
    "normalize_email_domain",
    "normalize_login_id",
    "storable_text",
]

STANDARD_STRING_ATTRIBUTES: tuple[str, ...] = (
    "name",
    "given_name",
    "family_name",
    "middle_name",
    "nickname",
    "profile",
    "picture",
    "website",
    "gender",
    "birthdate",
    "zoneinfo",
    "locale",
)
"""Standard attributes other than login ids, verification flags and address (docs/reference.md#import-records)."""

STANDARD_ATTRIBUTES: tuple[str, ...] = (
    "preferred_username",
    "email",
    "phone_number",
    "email_verified",
    "phone_number_verified",
    *STANDARD_STRING_ATTRIBUTES,
)
"""Every standard attribute but address, in the order the reference writes them (exports, `--from userio`)."""

KEY_PATTERN = r"[a-zA-Z_][a-zA-Z0-9:_]{0,39}"
"""Role and group keys (beyond the reference, which takes any non-empty string): what a record's `roles` and
`groups` may name, so also what a project may define."""

_PLAIN_EMAIL = re.compile(
    r"(?P<local>[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*)"
    r"@(?P<domain>(?:(?!..--)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?P<tld>[A-Za-z]{2,63}))"
)
"""A label with `--` in its third and fourth characters (Punycode `xn--`, or an R-LDH label the library refuses)
is left to the library."""
_SPECIAL_USE_DOMAINS = frozenset(email_validator.SPECIAL_USE_DOMAIN_NAMES)


NUL_MESSAGE = "U+0000 (NUL) is not allowed in text"
"""The one refusal of U+0000, wherever it is given (docs/reference.md#input-hygiene)."""


def storable_text(value: str) -> bool:
    """Whether every database here can store this text (PostgreSQL refuses U+0000 in text and JSONB).

    The one rule for U+0000: an import record's screening, the admin API's parameters and bodies, sign-in.
    """
    return "\x00" not in value


SPECIAL_USE_HINT = (
    "(a project whose users have such addresses allows them:"
    " `litestar userio project configure --set allow_special_use_email_domains=true`)"
)


def _special_use_name(domain: str) -> str | None:
    """The special-use name (RFC 6761: `test`, `local`, `localhost`, ...) `domain` is or ends in; None if none.

    email-validator's list; the longest name that applies where two would.
    """
    domain = domain.lower().rstrip(".")
    while True:  # the domain, then each of its parent names: a set lookup each
        if domain in _SPECIAL_USE_DOMAINS:
            return domain
        _, dot, domain = domain.partition(".")
        if not dot:
            return None


def _is_plain_email(value: str, special_use_allowed: bool = False) -> bool:
    """A plain ASCII address that email-validator accepts too (its checks cost ~20 us; this ~1 us)."""
    match = _PLAIN_EMAIL.fullmatch(value)
    if match is None or len(value) > 254 or len(match["local"]) > 64 or len(match["domain"]) > 253:
        return False
    return special_use_allowed or _special_use_name(match["domain"]) is None


def email_refusal(value: str, *, special_use_allowed: bool = False) -> str | None:
    """Why `value` is not an address (email-validator's own sentence), or None when it is one.

    The one email rule: the import, its dry run and the admin API report this reason in a format cause.
    `special_use_allowed` (the project setting `allow_special_use_email_domains`) accepts a domain under a
    special-use name (`staff.test`, `host.local`), every other rule unchanged: email-validator refuses such names
    whatever it is told, so the address is checked with that name read as the reserved `example` (RFC 2606).
    """
    if _is_plain_email(value, special_use_allowed):
        return None
    if (char := invisible_character(value)) is not None:
        return f"contains {describe_invisible(char)}, a character that cannot be seen or typed"
    checked, special_use = value, None
    if "@" in value:
        local, domain = value.rsplit("@", 1)
        special_use = _special_use_name(domain)
        if special_use_allowed and special_use is not None:
            checked = f"{local}@{domain.rstrip('.')[: -len(special_use)]}example"
    try:
        email_validator.validate_email(checked, check_deliverability=False)
    except email_validator.EmailNotValidError as error:
        if special_use is not None and not special_use_allowed and "special-use" in str(error):
            return f"{error} {SPECIAL_USE_HINT}"
        return str(error) or "not an email address"
    return None


def is_email(value: str) -> bool:
    """An address, without display name or invisible characters; deliverability is not checked (no DNS in bulk)."""
    return email_refusal(value) is None


_USERNAME_FORBIDDEN = re.compile(r"[\s\x00-\x1f\x7f]")

_DEFAULT_IGNORABLE_NOT_FORMAT = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2065\u3164\ufe00-\ufe0f\uffa0\ufff0-\ufff8\U000e0000-\U000e0fff]"
)
"""Unicode's `Default_Ignorable_Code_Point` characters that are not of category Cf (format): the combining
grapheme joiner, Hangul fillers, Khmer inherent vowels, variation selectors, and reserved ones (Unicode 16
DerivedCoreProperties.txt); the format characters (zero width space and joiners, soft hyphen, word joiner, the
byte order mark, every bidi control) are found by their category."""


def invisible_character(value: str) -> str | None:
    """The first default-ignorable or format character of `value` (one a person cannot see or type), or None.

    Such a character makes `ali\u200bce` a second login id that looks like `alice`: NFKC and case folding keep it.
    """
    if value.isascii():
        return None
    for char in value:
        if unicodedata.category(char) == "Cf" or _DEFAULT_IGNORABLE_NOT_FORMAT.match(char):
            return char
    return None


def describe_invisible(char: str) -> str:
    """`U+200B ZERO WIDTH SPACE`: how a cause names an invisible character."""
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}"


def is_username(value: str) -> bool:
    """1 to 255 characters without white space, control, format or default-ignorable characters."""
    return 0 < len(value) <= 255 and not _USERNAME_FORBIDDEN.search(value) and invisible_character(value) is None


_FULL_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_NO_YEAR = re.compile(r"--(\d{2})-(\d{2})")
_YEAR = re.compile(r"\d{4}")


def is_birthdate(value: str) -> bool:
    """OIDC `birthdate`: `YYYY-MM-DD`, `0000-MM-DD` (year unknown), `--MM-DD` or `YYYY`."""
    if _YEAR.fullmatch(value):
        return True
    if match := _FULL_DATE.fullmatch(value):
        year, month, day = (int(g) for g in match.groups())
    elif match := _NO_YEAR.fullmatch(value):
        year, (month, day) = 0, (int(g) for g in match.groups())
    else:
        return False
    if not 1 <= month <= 12:
        return False
    leap_reference = 2000 if year == 0 else year
    return 1 <= day <= calendar.monthrange(leap_reference, month)[1]


@lru_cache(maxsize=1)
def _timezones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def is_timezone(value: str) -> bool:
    """An IANA time zone name (`Europe/Paris`)."""
    return value in _timezones()


@lru_cache(maxsize=1024)
def is_bcp47(value: str) -> bool:
    """A well-formed BCP 47 tag in canonical form (`en-US`, not `en_us` nor `eng`)."""
    try:
        return langcodes.tag_is_valid(value) and langcodes.standardize_tag(value) == value
    except ValueError:  # langcodes.LanguageTagError is a ValueError
        return False


def is_http_url(value: str) -> bool:
    """An absolute http(s) URL with a host."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in {"http", "https"} and bool(parts.netloc) and not any(c.isspace() for c in value)


def is_country_code(value: str) -> bool:
    """An ISO 3166-1 alpha-2 code known to libphonenumber's region list."""
    return value in phonenumbers.SUPPORTED_REGIONS


ATTRIBUTE_FORMATS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "email": ("email", is_email),
    "phone_number": ("phone", is_e164),
    "preferred_username": ("username", is_username),
    "birthdate": ("birthdate", is_birthdate),
    "zoneinfo": ("timezone", is_timezone),
    "locale": ("bcp47", is_bcp47),
    "profile": ("uri", is_http_url),
    "picture": ("uri", is_http_url),
    "website": ("uri", is_http_url),
}
"""Standard attribute -> (format name reported in a cause, check)."""
