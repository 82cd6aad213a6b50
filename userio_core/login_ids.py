"""The normalization of login ids, shared by every path that matches users.

The server's import, dry run and sign-in, and the `userio` client's planning all call `normalize_login_id`,
so they agree on which records name the same user. Light on purpose (`idna`, `phonenumbers`, the standard
library), so the client can import it alone.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

import idna
import phonenumbers

__all__ = [
    "LOGIN_ID_ATTRIBUTES",
    "is_valid_e164",
    "login_key",
    "normalize_email_domain",
    "normalize_login_id",
    "parse_phone",
]

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
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164), _is_valid_number(number)


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

    The one normalization of login ids: the server's import and dry run, sign-in, and the `userio` client
    call this function. Lenient on bad input (it never raises), so the import can group records before
    validating them.
    """
    if value.isascii():
        if attribute == "email":
            return value.lower()
        if attribute == "preferred_username":
            return value.casefold()
    if attribute == "phone_number" and _is_own_e164(value):
        # Most numbers arrive in E.164 already, each one new (no cache helps): the `userio` client computes this
        # for every record it sends, and parsing them was a fifth of its CPU. tests/test_formats.py holds the
        # shortcut equal to phonenumbers' own answer for every country code.
        return value
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


def login_key(normalized: str) -> str:
    """The key a normalized login id of any kind is unique on in its project: one login id names one user.

    The reference keeps one unique key per project across kinds (`UNIQUE (app_id, unique_key)`), so a username
    spelled like another user's email or phone number is refused. The key is the normalized value (emails and
    usernames already folded as the project compares them, `LoginIDRules.normalize`), except that a value
    phonenumbers reads as a number (`+1 (415) 555-0100`, or any text with a `+` before its first digit) is its
    E.164 form, as the phone normalization makes it: so sign-in and `GET /users?login_id=`, which try the typed
    value as each kind, find one user. Where the kinds' normalizations differ beyond that (a username's case
    folding maps `ß` to `ss` where an email's local part keeps it; a project with case-sensitive usernames and
    case-insensitive emails) the keys differ too (SECURITY.md). A value without `+` costs one substring test; an
    E.164 number ~8 us on a busy machine; phonenumbers parses only text with a `+` before its first digit.
    """
    if "+" not in normalized:  # normalized values are NFKC already: a full-width plus is `+` here
        return normalized
    if _is_own_e164(normalized):
        return normalized
    for char in normalized:
        if char == "+":
            parsed = parse_phone(unicodedata.normalize("NFKC", normalized))
            if parsed is not None:
                return parsed[0]
            break
        if char.isdigit():
            break
    return normalized


def _is_own_e164(value: str) -> bool:
    """Whether `parse_phone` would give `value` back (or refuse it, which normalization also answers with it).

    For `+` and ASCII digits, phonenumbers reads the country code and keeps the rest digit for digit (or
    refuses the number), unless the country's national prefix for parsing matches the rest: only then can it
    be rewritten (`+44 07911...` is `+447911...`).
    """
    digits = value[1:]
    if value[:1] != "+" or not digits.isascii() or not digits.isdigit():
        return False
    split = _country_code(digits)
    return split is None or not _rewritable(*split)  # no country code: refused


def is_valid_e164(value: str) -> bool:
    """A valid number (libphonenumber) written exactly in E.164: `+` and digits.

    Where parsing could not rewrite the number (`_is_own_e164`), it is built from its digits and checked without
    `phonenumbers.parse`, which was half of the 17.5 us a number took, the largest part of validating a record;
    anything else goes to phonenumbers. `tests/test_formats.py` holds the two equal for every country code.
    """
    digits = value[1:]
    if value[:1] == "+" and digits.isascii() and digits.isdigit():
        split = _country_code(digits)
        if split is None:
            return False  # refused by phonenumbers.parse
        code, national = split
        if not _rewritable(code, national):
            if not _SHORTEST_NATIONAL <= len(national) <= _LONGEST_NATIONAL:
                return False  # refused by phonenumbers.parse
            number = phonenumbers.PhoneNumber(country_code=int(code), national_number=int(national))
            _set_leading_zeros(national, number)
            # Built from its digits, leading zeros kept, the number's E.164 form is `value` itself.
            return _is_valid_number(number)
    parsed = parse_phone(value) if value.startswith("+") else None
    return parsed is not None and parsed[1] and parsed[0] == value


def _country_code(digits: str) -> tuple[str, str] | None:
    """(country code, the rest) as phonenumbers reads a number after `+`; None when no country code starts it."""
    for size in range(1, min(len(digits), 3) + 1):
        if digits[:size] in _COUNTRY_CODES:
            return digits[:size], digits[size:]
    return None


def _rewritable(code: str, national: str) -> bool:
    """Whether phonenumbers may strip a national prefix from the rest (or knows nothing of the country)."""
    prefix = _NATIONAL_PREFIXES.get(code) or _national_prefix(code)
    return prefix is _UNKNOWN or prefix.match(national) is not None


def _is_valid_number(number: phonenumbers.PhoneNumber) -> bool:
    """`phonenumbers.is_valid_number`, typing the number once where it types it twice.

    Where a country code serves several regions (+1: the US, Canada and 23 others), phonenumbers finds the
    region by typing the number against each region's patterns until one fits, then types it again against that
    region to answer: for a US number, 9.2 us of which half is the second typing (measured in one process). A
    region found by typing is the answer: valid. A region found by its leading digits is typed once, as before.
    `tests/test_formats.py` holds the two equal on every region's example numbers and on numbers near them.
    """
    regions = phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(number.country_code or 0)
    if regions is None or len(regions) == 1:
        return bool(phonenumbers.is_valid_number(number))
    national = phonenumbers.national_significant_number(number)
    for region in regions:
        metadata = phonenumbers.PhoneMetadata.metadata_for_region(region, None)
        if metadata is None:
            continue
        if metadata.leading_digits is not None:
            if _leading_digits(metadata.leading_digits).match(national):
                return bool(phonenumbers.is_valid_number_for_region(number, region))
        elif _number_type(national, metadata) != phonenumbers.PhoneNumberType.UNKNOWN:
            return True
    return False


_number_type = phonenumbers.phonenumberutil._number_type_helper


@cache
def _leading_digits(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


_SHORTEST_NATIONAL, _LONGEST_NATIONAL = 2, 17
"""phonenumbers.parse refuses national numbers shorter or longer (its _MIN/_MAX_LENGTH_FOR_NSN)."""
_set_leading_zeros = phonenumbers.phonenumberutil._set_italian_leading_zeros_for_phone_number


_COUNTRY_CODES: frozenset[str] = frozenset(map(str, phonenumbers.COUNTRY_CODE_TO_REGION_CODE))
_NATIONAL_PREFIXES: dict[str, re.Pattern[str]] = {}
_UNKNOWN: re.Pattern[str] = re.compile("(?!)")
"""Stands for a country code without metadata (phonenumbers decides)."""


def _national_prefix(code: str) -> re.Pattern[str]:
    """The country's national prefix for parsing, compiled once (a pattern that never matches when it has none)."""
    country_code = int(code)
    region = phonenumbers.region_code_for_country_code(country_code)
    metadata = phonenumbers.PhoneMetadata.metadata_for_region_or_calling_code(country_code, region)
    prefix = _UNKNOWN if metadata is None else re.compile(metadata.national_prefix_for_parsing or "(?!)")
    _NATIONAL_PREFIXES[code] = prefix
    return prefix
