"""Issue 45 (DECISIONS 19): the lossless export, everything as import records, age-encrypted, re-importable."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest
from pyrage import decrypt, x25519

from litestar_userio import MetricsConfig
from litestar_userio.errors import UserDisabled
from litestar_userio.observability import telemetry
from litestar_userio.passwords.firebase import FirebaseHashConfig
from litestar_userio.projects.settings import ProjectSettings
from tests.exports.helpers import download, export_and_wait, exported_bytes, initiate
from tests.helpers import HASH_2B, PASSWORD, TOTP_SECRET, run_import
from tests.operations.conftest import delta, scrape
from tests.test_password_formats import (
    FIREBASE_CONFIG,
    FIREBASE_PASSWORD,
    FIREBASE_USER,
    LEGACY_HASHES,
    argon2_hash,
)

ALLOWED = ProjectSettings(
    allow_secret_export=True,
    allow_weak_password_hashes=True,
    create_unknown_roles_on_import=True,
    create_unknown_groups_on_import=True,
)


def lossless(identity: x25519.Identity, *others: x25519.Identity) -> dict[str, Any]:
    recipients = [str(i.to_public()) for i in (identity, *others)]
    return {"format": "userio", "encryption": {"age_recipients": recipients}}


def records_of(ciphertext: bytes, identity: x25519.Identity) -> list[dict[str, Any]]:
    return [msgspec.json.decode(line) for line in decrypt(ciphertext, [identity]).splitlines()]


def population() -> tuple[list[dict[str, Any]], dict[str, str]]:
    """A mixed population (every hash format we take, TOTP, identities, windows) and each login's password."""
    records: list[dict[str, Any]] = []
    passwords: dict[str, str] = {}

    def add(record: dict[str, Any], password: str | None = PASSWORD) -> None:
        records.append(record)
        if password is not None:
            passwords[record["email"]] = password

    add(
        {
            "sub": "u-bcrypt",
            "email": "Ada@Example.com",
            "email_verified": True,
            "phone_number": "+442079460958",
            "phone_number_verified": True,
            "preferred_username": "ada",
            "name": "Ada Lovelace",
            "given_name": "Ada",
            "family_name": "Lovelace",
            "locale": "en-GB",
            "zoneinfo": "Europe/London",
            "birthdate": "1815-12-10",
            "address": {"locality": "London", "country": "GB"},
            "custom_attributes": {"plan": "pro", "seats": 3, "nested": {"b": 1, "a": [1, 2]}},
            "roles": ["admin", "editor"],
            "groups": ["staff"],
            "password": {"type": "bcrypt", "password_hash": HASH_2B, "expire_after": "2099-01-01T00:00:00Z"},
            "mfa": {
                "email": "ada.mfa@example.com",
                "phone_number": "+442079460959",
                "totp": {"secret": TOTP_SECRET},
                "password": {"type": "argon2", "password_hash": argon2_hash("second factor")},
            },
            "identities": [
                {"type": "oauth", "provider_alias": "google", "subject": "g-1", "claims": {"email": "ada@gmail.com"}},
                {"type": "oauth", "provider_alias": "corp", "provider_type": "oidc", "subject": "c-1"},
            ],
        }
    )
    add({"sub": "u-argon2-rehashed", "email": "rehashed@example.com", "password": _argon2()})
    add({"sub": "u-argon2-waiting", "email": "argon@example.com", "password": _argon2()})
    for name, make in LEGACY_HASHES.items():
        add({"email": f"{name}@example.com", "password": {"type": name.split("-")[0], "password_hash": make()}})
    add(
        {"email": "firebase@example.com", "password": {"type": "firebase_scrypt", **FIREBASE_USER}},
        FIREBASE_PASSWORD,
    )
    add(
        {
            "email": "md5@example.com",
            "password": {
                "type": "md5",
                "password_hash": _md5_hex("pepper" + PASSWORD),
                "salt": "pepper",
                "salt_position": "prefix",
            },
        }
    )
    add({"email": "lazy@example.com", "password": {"type": "migrate_on_sign_in"}}, None)
    add({"email": "nopassword@example.com", "custom_attributes": {}}, None)
    add({"sub": "u-disabled", "email": "disabled@example.com", "disabled": True, "password": _bcrypt()})
    add(
        {
            "sub": "u-windows",
            "email": "windows@example.com",
            "account_valid_from": "2020-01-01T00:00:00Z",
            "account_valid_until": "2090-01-01T00:00:00Z",
            "temporarily_disabled_from": "2080-01-01T00:00:00Z",
            "temporarily_disabled_until": "2080-02-01T12:30:00.250000Z",
            "password": _bcrypt(),
        }
    )
    add({"preferred_username": "onlyname", "email": "user-name@example.com", "password": _bcrypt()})
    return records, passwords


def _argon2() -> dict[str, str]:
    return {"type": "argon2", "password_hash": argon2_hash(PASSWORD)}


def _bcrypt() -> dict[str, str]:
    return {"type": "bcrypt", "password_hash": HASH_2B}


def _md5_hex(text: str) -> str:
    import hashlib

    return hashlib.md5(text.encode()).hexdigest()


def _comparable(document: dict[str, Any]) -> dict[str, Any]:
    """An ndjson export line without what a move does not keep: the times of creation, change and sign-in, and the
    project's name as the TOTP URIs' issuer (their secrets stay)."""
    kept = {k: v for k, v in document.items() if k not in {"created_at", "updated_at", "last_login_at"}}
    kept["mfa"] = {**kept["mfa"], "totps": [totp["secret"] for totp in kept["mfa"]["totps"]]}
    kept["identities"] = sorted(kept["identities"], key=msgspec.json.encode)  # linked at one instant: no order
    return kept


async def _ndjson(project) -> dict[str, dict[str, Any]]:
    lines = (await exported_bytes(project, {"format": "ndjson"})).splitlines()
    return {d["sub"]: _comparable(d) for d in map(msgspec.json.decode, lines)}


@pytest.mark.engine
async def test_a_lossless_export_moves_every_user_to_another_project_losing_nothing(env, caplog):
    identity = x25519.Identity.generate()
    firebase = FirebaseHashConfig(**FIREBASE_CONFIG)
    source = await env.make_project(msgspec.structs.replace(ALLOWED, firebase_scrypt=firebase))
    target = await env.make_project(ALLOWED)  # no Firebase config: the records carry it
    records, passwords = population()
    imported = await run_import(source, records)
    assert [d["outcome"] for d in imported["details"]] == ["inserted"] * len(records), imported["details"]
    users = env.services.users
    assert await users.verify_password(source.id, "rehashed@example.com", PASSWORD) == "u-argon2-rehashed"
    before = await _ndjson(source)

    caplog.set_level(logging.INFO, logger="litestar_userio.exports")
    result = await export_and_wait(source, lossless(identity))
    ciphertext = (await download(source, result["download_url"])).content
    exported = records_of(ciphertext, identity)

    # Encrypted: no hash in the file, the task, or the log; the request echo holds the public key alone.
    assert ciphertext.startswith(b"age-encryption.org/v1\n")
    assert HASH_2B.encode() not in ciphertext and TOTP_SECRET.encode() not in ciphertext
    assert result["request"] == lossless(identity) and result["record_count"] == len(records)
    assert result["download_url"].split("?")[0].endswith(".ndjson.age")
    assert HASH_2B not in caplog.text and TOTP_SECRET not in caplog.text
    assert f"requested by admin key {source.key.kid}" in caplog.text
    by_sub = {r["sub"]: r for r in exported}
    ada = by_sub["u-bcrypt"]
    assert ada["password"] == records[0]["password"]
    assert ada["mfa"]["totp"] == {"secret": TOTP_SECRET}
    assert ada["mfa"]["password"] == records[0]["mfa"]["password"]
    assert ada["family_name"] == "Lovelace" and ada["email"] == "Ada@Example.com"
    assert ada["custom_attributes"] == {"nested": {"a": [1, 2], "b": 1}, "plan": "pro", "seats": 3}
    assert by_sub["u-argon2-rehashed"]["password"]["type"] == "bcrypt"  # re-hashed at its sign-in
    assert by_sub["u-argon2-waiting"]["password"] == records[2]["password"]
    lazy = next(r for r in exported if r.get("email") == "lazy@example.com")
    assert lazy["password"] == {"type": "migrate_on_sign_in"}
    assert "password" not in next(r for r in exported if r.get("email") == "nopassword@example.com")
    firebase_record = next(r for r in exported if r.get("email") == "firebase@example.com")
    assert firebase_record["password"]["signer_key"] == FIREBASE_CONFIG["signer_key"]
    assert by_sub["u-windows"]["temporarily_disabled_until"] == "2080-02-01T12:30:00.250000Z"
    assert by_sub["u-disabled"]["disabled"] is True

    # A move inside one deployment: ids are unique in it, so the source's users go first (DECISIONS 19).
    for sub in before:
        response = await env.client.delete(f"/_api/admin/users/{sub}", headers=source.headers())
        assert response.status_code == 204, response.text
    moved = await run_import(target, exported)

    assert [d["outcome"] for d in moved["details"]] == ["inserted"] * len(records), moved["details"]
    assert not [d for d in moved["details"] if d.get("warnings")], moved["details"]
    assert sorted(d["user_id"] for d in moved["details"]) == sorted(before)
    assert await _ndjson(target) == before  # identities, roles, groups, states, TOTP secrets: the same
    again = await exported_bytes(target, lossless(identity))
    assert records_of(again, identity) == exported
    for login, password in passwords.items():
        user_id = next(sub for sub, document in before.items() if document.get("email") == login.lower())
        if login == "disabled@example.com":
            with pytest.raises(UserDisabled):  # the password was right: only then is the state told
                await users.verify_password(target.id, login, password)
        else:
            assert await users.verify_password(target.id, login, password) == user_id, login
            assert await users.verify_password(target.id, login, password + "x") is None


async def test_the_lossless_export_is_off_unless_the_project_allows_it(env):
    project = await env.make_project()
    identity = x25519.Identity.generate()

    response = await initiate(project, lossless(identity))

    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert (error["name"], error["reason"], error["code"]) == ("Forbidden", "SecretExportDisabled", 403)
    assert "allow_secret_export=true" in error["message"]


async def test_a_recipient_that_is_not_an_age_x25519_key_is_named(env):
    project = await env.make_project(ALLOWED)
    good = str(x25519.Identity.generate().to_public())

    bad = await initiate(
        project, {"format": "userio", "encryption": {"age_recipients": [good, "age1nope", "ssh-rsa AAAA"]}}
    )
    none = await initiate(project, {"format": "userio", "encryption": {"age_recipients": []}})
    missing = await initiate(project, {"format": "userio"})
    elsewhere = await initiate(project, {"format": "ndjson", "encryption": {"age_recipients": [good]}})

    assert bad.status_code == 400, bad.text
    error = bad.json()["error"]
    assert (error["name"], error["reason"]) == ("Invalid", "ValidationFailed")
    causes = error["info"]["causes"]
    assert [c["location"] for c in causes] == ["/encryption/age_recipients/1", "/encryption/age_recipients/2"]
    assert "'age1nope' is not an age X25519 public key" in causes[0]["message"]
    assert [r.status_code for r in (none, missing, elsewhere)] == [400, 400, 400]
    assert none.json()["error"]["info"]["causes"][0]["location"] == "/encryption/age_recipients"


async def test_any_recipient_decrypts_the_file_and_lossless_exports_are_counted(backend, make_env):
    env = await make_env(backend, metrics=MetricsConfig())
    try:
        project = await env.make_project(ALLOWED)
        refused = await env.make_project()
        await run_import(project, [{"email": "a@example.com", "password": _bcrypt()}])
        first, second = x25519.Identity.generate(), x25519.Identity.generate()
        before = await scrape(env)

        ciphertext = await exported_bytes(project, lossless(first, second))
        await initiate(refused, lossless(first))
        after = await scrape(env)

        assert records_of(ciphertext, first) == records_of(ciphertext, second)
        assert records_of(ciphertext, second)[0]["password"] == _bcrypt()
        assert delta(before, after, "userio_secret_exports_total", outcome="accepted") == 1
        assert delta(before, after, "userio_secret_exports_total", outcome="completed") == 1
        assert delta(before, after, "userio_secret_exports_total", outcome="refused") == 1
    finally:
        telemetry.reset()


async def test_an_import_record_carries_a_temporary_disable_window(project):
    window = {"temporarily_disabled_from": "2030-01-01T00:00:00Z", "temporarily_disabled_until": "2030-01-02T00:00:00Z"}

    body = await run_import(
        project,
        [
            {"email": "a@example.com", **window},
            {"email": "b@example.com", "temporarily_disabled_from": "2030-01-01T00:00:00Z"},
            {"email": "c@example.com", **window, "account_valid_until": "2029-01-01T00:00:00Z"},
        ],
    )

    ok, half, outside = body["details"]
    assert ok["outcome"] == "inserted"
    assert half["errors"][0]["info"]["cause"]["kind"] == "TemporarilyDisabledWindowIncomplete"
    assert outside["errors"][0]["info"]["cause"]["kind"] == "TemporarilyDisabledOutsideValidPeriod"
    user = (await project.get(f"/_api/admin/users/{ok['user_id']}")).json()["result"]
    assert (user["temporarily_disabled_from"], user["temporarily_disabled_until"]) == (
        "2030-01-01T00:00:00Z",
        "2030-01-02T00:00:00Z",
    )
    assert user["disabled"] is False


async def test_an_accepted_lossless_export_fails_if_the_setting_is_turned_off_before_it_runs(env):
    project = await env.make_project(ALLOWED)
    await run_import(project, [{"email": "a@example.com", "password": _bcrypt()}])
    env.hold_jobs()
    response = await initiate(project, lossless(x25519.Identity.generate()))
    assert response.status_code == 202, response.text

    await env.services.projects.update_settings(project.id, allow_secret_export=False)
    await env.drain()
    result = (await project.get(response.headers["location"])).json()["result"]

    assert result["status"] == "completed" and "download_url" not in result
    assert (result["error"]["name"], result["error"]["reason"]) == ("Forbidden", "SecretExportDisabled")
