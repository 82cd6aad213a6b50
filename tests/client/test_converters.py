"""`--from auth0` and `--from cognito-csv`: conversion of real-format exports, and imports from them end to end."""

from __future__ import annotations

import io
import json
import shutil
import uuid

import bcrypt
import msgspec
import pytest

from litestar_userio.imports.import_schemas import UserRecord
from tests.client.conftest import FIXTURES, Deployment, read_report
from userio_client.reader import CSVRows
from userio_client.sources import COGNITO_HEADER, ConversionError, auth0_record, cognito_record

AUTH0 = FIXTURES / "auth0_users.ndjson"
COGNITO = FIXTURES / "cognito_users.csv"


def auth0_users() -> list[dict]:
    return [json.loads(line) for line in AUTH0.read_text().splitlines()]


def cognito_rows() -> list[dict[str, str]]:
    return [row.values for row in CSVRows(io.BytesIO(COGNITO.read_bytes()))]


def accepted(record: dict) -> UserRecord:
    """Decode as the server does (unknown keys refused): the converter keeps only what our API accepts."""
    return msgspec.json.decode(msgspec.json.encode(record), type=UserRecord)


def test_auth0_export_converts_to_records_the_api_accepts():
    users = auth0_users()
    assert len(users) >= 10
    for user in users:
        accepted(auth0_record(user))
        accepted(auth0_record(user, upsert=True))


def test_auth0_mapping():
    users = {u.get("email") or u.get("phone_number"): u for u in auth0_users()}
    assert auth0_record(users["jose.garcia@example.es"]) == {
        "email": "jose.garcia@example.es",
        "email_verified": True,
        "preferred_username": "jgarcia",
        "name": "José García",
        "given_name": "José",
        "family_name": "García",
        "nickname": "pepe",
        "picture": "https://cdn.example.es/avatars/jose.png",
        "custom_attributes": {
            "plan": "team",
            "company": "Ñandú S.L.",
            "auth0_user_id": "auth0|64a1f0c2e8b7a3d2c1f00003",
        },
        "roles": ["editor"],
        "groups": ["staff"],
        "password": {"type": "bcrypt", "password_hash": "$2b$10$Mxi3d56HFjl/pXGsh8CzzugxlwNAbIFTk6FZ8wdyh8WqT/BytLsga"},
    }
    blocked = auth0_record(users["blocked.user@example.com"])
    assert blocked["disabled"] is True
    unverified = users["zoe.muller@example.de"]
    assert "email_verified" not in auth0_record(unverified)  # false is the insert default: no warning per record
    assert auth0_record(unverified, upsert=True)["email_verified"] is False
    assert auth0_record(users["+14155550104"])["phone_number_verified"] is True
    # The support password export: Mongo-style id, passwordHash.
    ken = auth0_record(users["ken.thompson@example.com"])
    assert ken["custom_attributes"] == {"auth0_user_id": "auth0|64a1f0c2e8b7a3d2c1f00012"}
    assert ken["password"]["password_hash"].startswith("$2b$10$")
    # What our API does not take stays out: timestamps, identities, counters, MFA enrolments, app_metadata.
    soren = auth0_record(users["soren.overgaard@example.dk"])
    assert set(soren) == {
        "email", "email_verified", "preferred_username", "name", "given_name", "family_name", "nickname", "picture",
        "custom_attributes", "roles", "password",
    }  # fmt: skip
    assert soren["custom_attributes"] == {"plan": "pro", "seats": 12, "auth0_user_id": "auth0|64a1f0c2e8b7a3d2c1f00008"}


def test_a_hash_of_no_import_format_is_dropped_and_others_are_carried():
    record = auth0_record({"email": "a@x.com", "custom_password_hash": {"algorithm": "hmac", "hash": {"value": "x"}}})
    assert "password" not in record
    md5 = {"algorithm": "md5", "hash": {"value": "5f4d"}, "salt": {"value": "s", "position": "prefix"}}
    assert auth0_record({"email": "a@x.com", "custom_password_hash": md5})["password"] == {
        "type": "md5",
        "password_hash": "5f4d",
        "salt": "s",
        "salt_position": "prefix",
    }


def test_cognito_header_is_the_real_one():
    assert CSVRows(io.BytesIO(COGNITO.read_bytes())).header[: len(COGNITO_HEADER)] == list(COGNITO_HEADER)


def test_cognito_export_converts_to_records_the_api_accepts():
    rows = cognito_rows()
    assert len(rows) >= 10
    for row in rows:
        accepted(cognito_record(row))


def test_cognito_mapping():
    rows = {row["email"]: row for row in cognito_rows()}
    assert cognito_record(rows["ada@example.com"]) == {
        "name": "Ada Lovelace",
        "given_name": "Ada",
        "family_name": "Lovelace",
        "nickname": "ada",
        "preferred_username": "ada",
        "picture": "https://cdn.example.com/ada.png",
        "website": "https://ada.example.com",
        "email": "ada@example.com",
        "gender": "female",
        "birthdate": "1815-12-10",
        "zoneinfo": "Europe/London",
        "locale": "en-GB",
        "phone_number": "+447911123456",
        "email_verified": True,
        "phone_number_verified": True,
        "address": {"formatted": "12 St James's Square\nLondon SW1Y 4JH\nUnited Kingdom"},
        "custom_attributes": {
            "plan": "pro",
            "company": "Analytical Engines Ltd",
            "tenant_id": "t-001",
            "cognito_username": "3f9c2a4e-5b1d-4e8f-9a7c-0d1e2f3a4b5c",
        },
        "password": {"type": "migrate_on_sign_in"},
    }
    zoe = cognito_record(rows["zoe.mueller@example.de"])  # empty cells are absent
    assert zoe == {
        "name": "Zoë Müller",
        "given_name": "Zoë",
        "family_name": "Müller",
        "email": "zoe.mueller@example.de",
        "zoneinfo": "Europe/Berlin",
        "locale": "de-DE",
        "custom_attributes": {
            "plan": "free",
            "tenant_id": "t-002",
            "cognito_username": "8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d",
        },
        "password": {"type": "migrate_on_sign_in"},
    }
    assert cognito_record(rows["zoe.mueller@example.de"], upsert=True)["email_verified"] is False


def test_cognito_boolean_must_be_true_or_false():
    with pytest.raises(ConversionError, match="TRUE or FALSE"):
        cognito_record({"email": "a@x.com", "email_verified": "yes"})


async def test_import_from_auth0(deployment: Deployment, tmp_path):
    project = await deployment.make_project()
    args = ("--from", "auth0", *project.args(deployment))

    first = deployment.cli("import", str(AUTH0), *args, cwd=tmp_path)

    # The one SMS user has no email, the identifier: it fails, and comes back as Auth0 wrote it.
    assert first.returncode == 1, first.stderr
    report = read_report(tmp_path / "report.ndjson")
    assert [d["outcome"] for _, d in sorted(report.details.items())].count("inserted") == 11
    sms_line = [line for line in AUTH0.read_bytes().splitlines(keepends=True) if b'"sms|' in line]
    assert (tmp_path / "failed.ndjson").read_bytes() == sms_line[0]

    # Resubmitted as is, with the identifier it has.
    second = deployment.cli(
        "import", "failed.ndjson", *args, "--identifier", "phone_number", "--report", "r2.ndjson", "--failed", "f2.ndjson",
        cwd=tmp_path,
    )  # fmt: skip

    assert second.returncode == 0, second.stderr
    assert await deployment.user_count(project) == 12
    rows = await deployment.fetch(
        "SELECT u.id, u.is_disabled, u.custom_attributes FROM userio_user u JOIN userio_identity i ON i.user_id = u.id"
        " WHERE u.project_id = $1 AND i.login_id_key = 'email' AND i.original_value = $2",
        project.id,
        "ada.lovelace@example.com",
    )
    ada = rows[0]
    assert json.loads(ada["custom_attributes"]) == {
        "plan": "pro",
        "newsletter": True,
        "auth0_user_id": "auth0|64a1f0c2e8b7a3d2c1f00001",
    }
    hashes = await deployment.fetch(
        "SELECT password_hash FROM userio_authenticator WHERE user_id = $1 AND type = 'password'", ada["id"]
    )
    assert bcrypt.checkpw(b"correct horse battery staple", hashes[0]["password_hash"].encode())
    roles = await deployment.fetch("SELECT role_id FROM userio_user_role WHERE user_id = $1", ada["id"])
    assert len(roles) == 1
    blocked = await deployment.fetch(
        "SELECT u.is_disabled FROM userio_user u JOIN userio_identity i ON i.user_id = u.id"
        " WHERE u.project_id = $1 AND i.original_value = 'blocked.user@example.com'",
        project.id,
    )
    assert bool(blocked[0]["is_disabled"]) is True


async def test_import_from_cognito_csv(deployment: Deployment, tmp_path):
    project = await deployment.make_project()
    source = tmp_path / "cognito.csv"
    shutil.copy(COGNITO, source)
    broken = "Bad Phone,Bad,Phone,,,,,,,bad.phone@example.com,TRUE,,,,,+1 (415) 555,TRUE,,1700002000,FALSE,x-1,,,\n"
    with source.open("a") as file:
        file.write(broken)

    result = deployment.cli("import", "cognito.csv", "--from", "cognito-csv", *project.args(deployment), cwd=tmp_path)

    assert result.returncode == 1, result.stderr
    report = read_report(tmp_path / "report.ndjson")
    outcomes = [d["outcome"] for _, d in sorted(report.details.items())]
    assert outcomes == ["inserted"] * 12 + ["failed"]
    # The failed file is a Cognito CSV again (header + the row as read): fix it and resubmit with --from.
    header = COGNITO.read_bytes().split(b"\n", 1)[0] + b"\n"
    assert (tmp_path / "failed.csv").read_bytes() == header + broken.encode()
    assert await deployment.user_count(project) == 12
    rows = await deployment.fetch(
        "SELECT u.standard_attributes, u.custom_attributes FROM userio_user u JOIN userio_identity i"
        " ON i.user_id = u.id WHERE u.project_id = $1 AND i.original_value = 'jose.garcia@example.es'",
        project.id,
    )
    standard = json.loads(rows[0]["standard_attributes"])
    assert standard["address"] == {"formatted": "Calle Mayor 1, 28013 Madrid, España"}
    assert standard["middle_name"] == "Luis"
    assert json.loads(rows[0]["custom_attributes"]) == {
        "plan": "team",
        "company": "Ñandú, S.L.",
        "tenant_id": "t-001",
        "cognito_username": "jgarcia",
    }
    waiting = await deployment.fetch(
        "SELECT count(*) AS n FROM userio_authenticator a JOIN userio_user u ON u.id = a.user_id"
        " WHERE u.project_id = $1 AND a.kind = 'primary' AND a.password_hash = $2",
        project.id,
        '{"type":"migrate_on_sign_in"}',
    )
    assert waiting[0]["n"] == 12  # every user waits for lazy migration (DECISIONS 13)


# Supabase, Clerk and our own export: fixtures in the real formats.

SUPABASE = FIXTURES / "supabase_users.csv"
CLERK = FIXTURES / "clerk_users.csv"
USERIO_EXPORT = FIXTURES / "userio_export.ndjson"


def csv_rows(path) -> list[dict[str, str]]:
    return [row.values for row in CSVRows(io.BytesIO(path.read_bytes()))]


def test_supabase_header_is_auth_users_and_rows_convert_to_records_the_api_accepts():
    from userio_client.sources import SUPABASE_HEADER, supabase_record

    assert CSVRows(io.BytesIO(SUPABASE.read_bytes())).header == list(SUPABASE_HEADER)
    for row in csv_rows(SUPABASE):
        accepted(supabase_record(row))
        accepted(supabase_record(row, upsert=True))


def test_supabase_mapping_and_warnings():
    from userio_client.sources import supabase_record

    ada, _, phone, google, banned = csv_rows(SUPABASE)
    warnings: list[dict[str, str]] = []

    assert supabase_record(ada) == {
        "email": "ada@example.com",
        "email_verified": True,
        "name": "Ada Lovelace",
        "custom_attributes": {"plan": "pro", "supabase_user_id": ada["id"]},
        "password": {"type": "bcrypt", "password_hash": ada["encrypted_password"]},
    }
    assert supabase_record(phone)["phone_number"] == "+447911123456"
    assert supabase_record(phone)["phone_number_verified"] is True
    converted = supabase_record(google, warnings=warnings)
    assert (converted["name"], converted["picture"]) == ("Ngozi Okafor", "https://lh3.googleusercontent.com/a/ngozi")
    assert converted["custom_attributes"] == {"supabase_user_id": google["id"]}
    assert converted["identities"] == [
        {
            "type": "oauth",
            "provider_alias": "google",
            "subject": "10829384756",
            "claims": {
                "email": "ngozi@gmail.example",
                "name": "Ngozi Okafor",
                "picture": "https://lh3.googleusercontent.com/a/ngozi",
            },
        }
    ]
    assert [w["kind"] for w in warnings] == ["dropped:created_at"]
    assert supabase_record(banned)["disabled"] is True


def test_clerk_header_is_the_dashboard_export_and_rows_convert_to_records_the_api_accepts():
    from userio_client.sources import CLERK_HEADER, clerk_record

    assert CSVRows(io.BytesIO(CLERK.read_bytes())).header == list(CLERK_HEADER)
    for row in csv_rows(CLERK):
        accepted(clerk_record(row))
        accepted(clerk_record(row, upsert=True))


def test_clerk_mapping_and_warnings():
    from userio_client.sources import clerk_record

    ada, grace, soren, ken = csv_rows(CLERK)
    warnings: list[dict[str, str]] = []

    assert clerk_record(ada) == {
        "preferred_username": "ada",
        "email": "ada@example.com",
        "email_verified": True,
        "given_name": "Ada",
        "family_name": "Lovelace",
        "name": "Ada Lovelace",
        "password": {"type": "bcrypt", "password_hash": ada["password_digest"]},
        "custom_attributes": {"clerk_user_id": ada["id"]},
    }
    assert clerk_record(grace, warnings=warnings)["password"] == {
        "type": "argon2",
        "password_hash": grace["password_digest"],
    }
    assert [w["kind"] for w in warnings] == ["extra_login_id_not_carried"]
    assert clerk_record(soren)["mfa"] == {"totp": {"secret": "JBSWY3DPEHPK3PXP"}}
    assert "email_verified" not in clerk_record(soren)
    assert clerk_record(ken)["phone_number_verified"] is True


def test_our_export_converts_back_to_records_the_api_accepts():
    from userio_client.sources import userio_record

    ada, grace, ken = [json.loads(line) for line in USERIO_EXPORT.read_text().splitlines()]
    warnings: list[dict[str, str]] = []

    for document in (ada, grace, ken):
        accepted(userio_record(document))
    assert userio_record(ada) == {
        "email": "ada@example.com",
        "email_verified": True,
        "name": "Ada Lovelace",
        "given_name": "Ada",
        "family_name": "Lovelace",
        "roles": ["admin"],
        "groups": ["staff"],
        "custom_attributes": {"plan": "pro", "userio_user_id": ada["sub"]},
    }
    assert userio_record(grace)["mfa"] == {"phone_number": "+12025550110", "totp": {"secret": "JBSWY3DPEHPK3PXP"}}
    assert userio_record(grace)["address"] == {"locality": "Arlington", "country": "US"}
    assert userio_record(ken, warnings=warnings)["disabled"] is True
    assert [w["kind"] for w in warnings] == ["password_not_carried", "mfa_not_carried"]


def test_auth0_carries_social_identities_and_warns_for_saml_and_every_dropped_member():
    google = {
        "email": "g@example.com",
        "created_at": "2023-01-01T00:00:00.000Z",
        "last_login": "2024-01-01T00:00:00.000Z",
        "logins_count": 3,
        "app_metadata": {"roles": ["editor"], "plan_id": 7},
        "identities": [
            {"provider": "google-oauth2", "user_id": "1093", "profileData": {"email": "g@gmail.com"}},
            {"provider": "samlp", "user_id": "corp|9"},
            {"provider": "auth0", "user_id": "64a1"},
        ],
    }
    warnings: list[dict[str, str]] = []

    record = auth0_record(google, warnings=warnings)

    assert record["identities"] == [
        {"type": "oauth", "provider_alias": "google", "subject": "1093", "claims": {"email": "g@gmail.com"}}
    ]
    assert sorted(w["kind"] for w in warnings) == [
        "dropped:app_metadata.plan_id",
        "dropped:created_at",
        "dropped:last_login",
        "dropped:logins_count",
        "social_identity_not_carried",
    ]
    assert "samlp identity corp|9" in next(w["message"] for w in warnings if w["kind"].startswith("social"))


async def test_auth0_ids_are_kept_as_sub_unless_new_ids(deployment: Deployment, tmp_path):
    project = await deployment.make_project()
    tag = uuid.uuid4().hex[:12]  # ids are unique in a deployment: this test's own
    users = [{"user_id": f"auth0|{tag}{i}", "email": f"kept{i}-{tag}@example.com"} for i in range(2)]
    users.append({"user_id": f"email|not valid {tag}", "email": f"new-{tag}@example.com"})
    (tmp_path / "auth0.ndjson").write_text("".join(json.dumps(u) + "\n" for u in users))
    (tmp_path / "again.ndjson").write_text(json.dumps({"user_id": f"auth0|{tag}x", "email": f"x-{tag}@example.com"}))

    kept = deployment.cli("import", "auth0.ndjson", "--from", "auth0", *project.args(deployment), cwd=tmp_path)
    fresh = deployment.cli("import", "again.ndjson", "--from", "auth0", "--new-ids", *project.args(deployment),
                           "--report", "r2.ndjson", "--failed", "f2.ndjson", cwd=tmp_path)  # fmt: skip

    assert kept.returncode == 0, kept.stderr
    ids = [d["user_id"] for _, d in sorted(read_report(tmp_path / "report.ndjson").details.items())]
    assert ids[:2] == [f"auth0|{tag}0", f"auth0|{tag}1"]
    assert uuid.UUID(ids[2])  # not a valid sub: a new id, and a warning that says so
    assert "ids: 2 records sent with the old system's id as sub" in kept.stderr
    summary = json.loads((tmp_path / "report.failures.json").read_text())
    assert {w["kind"]: w["count"] for w in summary["warnings"]}["id_not_kept"] == 1
    rows = await deployment.fetch("SELECT id FROM userio_user WHERE project_id = $1 ORDER BY id", project.id)
    assert {r["id"] for r in rows} >= set(ids[:2])
    assert fresh.returncode == 0, fresh.stderr
    [(_, detail)] = read_report(tmp_path / "r2.ndjson").details.items()
    assert uuid.UUID(detail["user_id"]) and "ids:" not in fresh.stderr
