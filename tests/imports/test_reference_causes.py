"""Per-record errors as the reference reports them: every cause, sorted by location, in its exact shapes.

The expected values are the reference's own (authgear-server `pkg/lib/userimport/model_test.go`,
`TestRecordSchema`), written here as facts; each cause also carries our readable `message`.
"""

from __future__ import annotations

import pytest

from tests.helpers import import_one

BCRYPT = "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
DATE_TIME = {"error": "date-time must be in rfc3339 format", "format": "date-time"}
MISSING_PASSWORD = {"actual": None, "expected": ["password_hash", "type"], "missing": ["password_hash", "type"]}
EMPTY = {"actual": 0, "expected": 1}
EMPTY_SECRETS = {
    "password": {"type": "bcrypt", "password_hash": ""},
    "mfa": {"password": {"type": "bcrypt", "password_hash": ""}, "totp": {"secret": ""}},
}


def cause(location, kind, details=None):
    return {"location": location, "kind": kind} | ({"details": details} if details is not None else {})


CASES = [
    pytest.param(
        "email",
        {"email": "user@example.com", "password": {"unknown": 1}},
        [
            cause(
                "/password",
                "required",
                {"actual": ["unknown"], "expected": ["password_hash", "type"], "missing": ["password_hash", "type"]},
            ),
            cause("/password/unknown", ""),
        ],
        id="unknown key at its own location, required lists every missing key",
    ),
    pytest.param(
        "email",
        {"email": "user@example.com", "password": {"type": "bcrypt", "password_hash": BCRYPT, "expire_after": None}},
        [cause("/password/expire_after", "type", {"actual": ["null"], "expected": ["string"]})],
        id="null expire_after",
    ),
    pytest.param(
        "email",
        {"email": "user@example.com", "password": {"type": "bcrypt", "password_hash": BCRYPT, "expire_after": "2025"}},
        [cause("/password/expire_after", "format", DATE_TIME)],
        id="expire_after not RFC 3339",
    ),
    pytest.param(
        "email",
        {"email": "user@example.com", "mfa": {"unknown": 1}},
        [cause("/mfa/unknown", "")],
        id="unknown mfa key",
    ),
    pytest.param(
        "email",
        {"email": "user@example.com", "mfa": {"totp": {"secret": "a", "unknown": 1}}},
        [cause("/mfa/totp/unknown", "")],
        id="unknown totp key",
    ),
    pytest.param("email", {}, [cause("", "required", {"actual": None, "expected": ["email"], "missing": ["email"]})]),
    pytest.param(
        "phone_number",
        {},
        [cause("", "required", {"actual": None, "expected": ["phone_number"], "missing": ["phone_number"]})],
    ),
    pytest.param(
        "email",
        {"email": "user@example.com", "password": {}, "mfa": {"password": {}, "totp": {}}},
        [
            cause("/mfa/password", "required", MISSING_PASSWORD),
            cause("/mfa/totp", "required", {"actual": None, "expected": ["secret"], "missing": ["secret"]}),
            cause("/password", "required", MISSING_PASSWORD),
        ],
        id="empty objects",
    ),
    pytest.param(
        "email",
        {"email": "", **EMPTY_SECRETS},
        [
            cause("/email", "format", {"error": "invalid email address: mail: no address", "format": "email"}),
            cause("/mfa/password/password_hash", "minLength", EMPTY),
            cause("/mfa/totp/secret", "minLength", EMPTY),
            cause("/password/password_hash", "minLength", EMPTY),
        ],
        id="empty email and secrets",
    ),
    pytest.param(
        "phone_number",
        {"phone_number": "", **EMPTY_SECRETS},
        [
            cause("/mfa/password/password_hash", "minLength", EMPTY),
            cause("/mfa/totp/secret", "minLength", EMPTY),
            cause("/password/password_hash", "minLength", EMPTY),
            cause("/phone_number", "format", {"error": "not in E.164 format", "format": "phone"}),
        ],
        id="empty phone and secrets",
    ),
    pytest.param(
        "preferred_username",
        {"preferred_username": "", **EMPTY_SECRETS},
        [
            cause("/mfa/password/password_hash", "minLength", EMPTY),
            cause("/mfa/totp/secret", "minLength", EMPTY),
            cause("/password/password_hash", "minLength", EMPTY),
            cause("/preferred_username", "minLength", EMPTY),
        ],
        id="empty username and secrets",
    ),
    pytest.param(
        "email",
        {"email": "user@example.com", "account_valid_from": 1, "account_valid_until": 1},
        [
            cause("/account_valid_from", "type", {"actual": ["integer", "number"], "expected": ["string"]}),
            cause("/account_valid_until", "type", {"actual": ["integer", "number"], "expected": ["string"]}),
        ],
        id="account valid period not strings",
    ),
    pytest.param(
        "email",
        {"email": "user@example.com", "account_valid_from": None, "account_valid_until": None},
        [
            cause("/account_valid_from", "type", {"actual": ["null"], "expected": ["string"]}),
            cause("/account_valid_until", "type", {"actual": ["null"], "expected": ["string"]}),
        ],
        id="account valid period null",
    ),
    pytest.param(
        "email",
        {
            "email": "user@example.com",
            "account_valid_from": "2006-01-02T03:04:05",
            "account_valid_until": "2006-01-02T03:04:05",
        },
        [cause("/account_valid_from", "format", DATE_TIME), cause("/account_valid_until", "format", DATE_TIME)],
        id="account valid period without time zone",
    ),
]


@pytest.mark.parametrize(("identifier", "record", "causes"), CASES)
async def test_failed_record_reports_every_cause_sorted_as_the_reference(project, identifier, record, causes):
    detail = await import_one(project, record, identifier=identifier)

    assert detail["outcome"] == "failed"
    (error,) = detail["errors"]
    assert (error["name"], error["reason"]) == ("Invalid", "ValidationFailed")
    reported = error["info"]["causes"]
    assert [{k: v for k, v in c.items() if k != "message"} for c in reported] == causes
    assert all(c["message"] for c in reported)


@pytest.mark.parametrize(
    "record",
    [
        {"email": "user@example.com", "account_valid_from": "2006-01-02T03:04:05Z"},
        {"email": "user@example.com", "account_valid_until": "2006-01-02T03:04:05+08:00"},
        {
            "email": "user@example.com",
            "password": {"type": "bcrypt", "password_hash": BCRYPT, "expire_after": "2006-01-02T03:04:05Z"},
        },
        {
            "email": "user@example.com",
            "name": None,
            "given_name": None,
            "family_name": None,
            "middle_name": None,
            "nickname": None,
            "profile": None,
            "picture": None,
            "website": None,
            "gender": None,
            "birthdate": None,
            "zoneinfo": None,
            "locale": None,
            "address": None,
            "mfa": {"email": None, "phone_number": None},
        },
    ],
)
async def test_records_the_reference_accepts_are_accepted(project, record):
    detail = await import_one(project, record)

    assert detail["outcome"] == "inserted", detail


async def test_phone_format_error_says_e164_is_expected_with_an_example(project):
    detail = await import_one(project, {"email": "ada@example.com", "phone_number": "+44 20 7946 0000"})

    (error,) = detail["errors"]
    (only,) = error["info"]["causes"]
    assert only["location"] == "/phone_number"
    assert "phone_number" in only["message"]
    assert "E.164" in only["message"]
    assert "+14155550123" in only["message"]
    assert error["message"] == only["message"]


async def test_record_message_summarizes_the_first_cause_and_counts_the_rest(project):
    detail = await import_one(project, {"email": "", "name": "", "phone_number": "0"})

    (error,) = detail["errors"]
    first = error["info"]["causes"][0]
    assert first["location"] == "/email"
    assert error["message"] == f"{first['message']} (and 2 more problems)"
    assert error["message"] != "invalid record"


async def test_non_empty_malformed_hash_keeps_its_own_reason_and_names_the_expected_shape(project):
    detail = await import_one(project, {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": "x"}})

    (error,) = detail["errors"]
    assert error["reason"] == "InvalidBcryptHash"
    assert "password.password_hash" in error["message"]
    assert "$2b$10$" in error["message"]


async def test_cause_messages_name_the_field_and_what_is_expected(project):
    detail = await import_one(project, {"email": "a@example.com", "password": {"unknown": 1}, "mfa": {"totp": {}}})

    messages = {c["location"]: c["message"] for c in detail["errors"][0]["info"]["causes"]}
    assert messages == {
        "/mfa/totp": "mfa.totp is missing secret (e.g. JBSWY3DPEHPK3PXP)",
        "/password": "password is missing password_hash (e.g. $2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy)"
        " and type (e.g. bcrypt)",
        "/password/unknown": "password.unknown is not an accepted key; expected one of expire_after, mem_cost,"
        " password_hash, rounds, salt, salt_position, salt_separator, signer_key, type",
    }
