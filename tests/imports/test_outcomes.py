"""Per-record outcomes, errors, warnings and redaction (SPEC 2.1, DECISIONS 3)."""

from __future__ import annotations

import pytest

from litestar_userio.passwords.formats import PASSWORD_TYPES
from litestar_userio.projects.settings import ProjectSettings
from tests.helpers import HASH_2B, TOTP_SECRET, authenticators, identities, import_one, memberships


def warnings_of(detail):
    return [w["message"] for w in detail.get("warnings", [])]


def without_messages(causes):
    """The causes in the reference's shape; each must carry a message of its own."""
    assert all(isinstance(c.get("message"), str) and c["message"] for c in causes), causes
    return [{k: v for k, v in c.items() if k != "message"} for c in causes]


# Outcomes.


async def test_inserted_detail_has_user_id_and_the_user_exists(project):
    detail = await import_one(project, {"email": "a@example.com", "name": "Ada"})

    assert detail["outcome"] == "inserted"
    assert await identities(project, detail["user_id"]) == {"email": "a@example.com"}


async def test_existing_user_without_upsert_is_skipped_with_warning(project):
    first = await import_one(project, {"email": "a@example.com", "name": "Ada"})

    detail = await import_one(project, {"email": "a@example.com", "name": "Bob"})

    assert detail["outcome"] == "skipped"
    assert detail["user_id"] == first["user_id"]
    assert warnings_of(detail) == ["skipping because upsert = false and user exists"]
    rows = await project.fetch("SELECT standard_attributes FROM userio_user WHERE id = $1", first["user_id"])
    assert '"Ada"' in rows[0]["standard_attributes"]


async def test_existing_user_with_upsert_is_updated(project):
    first = await import_one(project, {"email": "a@example.com", "name": "Ada"})

    detail = await import_one(project, {"email": "a@example.com", "name": "Bob"}, upsert=True)

    assert detail["outcome"] == "updated"
    assert detail["user_id"] == first["user_id"]


async def test_failed_detail_has_errors_and_no_user_id(project):
    detail = await import_one(project, {"email": "nope"})

    assert detail["outcome"] == "failed"
    assert "user_id" not in detail
    assert detail["errors"] == [
        {
            "name": "Invalid",
            "reason": "ValidationFailed",
            "message": "email must be an email address, e.g. ada@example.com. An email address must have an @-sign.",
            "code": 400,
            "info": {
                "causes": [
                    {
                        "location": "/email",
                        "kind": "format",
                        "details": {
                            "error": "invalid email address: An email address must have an @-sign.",
                            "format": "email",
                        },
                        "message": "email must be an email address, e.g. ada@example.com."
                        " An email address must have an @-sign.",
                    }
                ]
            },
        }
    ]


@pytest.mark.engine
@pytest.mark.parametrize("identifier", ["email", "phone_number", "preferred_username"])
async def test_each_identifier_finds_the_existing_user(project, identifier):
    record = {"email": "a@example.com", "phone_number": "+14155550123", "preferred_username": "ada"}
    first = await import_one(project, record, identifier=identifier)

    detail = await import_one(project, {identifier: record[identifier]}, identifier=identifier)

    assert (detail["outcome"], detail["user_id"]) == ("skipped", first["user_id"])


@pytest.mark.engine
async def test_identifier_matches_on_the_normalized_value(project):
    first = await import_one(project, {"email": "ada@example.com"})

    detail = await import_one(project, {"email": "ADA@Example.COM", "name": "Ada"}, upsert=True)

    assert (detail["outcome"], detail["user_id"]) == ("updated", first["user_id"])


async def test_record_without_the_identifier_fails(project):
    detail = await import_one(project, {"phone_number": "+14155550123"}, identifier="email")

    assert detail["errors"][0]["reason"] == "ValidationFailed"
    assert without_messages(detail["errors"][0]["info"]["causes"]) == [
        {
            "location": "",
            "kind": "required",
            "details": {"actual": ["phone_number"], "expected": ["email"], "missing": ["email"]},
        }
    ]


# Validation errors (DECISIONS 3 "Formats"), in the reference's cause shapes (userimport/model_test.go).

PHONE = {"error": "not in E.164 format", "format": "phone"}
EMAIL = {"error": "invalid email address: An email address must have an @-sign.", "format": "email"}


@pytest.mark.parametrize(
    ("record", "cause"),
    [
        ({"email": "a@example.com", "phone_number": "0412345678"}, ("/phone_number", "format", PHONE)),
        (
            {"email": "a@example.com", "phone_number": "+1 415 555 0123"},
            ("/phone_number", "format", PHONE),
        ),
        (
            {"email": "a@example.com", "birthdate": "1990-02-30"},
            ("/birthdate", "format", {"error": "not a valid birthdate", "format": "birthdate"}),
        ),
        (
            {"email": "a@example.com", "birthdate": "1990/01/01"},
            ("/birthdate", "format", {"error": "not a valid birthdate", "format": "birthdate"}),
        ),
        (
            {"email": "a@example.com", "zoneinfo": "Mars/Olympus"},
            ("/zoneinfo", "format", {"error": "not a valid timezone", "format": "timezone"}),
        ),
        (
            {"email": "a@example.com", "locale": "en_us"},
            ("/locale", "format", {"error": "not a valid bcp47", "format": "bcp47"}),
        ),
        (
            {"email": "a@example.com", "website": "ftp://x.example"},
            ("/website", "format", {"error": "not a valid uri", "format": "uri"}),
        ),
        (
            {"email": "a@example.com", "picture": "/relative.png"},
            ("/picture", "format", {"error": "not a valid uri", "format": "uri"}),
        ),
        ({"email": "a@example.com", "name": ""}, ("/name", "minLength", {"expected": 1, "actual": 0})),
        ({"email": "a@example.com", "phone_number": ""}, ("/phone_number", "format", PHONE)),
        (
            {"email": "a@example.com", "password": None},
            ("/password", "type", {"expected": ["object"], "actual": ["null"]}),
        ),
        (
            {"email": "a@example.com", "mfa": {"password": None}},
            ("/mfa/password", "type", {"expected": ["object"], "actual": ["null"]}),
        ),
        (
            {"email": "a@example.com", "mfa": {"totp": None}},
            ("/mfa/totp", "type", {"expected": ["object"], "actual": ["null"]}),
        ),
        (
            {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": ""}},
            ("/password/password_hash", "minLength", {"expected": 1, "actual": 0}),
        ),
        (
            {"email": "a@example.com", "mfa": {"totp": {"secret": ""}}},
            ("/mfa/totp/secret", "minLength", {"expected": 1, "actual": 0}),
        ),
        (
            {"email": "a@example.com", "address": {"country": ""}},
            ("/address/country", "minLength", {"expected": 1, "actual": 0}),
        ),
        (
            {"email": "a@example.com", "name": 7},
            ("/name", "type", {"expected": ["null", "string"], "actual": ["integer", "number"]}),
        ),
        (
            {"email": "a@example.com", "disabled": "yes"},
            ("/disabled", "type", {"expected": ["boolean"], "actual": ["string"]}),
        ),
        (
            {"email": "a@example.com", "roles": "admin"},
            ("/roles", "type", {"expected": ["array"], "actual": ["string"]}),
        ),
        (
            {"email": "a@example.com", "roles": ["bad key"]},
            ("/roles/0", "pattern", {"pattern": "[a-zA-Z_][a-zA-Z0-9:_]{0,39}"}),
        ),
        ({"email": "a@example.com", "nickname_typo": "x"}, ("/nickname_typo", "", None)),
        (
            {"email": "a@example.com", "address": {"city": "x"}},
            ("/address/city", "", None),
        ),
        (
            {"email": "a@example.com", "password": {"type": "sha3", "password_hash": "x"}},
            ("/password/type", "enum", {"expected": list(PASSWORD_TYPES), "actual": "sha3"}),
        ),
        (
            {"email": "a@example.com", "password": {"type": "bcrypt"}},
            (
                "/password",
                "required",
                {"actual": ["type"], "expected": ["password_hash", "type"], "missing": ["password_hash"]},
            ),
        ),
        ({"email": "a@example.com", "mfa": {"email": "nope"}}, ("/mfa/email", "format", EMAIL)),
        (
            {"email": "a@example.com", "mfa": {"phone_number": "123"}},
            ("/mfa/phone_number", "format", PHONE),
        ),
    ],
)
async def test_invalid_values_fail_with_a_cause(project, record, cause):
    detail = await import_one(project, record)

    assert detail["outcome"] == "failed"
    (error,) = detail["errors"]
    assert (error["name"], error["reason"]) == ("Invalid", "ValidationFailed")
    location, kind, details = cause
    expected = {"location": location, "kind": kind} | ({"details": details} if details is not None else {})
    assert without_messages(error["info"]["causes"]) == [expected]
    assert error["message"] == error["info"]["causes"][0]["message"]


@pytest.mark.parametrize(
    "record",
    [
        {"birthdate": "0000-02-29"},
        {"birthdate": "--12-24"},
        {"birthdate": "1987"},
        {"zoneinfo": "Asia/Tokyo"},
        {"locale": "zh-Hant-HK"},
        {"website": "https://ada.example/~me?x=1"},
        {"phone_number": "+447911123456"},
        {"gender": "non-binary"},
        {"name": "Zoë 🌈", "address": {"formatted": "1 Rue\nParis", "country": "FR"}},
    ],
)
async def test_valid_values_are_accepted(project, record):
    detail = await import_one(project, {"email": "a@example.com", **record})

    assert detail["outcome"] == "inserted", detail


@pytest.mark.parametrize(
    "password_hash", ["plain", "$2b$03$" + "a" * 53, "$2x$10$" + "a" * 53, HASH_2B[:-1], HASH_2B + "a", "$1$abc$def"]
)
async def test_malformed_bcrypt_hash_fails_with_invalid_bcrypt_hash(project, password_hash):
    detail = await import_one(
        project, {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": password_hash}}
    )

    (error,) = detail["errors"]
    assert (error["name"], error["reason"]) == ("Invalid", "InvalidBcryptHash")
    assert password_hash not in str(detail)


@pytest.mark.parametrize("secret", ["jbswy3dpehpk3pxp", "JBSWY3DP=", "JBSWY3DPEHPK3PX1", "A"])
async def test_malformed_totp_secret_fails_with_invalid_totp_secret(project, secret):
    detail = await import_one(project, {"email": "a@example.com", "mfa": {"totp": {"secret": secret}}})

    (error,) = detail["errors"]
    assert (error["name"], error["reason"]) == ("Invalid", "InvalidTOTPSecret")
    assert detail["record"]["mfa"]["totp"]["secret"] == "REDACTED"


@pytest.mark.engine
async def test_login_id_of_another_user_fails_with_duplicated_identity(project):
    await import_one(project, {"email": "a@example.com", "phone_number": "+14155550123"})

    detail = await import_one(project, {"email": "b@example.com", "phone_number": "+14155550123"})

    (error,) = detail["errors"]
    assert (error["name"], error["reason"], error["code"]) == ("Invalid", "InvariantViolated", 400)
    assert error["info"] == {"cause": {"kind": "DuplicatedIdentity"}}  # DECISIONS 3, ref
    assert (
        await project.fetch(
            "SELECT id FROM userio_identity WHERE project_id = $1 AND normalized_value = 'b@example.com'", project.id
        )
        == []
    )


async def test_unknown_roles_and_groups_fail_with_their_keys(env):
    project = await env.make_project(roles=("admin",))

    roles = await import_one(project, {"email": "a@example.com", "roles": ["admin", "zeta", "alpha"]})
    groups = await import_one(project, {"email": "b@example.com", "groups": ["staff"]})

    assert roles["errors"] == [
        {
            "name": "NotFound",
            "reason": "RoleUnknownKeys",
            "message": "unknown role keys: alpha, zeta; define them with `litestar userio roles add --project PROJECT"
            " KEY...`, or let the import create them: `litestar userio project configure --project PROJECT --set"
            " create_unknown_roles_on_import=true`",
            "code": 404,
            "info": {"keys": ["alpha", "zeta"]},
        }
    ]
    assert groups["errors"][0]["reason"] == "GroupUnknownKeys"
    assert groups["errors"][0]["info"] == {"keys": ["staff"]}


async def test_project_may_create_unknown_roles_and_groups_on_import(env):
    project = await env.make_project(
        ProjectSettings(create_unknown_roles_on_import=True, create_unknown_groups_on_import=True)
    )

    detail = await import_one(project, {"email": "a@example.com", "roles": ["editor"], "groups": ["staff", "eu"]})

    assert detail["outcome"] == "inserted"
    assert await memberships(project, detail["user_id"], "role") == {"editor"}
    assert await memberships(project, detail["user_id"], "group") == {"staff", "eu"}


async def test_a_failed_record_changes_nothing(project):
    """Atomic records: a record failing on its roles leaves the user exactly as it was."""
    first = await import_one(project, {"email": "a@example.com", "name": "Ada", "phone_number": "+14155550123"})

    detail = await import_one(
        project, {"email": "a@example.com", "name": "Bob", "phone_number": None, "roles": ["x"]}, upsert=True
    )

    assert detail["outcome"] == "failed"
    assert await identities(project, first["user_id"]) == {"email": "a@example.com", "phone": "+14155550123"}
    rows = await project.fetch("SELECT standard_attributes FROM userio_user WHERE id = $1", first["user_id"])
    assert '"Ada"' in rows[0]["standard_attributes"]


# Redaction (SPEC 2.1).


async def test_every_secret_is_redacted_in_the_echo_and_kept_in_the_database(project):
    record = {
        "email": "a@example.com",
        "password": {"type": "bcrypt", "password_hash": HASH_2B},
        "mfa": {
            "password": {"type": "bcrypt", "password_hash": HASH_2B},
            "totp": {"secret": TOTP_SECRET},
            "email": "m@example.com",
        },
    }

    detail = await import_one(project, record)

    assert detail["record"] == {
        "email": "a@example.com",
        "password": {"type": "bcrypt", "password_hash": "REDACTED"},
        "mfa": {
            "password": {"type": "bcrypt", "password_hash": "REDACTED"},
            "totp": {"secret": "REDACTED"},
            "email": "m@example.com",
        },
    }
    assert await authenticators(project, detail["user_id"]) == [
        ("primary", "password", HASH_2B),
        ("secondary", "oob_otp_email", "m@example.com"),
        ("secondary", "password", HASH_2B),
        ("secondary", "totp", TOTP_SECRET),
    ]


async def test_secrets_are_redacted_in_failed_records_too(project):
    detail = await import_one(project, {"email": "bad", "password": {"type": "bcrypt", "password_hash": HASH_2B}})

    assert detail["record"]["password"]["password_hash"] == "REDACTED"


# Warnings (exact texts, DECISIONS 3).


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"email_verified": False}, ["email_verified = false has no effect in insert."]),
        ({"phone_number_verified": False}, ["phone_number_verified = false has no effect in insert."]),
        ({"phone_number": None}, ["phone_number = null has no effect in insert."]),
        ({"preferred_username": None}, ["preferred_username = null has no effect in insert."]),
        ({"mfa": {"email": None}}, ["mfa.email = null has no effect in insert."]),
        ({"mfa": {"phone_number": None}}, ["mfa.phone_number = null has no effect in insert."]),
        ({"disabled": False}, ["disabled = false has no effect in insert."]),
        ({"phone_number_verified": True}, ["phone_number_verified = true has no effect when phone_number is absent."]),
        ({"email_verified": True}, []),
        ({"disabled": True, "phone_number": "+14155550123", "phone_number_verified": True}, []),
    ],
)
async def test_insert_warnings(project, record, expected):
    detail = await import_one(project, {"email": "a@example.com", **record})

    assert detail["outcome"] == "inserted"
    assert warnings_of(detail) == expected


async def test_email_verified_true_without_email_warns_on_insert(project):
    detail = await import_one(
        project, {"preferred_username": "ada", "email_verified": True}, identifier="preferred_username"
    )

    assert warnings_of(detail) == ["email_verified = true has no effect when email is absent."]


async def test_email_null_warns_on_insert(project):
    detail = await import_one(project, {"preferred_username": "ada", "email": None}, identifier="preferred_username")

    assert warnings_of(detail) == ["email = null has no effect in insert."]


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"email_verified": True}, ["email_verified has no effect when email is absent."]),
        ({"email": None, "email_verified": True}, ["email_verified has no effect when email = null."]),
        ({"phone_number_verified": True}, ["phone_number_verified has no effect when phone_number is absent."]),
        (
            {"phone_number": None, "phone_number_verified": False},
            ["phone_number_verified has no effect when phone_number = null."],
        ),
        (
            {"password": {"type": "bcrypt", "password_hash": HASH_2B}},
            ["password is ignored because the user already exists."],
        ),
        (
            {"mfa": {"password": {"type": "bcrypt", "password_hash": HASH_2B}}},
            ["mfa.password is ignored because the user already exists."],
        ),
        ({"mfa": {"totp": {"secret": TOTP_SECRET}}}, ["mfa.totp is ignored because the user already exists."]),
    ],
)
async def test_upsert_warnings(project, record, expected):
    await import_one(project, {"preferred_username": "ada", "email": "a@example.com"}, identifier="preferred_username")

    detail = await import_one(
        project, {"preferred_username": "ada", **record}, identifier="preferred_username", upsert=True
    )

    assert detail["outcome"] == "updated"
    assert warnings_of(detail) == expected


async def test_undeclared_custom_attribute_warns_when_the_project_declares_some(env, project):
    from litestar_userio.users.custom_attributes import CustomAttributeSpec

    await env.services.projects.declare_custom_attribute(
        project.id, CustomAttributeSpec("tier", "enum", enum=("gold", "silver"))
    )

    detail = await import_one(project, {"email": "a@example.com", "custom_attributes": {"tier": "gold", "x": 1}})

    assert warnings_of(detail) == ["custom_attributes.x is not declared in the project, so it is ignored."]
    rows = await project.fetch("SELECT custom_attributes FROM userio_user WHERE id = $1", detail["user_id"])
    assert rows[0]["custom_attributes"] in ('{"tier": "gold"}', '{"tier":"gold"}')
