"""`--from firebase`, `keycloak`, `django`, `kratos` (issue 28): every hash a source gives in its DECISIONS 12 shape,
linked identities, every dropped member named; and an import from one of them end to end."""

from __future__ import annotations

import base64
import hashlib
import io
import json

import bcrypt
import msgspec

from litestar_userio.imports.import_schemas import UserRecord
from tests.client.conftest import FIXTURES, Deployment, read_report
from userio_client.records import InputPass
from userio_client.sources import (
    FIREBASE_CSV_HEADER,
    SOURCES,
    django_record,
    firebase_hash_config,
    kratos_record,
    source_with,
)

PASSWORD = b"correct horse battery staple"
HASH_CONFIG = {
    "signer_key": "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
    "salt_separator": "Bw==",
    "rounds": 8,
    "mem_cost": 14,
}


def accepted(record: dict) -> UserRecord:
    """Decode as the server does, but for the password object's members beyond bcrypt's (DECISIONS 12)."""
    shape = {**record}
    if "password" in shape:
        shape["password"] = {k: shape["password"][k] for k in ("type", "password_hash")}
    return msgspec.json.decode(msgspec.json.encode(shape), type=UserRecord)


def converted(source: str, name: str, **options) -> list[tuple[dict, list[dict]]]:
    """Every record of a fixture as the CLI reads and converts it, with its warnings."""
    with (FIXTURES / name).open("rb") as stream:
        records = InputPass(stream, source_with(source, **options), lambda: False).records()
        return [(msgspec.json.decode(r.body), r.warnings or []) for r in records]


def kinds(warnings: list[dict]) -> list[str]:
    return sorted(w["kind"] for w in warnings)


def test_firebase_auth_export_json():
    (ada, ada_warnings), (grace, grace_warnings), (phone, _) = converted("firebase", "firebase_users.json")

    for record, _ in converted("firebase", "firebase_users.json"):
        accepted(record)
    assert ada["password"] == {
        "type": "firebase_scrypt",
        "password_hash": "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
        "salt": "42xEC+ixf3L2lw==",
    }
    assert ada["identities"] == [
        {
            "type": "oauth",
            "provider_alias": "google",
            "subject": "1098765",
            "claims": {"email": "ada@gmail.com", "name": "Ada L.", "picture": "https://lh3/ada"},
        }
    ]
    assert ada["custom_attributes"] == {"admin": True, "firebase_uid": "fbuid0001"}
    assert kinds(ada_warnings) == ["dropped:createdAt", "dropped:lastSignedInAt"]
    assert grace["identities"] == [
        {"type": "oauth", "provider_alias": "oidc.corp", "provider_type": "oidc", "subject": "corp-77"}
    ]
    assert grace["mfa"] == {"phone_number": "+14155550123"}
    assert "social_identity_not_carried" in kinds(grace_warnings)
    assert (phone["phone_number"], phone["disabled"]) == ("+447911123456", True)


def test_firebase_hash_config_goes_into_every_password():
    config = firebase_hash_config((FIXTURES / "firebase_hash_config.txt").read_text())
    assert config == HASH_CONFIG
    assert firebase_hash_config(json.dumps({"hash_config": {"base64_signer_key": "k", "base64_salt_separator": "s",
                                                            "rounds": "8", "mem_cost": 14}}))["rounds"] == 8  # fmt: skip

    ((ada, _), *_) = converted("firebase", "firebase_users.json", firebase_hash_config=config)

    assert ada["password"] == {
        "type": "firebase_scrypt",
        "password_hash": "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
        "salt": "42xEC+ixf3L2lw==",
        **HASH_CONFIG,
    }


def test_firebase_headerless_csv():
    assert len(FIREBASE_CSV_HEADER) == 26
    (ada, ada_warnings), (phone, _) = converted("firebase", "firebase_users.csv")

    assert ada["email"] == "ada@example.com" and ada["email_verified"] is True
    assert ada["password"]["type"] == "firebase_scrypt"
    assert ada["identities"][0]["subject"] == "1098765"
    assert kinds(ada_warnings) == ["dropped:Last Sign-In Time", "dropped:User Creation Time"]
    assert phone == {
        "phone_number": "+447911123456",
        "phone_number_verified": True,
        "custom_attributes": {"firebase_uid": "fbuid0102"},
        "sub": "fbuid0102",
    }


def test_keycloak_realm_export():
    (ada, ada_warnings), (grace, grace_warnings) = converted("keycloak", "keycloak_realm.json")

    accepted(ada), accepted(grace)
    realm = json.loads((FIXTURES / "keycloak_realm.json").read_text())
    secret = json.loads(realm["users"][0]["credentials"][0]["secretData"])
    salt, digest = base64.b64decode(secret["salt"]), base64.b64decode(secret["value"])
    assert digest == hashlib.pbkdf2_hmac("sha256", PASSWORD, salt, 27500, len(digest))
    assert ada["password"] == {
        "type": "pbkdf2",
        "password_hash": f"$pbkdf2-sha256$i=27500${base64.b64encode(salt).decode().rstrip('=')}"
        f"${base64.b64encode(digest).decode().rstrip('=')}",
    }
    assert ada["mfa"]["totp"]["secret"] == base64.b32encode(b"Hello!\xc3\x9eadb").decode().rstrip("=")
    assert ada["identities"] == [
        {
            "type": "oauth",
            "provider_alias": "google",
            "subject": "1098765",
            "claims": {"preferred_username": "ada@gmail.com"},
        }
    ]
    assert (ada["roles"], ada["groups"]) == (["admin"], ["staff"])
    assert ada["custom_attributes"] == {"locale": "en", "department": "math", "keycloak_user_id": "9b1e6a2c-0001"}
    assert kinds(ada_warnings) == ["dropped:clientRoles", "dropped:createdTimestamp"]
    assert grace["disabled"] is True and "password" not in grace
    assert "dropped:requiredActions" in kinds(grace_warnings)


def test_django_dumpdata():
    (ada, ada_warnings), (grace, grace_warnings), (ken, _) = converted("django", "django_users.json")

    for record in (ada, grace, ken):
        accepted(record)
    users = json.loads((FIXTURES / "django_users.json").read_text())
    assert ada["password"] == {"type": "pbkdf2", "password_hash": users[0]["fields"]["password"]}
    assert ada["groups"] == ["editors"]
    assert ada["custom_attributes"] == {"is_staff": True, "is_superuser": True, "django_user_id": 1}
    assert kinds(ada_warnings) == ["dropped:date_joined", "dropped:last_login"]
    assert grace["disabled"] is True and "password" not in grace
    assert kinds(grace_warnings) == ["dropped:date_joined", "dropped:groups", "password_not_carried"]
    assert ken["password"] == {
        "type": "md5",
        "password_hash": hashlib.md5(b"s4lt" + PASSWORD).hexdigest(),
        "salt": "s4lt",
        "salt_position": "prefix",
    }
    assert django_record({"fields": {"email": "a@x.com", "password": "argon2$argon2id$v=19$m=1,t=1,p=1$c2$aA"}})[
        "password"
    ] == {"type": "argon2", "password_hash": "$argon2id$v=19$m=1,t=1,p=1$c2$aA"}


def test_kratos_identities():
    (ada, ada_warnings), (grace, grace_warnings) = converted("kratos", "kratos_identities.json")

    accepted(ada), accepted(grace)
    assert ada["password"]["type"] == "bcrypt"
    assert bcrypt.checkpw(PASSWORD, ada["password"]["password_hash"].encode())
    assert ada["identities"] == [{"type": "oauth", "provider_alias": "google", "subject": "1098765"}]
    assert (ada["name"], ada["email_verified"]) == ("Ada Lovelace", True)
    assert ada["custom_attributes"] == {"plan": "pro", "kratos_identity_id": "5e6f-0001"}
    assert kinds(ada_warnings) == ["dropped:created_at", "dropped:traits.newsletter"]
    assert grace["password"]["type"] == "argon2" and grace["disabled"] is True
    assert "mfa_not_carried" in kinds(grace_warnings)
    assert kratos_record({"traits": {"email": "a@x.com"}, "credentials": {"password": {"config": {
        "hashed_password": "$pbkdf2-sha256$i=1000,l=32$c2FsdA$aGFzaA"}}}})["password"]["type"] == "pbkdf2"  # fmt: skip


def test_keycloak_converts_a_realm_export_whose_users_follow_other_members():
    assert SOURCES["keycloak"].members == "users"
    realm = {"id": "r", "clients": [{"users": [1]}], "users": [{"username": "a", "email": "a@x.com"}], "groups": []}
    with io.BytesIO(json.dumps(realm).encode()) as stream:
        records = list(InputPass(stream, SOURCES["keycloak"], lambda: False).records())
    assert [msgspec.json.decode(r.body)["preferred_username"] for r in records] == ["a"]


async def test_import_from_kratos_links_the_google_identity_and_the_password_signs_in(deployment: Deployment, tmp_path):
    project = await deployment.make_project()

    result = deployment.cli(
        "import", str(FIXTURES / "kratos_identities.json"), "--from", "kratos", *project.args(deployment), cwd=tmp_path
    )

    # Grace's argon2 hash waits for the server's argon2 support (another part of issue 28); Ada is whole.
    report = read_report(tmp_path / "report.ndjson")
    assert report.details[0]["outcome"] == "inserted", (result.stderr, report.details)
    ada_id = report.details[0]["user_id"]
    rows = await deployment.fetch(
        "SELECT user_id, provider_alias, subject FROM userio_oauth_identity WHERE project_id = $1", project.id
    )
    assert [(r["user_id"], r["provider_alias"], r["subject"]) for r in rows] == [(ada_id, "google", "1098765")]
    hashes = await deployment.fetch(
        "SELECT password_hash FROM userio_authenticator WHERE user_id = $1 AND type = 'password'", ada_id
    )
    assert bcrypt.checkpw(PASSWORD, hashes[0]["password_hash"].encode())
    summary = json.loads((tmp_path / "report.failures.json").read_text())
    assert "dropped:traits.newsletter" in json.dumps(summary)


def test_a_file_that_looks_like_another_systems_export_is_named():
    from userio_client.sources import guess_source

    expected = {
        "firebase_users.json": "firebase",
        "firebase_users.csv": "firebase",
        "keycloak_realm.json": "keycloak",
        "django_users.json": "django",
        "kratos_identities.json": "kratos",
        "auth0_users.ndjson": "auth0",
        "cognito_users.csv": "cognito-csv",
        "supabase_users.csv": "supabase",
        "clerk_users.csv": "clerk",
        "userio_export.ndjson": "userio",
    }
    assert {name: guess_source((FIXTURES / name).read_bytes()) for name in expected} == expected
    assert guess_source(b'{"email": "a@example.com"}\n') is None


async def test_an_export_sent_without_from_gets_a_hint_naming_its_source(embedded: Deployment, tmp_path):
    project = await embedded.make_project()

    as_json = embedded.cli("import", str(FIXTURES / "kratos_identities.json"), *project.args(embedded), cwd=tmp_path)
    as_csv = embedded.cli(
        "import", str(FIXTURES / "clerk_users.csv"), *project.args(embedded), "--report", "r2.ndjson", cwd=tmp_path
    )

    assert as_json.returncode == 1
    assert "looks like an Ory Kratos identities export: import it with --from kratos" in as_json.stderr
    assert as_csv.returncode == 2
    assert "looks like a Clerk user export: import it with --from clerk" in as_csv.stderr


def test_each_converter_keeps_the_old_id_as_sub_where_it_is_a_valid_user_id():
    firebase = [record for record, _ in converted("firebase", "firebase_users.json")]
    keycloak = [record for record, _ in converted("keycloak", "keycloak_realm.json")]
    django = [record for record, _ in converted("django", "django_users.json")]
    kratos = [record for record, _ in converted("kratos", "kratos_identities.json")]

    assert [r["sub"] for r in firebase] == [r["custom_attributes"]["firebase_uid"] for r in firebase]
    assert firebase[0]["sub"] == "fbuid0001"
    assert [r["sub"] for r in keycloak] == [r["custom_attributes"]["keycloak_user_id"] for r in keycloak]
    assert [r["sub"] for r in django] == [str(r["custom_attributes"]["django_user_id"]) for r in django]
    assert django[0]["sub"] == "1"
    assert [r["sub"] for r in kratos] == [r["custom_attributes"]["kratos_identity_id"] for r in kratos]


def test_new_ids_keeps_the_old_id_only_in_its_custom_attribute():
    records = [record for record, _ in converted("keycloak", "keycloak_realm.json", new_ids=True)]

    assert records and all("sub" not in r and r["custom_attributes"]["keycloak_user_id"] for r in records)


def test_an_old_id_that_is_not_a_valid_user_id_is_warned_about_and_not_sent():
    users = [{"user_id": "auth0|ok-1", "email": "a@x.com"}, {"user_id": "email|has space", "email": "b@x.com"}]
    users.append({"user_id": "x" * 129, "email": "c@x.com"})
    stream = io.BytesIO(b"".join(json.dumps(u).encode() + b"\n" for u in users))
    records = list(InputPass(stream, source_with("auth0"), lambda: False).records())

    decoded = [msgspec.json.decode(r.body) for r in records]
    assert [d.get("sub") for d in decoded] == ["auth0|ok-1", None, None]
    assert [r.kept_id for r in records] == [True, False, False]
    [warning] = [w for w in records[1].warnings or [] if w["kind"] == "id_not_kept"]
    assert warning["message"].startswith("the Auth0 user_id 'email|has space' is not a valid user id")
    assert "custom_attributes.auth0_user_id" in warning["message"]
    assert decoded[1]["custom_attributes"]["auth0_user_id"] == "email|has space"
