"""Converters carry every hash their source gives (issue 28): Django's and Auth0's rows, made with the libraries
those systems use, convert, import and then sign in with the plaintext; what cannot be carried is warned by name."""

from __future__ import annotations

import base64
import hashlib

import argon2
import pytest
from passlib import hash as passlib_hash

from litestar_userio.projects.settings import ProjectSettings
from tests.helpers import PASSWORD, run_import
from userio_client.sources import auth0_record, django_record

_ARGON2_FAST = {"time_cost": 1, "memory_cost": 1024, "parallelism": 1}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def django_hashes() -> dict[str, str]:
    """`auth_user.password` as each of Django's hashers writes it (Django's own algorithms, by libpass and hashlib)."""
    salt = "Xq2sZ8hJ0kLm"
    return {
        "bcrypt_sha256": passlib_hash.django_bcrypt_sha256.using(rounds=4).hash(PASSWORD),
        "argon2": "argon2" + argon2.PasswordHasher(**_ARGON2_FAST).hash(PASSWORD),  # type: ignore[arg-type]
        "pbkdf2_sha1": f"pbkdf2_sha1$1000${salt}$"
        + _b64(hashlib.pbkdf2_hmac("sha1", PASSWORD.encode(), salt.encode(), 1000)),
        "pbkdf2_sha256": passlib_hash.django_pbkdf2_sha256.using(rounds=1000).hash(PASSWORD),
        "bcrypt": passlib_hash.django_bcrypt.using(rounds=4).hash(PASSWORD),
        "sha1": passlib_hash.django_salted_sha1.hash(PASSWORD),
        "unsalted_md5": hashlib.md5(PASSWORD.encode()).hexdigest(),
    }


def auth0_hashes() -> dict[str, dict]:
    """`custom_password_hash` objects in Auth0's bulk-import shapes, one per algorithm it names."""
    salt = b"pepper-salt"
    return {
        "argon2": {"algorithm": "argon2", "hash": {"value": argon2.PasswordHasher(**_ARGON2_FAST).hash(PASSWORD)}},  # type: ignore[arg-type]
        "pbkdf2": {
            "algorithm": "pbkdf2",
            "hash": {
                "value": "$pbkdf2-sha512$i=1000,l=64$"
                + _b64(salt).rstrip("=")
                + "$"
                + _b64(hashlib.pbkdf2_hmac("sha512", PASSWORD.encode(), salt, 1000)).rstrip("="),
                "encoding": "utf8",
            },
        },
        "sha256-hex-salt-prefix": {
            "algorithm": "sha256",
            "hash": {"value": hashlib.sha256(salt + PASSWORD.encode()).hexdigest(), "encoding": "hex"},
            "salt": {"value": salt.hex(), "encoding": "hex", "position": "prefix"},
        },
        "md5-base64-suffix": {
            "algorithm": "md5",
            "hash": {"value": _b64(hashlib.md5(PASSWORD.encode() + salt).digest()), "encoding": "base64"},
            "salt": {"value": salt.decode(), "position": "suffix"},
        },
        "sha512-unsalted": {
            "algorithm": "sha512",
            "hash": {"value": hashlib.sha512(PASSWORD.encode()).hexdigest(), "encoding": "hex"},
        },
    }


@pytest.fixture
async def weak_project(env):
    return await env.make_project(ProjectSettings(allow_weak_password_hashes=True))


async def import_and_sign_in(project, records: list[dict]) -> None:
    body = await run_import(project, records)
    assert [d["outcome"] for d in body["details"]] == ["inserted"] * len(records), body["details"]
    users = project.env.services.users
    for record, detail in zip(records, body["details"], strict=True):
        assert await users.verify_password(project.id, record["email"], PASSWORD + "x") is None
        assert await users.verify_password(project.id, record["email"], PASSWORD) == detail["user_id"], record
        # Re-hashed at that first sign-in: the plaintext still signs in with the project's algorithm's hash.
        assert await users.verify_password(project.id, record["email"], PASSWORD) == detail["user_id"]


async def test_every_django_hasher_converts_imports_and_signs_in(weak_project):
    records = []
    for i, (hasher, value) in enumerate(django_hashes().items()):
        warnings: list[dict] = []
        record = django_record(
            {"model": "auth.user", "pk": i, "fields": {"email": f"{hasher}@example.com", "password": value}},
            warnings=warnings,
        )
        assert "password" in record and not [w for w in warnings if w["kind"].startswith("password")], hasher
        records.append(record)

    assert records[0]["password"]["type"] == "bcrypt"  # bcrypt_sha256: bcrypt's type takes Django's form
    assert records[1]["password"]["password_hash"].startswith("$argon2id$v=19$")
    await import_and_sign_in(weak_project, records)


async def test_every_auth0_custom_hash_converts_imports_and_signs_in(weak_project):
    records = []
    for name, custom in auth0_hashes().items():
        warnings: list[dict] = []
        record = auth0_record({"email": f"{name}@example.com", "custom_password_hash": custom}, warnings=warnings)
        assert "password" in record and warnings == [], (name, warnings)
        records.append(record)

    assert records[2]["password"]["salt"] == "pepper-salt"  # hex salt decoded to the text the import salts with
    await import_and_sign_in(weak_project, records)


def test_what_cannot_be_carried_is_warned_by_name():
    def warned(record_warnings: list[dict], convert, user: dict) -> None:
        record = convert(user, warnings=record_warnings)
        assert "password" not in record

    warnings: list[dict] = []
    salt = {"value": _b64(b"\xff\xfe"), "encoding": "base64"}
    for custom in (
        {"algorithm": "hmac", "hash": {"value": "abc", "key": {"value": "k"}}},
        {"algorithm": "md4", "hash": {"value": "abc"}},
        {"algorithm": "sha1", "hash": {"value": "abc"}, "salt": salt},
        {"algorithm": "sha1", "hash": {"value": "abc"}, "password": {"encoding": "utf16le"}},
    ):
        warned(warnings, auth0_record, {"email": "a@example.com", "custom_password_hash": custom})
    warned(warnings, django_record, {"fields": {"email": "a@example.com", "password": "crypt$$abN0vZ1PyMnWs"}})

    assert [w["kind"] for w in warnings] == [
        "password_not_carried:hmac",
        "password_not_carried:md4",
        "password_not_carried:sha1",
        "password_not_carried:sha1",
        "password_not_carried:django_crypt",
    ]
    messages = [w["message"] for w in warnings]
    assert "HMAC" in messages[0] and "'md4'" in messages[1]
    assert "not UTF-8 text" in messages[2] and "'utf16le'" in messages[3]
    assert messages[4] == "Django's crypt hasher has no import format: the user must reset the password"
