"""Formats of standard attributes and login-id normalization (DECISIONS 3 "Formats")."""

from __future__ import annotations

import email_validator
import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hard import many
from userio_core.attribute_formats import (
    is_bcp47,
    is_birthdate,
    is_e164,
    is_email,
    is_http_url,
    is_timezone,
    normalize_login_id,
)
from userio_core.login_ids import is_valid_e164, login_key

ATOM = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-",
    min_size=1,
    max_size=20,
)
LABEL = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9-]{0,8}[A-Za-z0-9])?", fullmatch=True)
TLD = st.from_regex(r"[A-Za-z]{2,6}", fullmatch=True)


def library_accepts(value: str) -> bool:
    try:
        email_validator.validate_email(value, check_deliverability=False)
    except email_validator.EmailNotValidError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(st.lists(ATOM, min_size=1, max_size=3), st.lists(LABEL, min_size=1, max_size=3), TLD)
def test_plain_looking_emails_match_email_validator(local, labels, tld):
    """Plain ASCII addresses take a fast path in `is_email`; it must agree with the library on every one of them."""
    value = ".".join(local) + "@" + ".".join([*labels, tld])
    assert is_email(value) == library_accepts(value), value


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_is_email_agrees_with_email_validator_on_anything(value):
    assert is_email(value) == library_accepts(value)


@pytest.mark.parametrize(
    "value",
    [
        "a@b.test",
        "x@localhost",
        "a..b@x.com",
        "a@-x.com",
        "a@x.123",
        "é@x.com",
        "a@xn--zz.com",
        "a" * 65 + "@x.com",
        "0@00--0.AA",  # R-LDH label (RFC 5890): hypothesis found the fast path accepting it
        "a@ab--c.com",
        "a@x.ab--c.com",
    ],
)
def test_edge_emails_match_the_library(value):
    assert is_email(value) == library_accepts(value)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("+14155550123", True),
        ("+447911123456", True),
        ("+15555550100", False),
        ("14155550123", False),
        ("+1 415 555 0123", False),
        ("+1415555012a", False),
    ],
)
def test_phone_numbers_must_be_valid_e164(value, ok):
    assert is_e164(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2000-02-29", True),
        ("1900-02-29", False),
        ("0000-02-29", True),
        ("--02-29", True),
        ("--13-01", False),
        ("1987", True),
        ("87", False),
        ("2000-1-1", False),
    ],
)
def test_birthdate(value, ok):
    assert is_birthdate(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"), [("Europe/Paris", True), ("UTC", True), ("europe/paris", False), ("GMT+1", False)]
)
def test_timezone(value, ok):
    assert is_timezone(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("en", True),
        ("en-US", True),
        ("zh-Hant-TW", True),
        ("en-us", False),
        ("eng", False),
        ("en_US", False),
        ("x", False),
        ("", False),
    ],
)
def test_locale_is_canonical_bcp47(value, ok):
    assert is_bcp47(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("https://a.example/x", True),
        ("http://a", True),
        ("ftp://a", False),
        ("//a.example", False),
        ("https://", False),
        ("https://a b", False),
    ],
)
def test_http_url(value, ok):
    assert is_http_url(value) is ok


@pytest.mark.parametrize(
    ("attribute", "value", "normalized"),
    [
        ("email", "Ada@Example.COM", "ada@example.com"),
        ("email", "\uff3aoë@Bücher.de", "zoë@xn--bcher-kva.de"),  # fullwidth Z folds to z (NFKC)
        ("email", "x@straße.de", "x@xn--strae-oqa.de"),  # IDNA 2008 non-transitional: ß is not ss
        ("email", "x@STRAßE.DE", "x@xn--strae-oqa.de"),
        ("email", "x@strasse.de", "x@strasse.de"),
        ("email", "x@ex_ample.com", "x@ex_ample.com"),  # IDNA refuses it: only lowercased, never raises
        ("phone_number", "+14155550123", "+14155550123"),
        ("preferred_username", "Straße", "strasse"),
        ("preferred_username", "ADA", "ada"),
    ],
)
def test_login_ids_are_matched_on_a_normalized_value(attribute, value, normalized):
    assert normalize_login_id(attribute, value) == normalized


_PHONES = [
    "+14155552671",
    "+1 415 555 2671",
    "(415) 555-2671",
    "+11415552671",
    "+44 07911 123456",
    "+4407911123456",
    "+447911123456",
    "+390612345678",
    "+5491123456789",
    "+54 9 11 2345-6789",
    "tel:555-1234;phone-context=+1415",
    "+1-800-FLOWERS",
    "+14155552671 ext. 12",
    "+١٤١٥٥٥٥٢٦٧١",
    "\uff0b\uff11\uff14\uff11\uff15\uff15\uff15\uff15\uff12\uff16\uff17\uff11",  # fullwidth
    "",
    "+",
    "+0123456",
    "+999123456",
    "+80012345678",
    "+1",
    "+12",
    "+123456789012345678901",
]


def _parsed_e164(value: str) -> str:
    """What normalization gives a phone number without its E.164 shortcut: phonenumbers' own E.164 form."""
    import unicodedata

    value = unicodedata.normalize("NFKC", value)
    try:
        number = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        return value
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


@pytest.mark.parametrize("value", _PHONES)
def test_the_e164_shortcut_gives_what_parsing_gives(value):
    assert normalize_login_id("phone_number", value) == _parsed_e164(value)


@settings(max_examples=many(3000, 1000), deadline=None)  # a first call loads the country's metadata
@given(
    st.sampled_from(sorted(phonenumbers.COUNTRY_CODE_TO_REGION_CODE)),
    st.text("0123456789", max_size=18),
    st.sampled_from(["", "0", "00", "1", "8", "9", "15", "0 "]),
)
def test_the_e164_shortcut_agrees_for_every_country_code(country_code, rest, prefix):
    value = f"+{country_code}{prefix}{rest}"
    assert normalize_login_id("phone_number", value) == _parsed_e164(value)


def _parsed_is_e164(value: str) -> bool:
    """Validity as phonenumbers.parse alone answers it: parsed, valid, and written as its own E.164 form."""
    try:
        number = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        return False
    e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return phonenumbers.is_valid_number(number) and e164 == value and value.startswith("+")


def _example_numbers() -> list[str]:
    numbers = set()
    for region in phonenumbers.SUPPORTED_REGIONS:
        for kind in phonenumbers.PhoneNumberType.values():
            example = phonenumbers.example_number_for_type(region, kind)
            if example is not None:
                numbers.add(phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.E164))
    for code in phonenumbers.COUNTRY_CODES_FOR_NON_GEO_REGIONS:
        example = phonenumbers.example_number_for_non_geo_entity(code)
        if example is not None:
            numbers.add(phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.E164))
    return sorted(numbers)


def test_every_example_number_is_valid_e164_without_parsing_and_with_it():
    examples = _example_numbers()
    assert len(examples) > 1000
    for value in examples:
        assert is_valid_e164(value) == _parsed_is_e164(value) is True, value
        for variant in (value[:-1], value + "0", value[:1] + value[2:], value.replace("+", "+0", 1)):
            assert is_valid_e164(variant) == _parsed_is_e164(variant), variant


@settings(max_examples=many(3000, 1000))
@given(
    st.sampled_from(sorted(phonenumbers.COUNTRY_CODE_TO_REGION_CODE)),
    st.text("0123456789", max_size=18),
    st.sampled_from(["", "0", "00", "1", "8", "9", "15", "0 ", "+"]),
)
def test_e164_validity_without_parsing_agrees_for_every_country_code(country_code, rest, prefix):
    value = f"+{country_code}{prefix}{rest}"
    assert is_valid_e164(value) == _parsed_is_e164(value)


_SHARED_CODES = sorted(code for code, regions in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.items() if len(regions) > 1)


def test_numbers_of_country_codes_that_serve_several_regions_are_typed_as_phonenumbers_types_them():
    """Each region's example numbers with their last digits changed: near the patterns, on both sides of them."""
    checked = valid = 0
    for value in _example_numbers():
        if not any(value.startswith(f"+{code}") for code in _SHARED_CODES):
            continue
        for tail in ("0000", "1234", "5555", "9999", "0199", "4000"):
            for variant in (value[: -len(tail)] + tail, value[:-1], value + "1"):
                ours = is_valid_e164(variant)
                assert ours == _parsed_is_e164(variant), variant
                checked += 1
                valid += ours
    assert checked > 2000
    assert 0 < valid < checked


@settings(max_examples=many(3000, 1000))
@given(st.sampled_from(_SHARED_CODES), st.text("0123456789", min_size=4, max_size=12))
def test_validity_agrees_for_numbers_of_country_codes_that_serve_several_regions(country_code, rest):
    value = f"+{country_code}{rest}"
    assert is_valid_e164(value) == _parsed_is_e164(value)


@pytest.mark.parametrize(
    ("normalized", "key"),
    [
        ("ada@example.com", "ada@example.com"),
        ("+14155550100", "+14155550100"),
        ("+1(415)555-0100", "+14155550100"),  # a username phonenumbers reads as a number: the phone's key
        ("x+14155550100", "+14155550100"),  # as the phone normalization of that typed text finds it
        ("ada+tag@example.com", "ada+tag@example.com"),
        ("user42", "user42"),
        ("AdaL", "AdaL"),  # a case-sensitive project's username: the key folds nothing the project keeps
    ],
)
def test_a_login_key_is_the_normalized_value_or_what_reads_as_a_number(normalized, key):
    assert login_key(normalized) == key
