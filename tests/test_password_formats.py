"""Passwords of other systems (DECISIONS 12): imported, verified at sign-in, re-hashed at the first good one."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import threading

import argon2
import pytest
from passlib import hash as passlib_hash

from litestar_userio.config import PasswordConfig, PasswordHashBounds
from litestar_userio.passwords.firebase import FirebaseHashConfig, firebase_scrypt
from litestar_userio.projects.settings import ProjectSettings
from tests.helpers import HASH_2B, IMPORT, PASSWORD, authenticators, import_one, run_import

_ARGON2_FAST = {"time_cost": 1, "memory_cost": 1024, "parallelism": 1}


def argon2_hash(password: str, kind: argon2.Type = argon2.Type.ID, **params: int) -> str:
    return argon2.PasswordHasher(**{**_ARGON2_FAST, **params}, type=kind).hash(password)  # type: ignore[arg-type]


async def primary_hash(project, user_id: str) -> str:
    (value,) = [
        v for kind, type_, v in await authenticators(project, user_id) if (kind, type_) == ("primary", "password")
    ]
    assert value is not None
    return value


@pytest.mark.parametrize("kind", [argon2.Type.ID, argon2.Type.I, argon2.Type.D], ids=["id", "i", "d"])
async def test_an_argon2_user_signs_in_and_the_hash_becomes_bcrypt(project, kind):
    legacy = argon2_hash(PASSWORD, kind)
    detail = await import_one(
        project, {"email": "a@example.com", "password": {"type": "argon2", "password_hash": legacy}}
    )
    users = project.env.services.users

    assert detail["outcome"] == "inserted"
    assert detail["record"]["password"] == {"type": "argon2", "password_hash": "REDACTED"}
    assert await users.verify_password(project.id, "a@example.com", "wrong") is None
    assert legacy in await primary_hash(project, detail["user_id"])
    assert await users.verify_password(project.id, "a@example.com", PASSWORD) == detail["user_id"]
    stored = await primary_hash(project, detail["user_id"])
    assert stored.startswith("$2b$10$") and legacy not in stored
    assert await users.verify_password(project.id, "a@example.com", PASSWORD) == detail["user_id"]
    assert await users.verify_password(project.id, "a@example.com", "wrong") is None


async def test_the_target_algorithm_may_be_argon2id_and_then_bcrypt_is_re_hashed_too(env):
    project = await env.make_project(ProjectSettings(password_algorithm="argon2id"))

    body = await run_import(
        project,
        [
            {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}},
            {"email": "b@example.com", "password": {"type": "argon2", "password_hash": argon2_hash(PASSWORD)}},
            {
                "email": "c@example.com",
                "password": {"type": "argon2", "password_hash": argon2.PasswordHasher().hash(PASSWORD)},
            },
        ],
    )
    a, b, c = (d["user_id"] for d in body["details"])
    c_before = await primary_hash(project, c)
    users = env.services.users

    assert await users.verify_password(project.id, "a@example.com", PASSWORD) == a
    assert await users.verify_password(project.id, "b@example.com", PASSWORD) == b
    assert await users.verify_password(project.id, "c@example.com", PASSWORD) == c
    assert "$argon2id$v=19$m=65536,t=3,p=4$" in await primary_hash(project, a)
    assert "$argon2id$v=19$m=65536,t=3,p=4$" in await primary_hash(project, b)  # m=1024, t=1: cheaper, re-hashed
    assert await primary_hash(project, c) == c_before  # already argon2id at the re-hash's costs: kept
    assert await users.verify_password(project.id, "a@example.com", PASSWORD) == a


async def test_passlib_argon2_alphabet_is_accepted(project):
    legacy = argon2_hash(PASSWORD)
    head, salt, digest = legacy.rsplit("$", 2)
    dotted = f"{head}${salt.replace('+', '.')}${digest.replace('+', '.')}"
    detail = await import_one(
        project, {"email": "a@example.com", "password": {"type": "argon2", "password_hash": dotted}}
    )

    assert await project.env.services.users.verify_password(project.id, "a@example.com", PASSWORD) == detail["user_id"]


async def test_malformed_and_costly_argon2_hashes_fail_their_record_naming_format_and_bound(project):
    costly = argon2_hash(PASSWORD).replace("m=1024", "m=524288")
    body = await run_import(
        project,
        [
            {"email": "a@example.com", "password": {"type": "argon2", "password_hash": "$argon2id$nope"}},
            {"email": "b@example.com", "mfa": {"password": {"type": "argon2", "password_hash": costly}}},
            {"email": "c@example.com", "password": {"type": "argon2", "password_hash": argon2_hash(PASSWORD)}},
        ],
    )

    assert [d["outcome"] for d in body["details"]] == ["failed", "failed", "inserted"]
    malformed, too_costly = (d["errors"][0] for d in body["details"][:2])
    assert (malformed["name"], malformed["reason"]) == ("Invalid", "InvalidPasswordHash")
    assert malformed["message"].startswith("password.password_hash is not an argon2 hash: expected a PHC string")
    assert too_costly["reason"] == "InvalidPasswordHash"
    assert "m 524288" in too_costly["message"] and "maximum of 262144" in too_costly["message"]
    assert too_costly["info"] == {
        "location": "/mfa/password/password_hash",
        "bound": "argon2_memory_kib",
        "value": 524288,
        "maximum": 262144,
    }
    assert costly not in str(body) and "$argon2id$nope" not in str(body)


async def test_argon2_bounds_are_configured(backend, make_env):
    env = await make_env(backend, imports={"hash_bounds": PasswordHashBounds(argon2_time_cost=1)})
    project = await env.make_project()

    body = await run_import(
        project,
        [
            {
                "email": "a@example.com",
                "password": {"type": "argon2", "password_hash": argon2_hash(PASSWORD, time_cost=2)},
            },
            {"email": "b@example.com", "password": {"type": "argon2", "password_hash": argon2_hash(PASSWORD)}},
        ],
    )

    assert [d["outcome"] for d in body["details"]] == ["failed", "inserted"]
    assert body["details"][0]["errors"][0]["info"]["bound"] == "argon2_time_cost"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


LEGACY_HASHES = {
    "scrypt": lambda: passlib_hash.scrypt.using(rounds=4).hash(PASSWORD),
    "pbkdf2-phc": lambda: (
        "$pbkdf2-sha256$i=1000,l=32$"
        + _b64(b"NaCl-salt").rstrip("=")
        + "$"
        + _b64(hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), b"NaCl-salt", 1000)).rstrip("=")
    ),
    "pbkdf2-passlib": lambda: passlib_hash.pbkdf2_sha512.using(rounds=1000).hash(PASSWORD),
    "pbkdf2-django": lambda: (
        "pbkdf2_sha256$1000$djangosalt$" + _b64(hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), b"djangosalt", 1000))
    ),
    "sha512_crypt": lambda: passlib_hash.sha512_crypt.using(rounds=1000).hash(PASSWORD),
    "sha256_crypt": lambda: passlib_hash.sha256_crypt.using(rounds=1000).hash(PASSWORD),
    "md5_crypt": lambda: passlib_hash.md5_crypt.hash(PASSWORD),
    "phpass": lambda: passlib_hash.phpass.using(rounds=8).hash(PASSWORD),
    "ldap-ssha": lambda: passlib_hash.ldap_salted_sha1.hash(PASSWORD),
    "ldap-ssha512": lambda: passlib_hash.ldap_salted_sha512.hash(PASSWORD),
    "ldap-sha": lambda: passlib_hash.ldap_sha1.hash(PASSWORD),
}


@pytest.mark.parametrize("name", list(LEGACY_HASHES))
async def test_each_legacy_format_signs_in_and_is_re_hashed(project, name):
    kind = name.split("-")[0]
    legacy = LEGACY_HASHES[name]()
    detail = await import_one(project, {"email": "a@example.com", "password": {"type": kind, "password_hash": legacy}})
    users = project.env.services.users

    assert detail["outcome"] == "inserted", detail
    assert await users.verify_password(project.id, "a@example.com", PASSWORD + "x") is None
    assert await users.verify_password(project.id, "a@example.com", PASSWORD) == detail["user_id"]
    assert (await primary_hash(project, detail["user_id"])).startswith("$2b$10$")


@pytest.mark.parametrize(
    ("kind", "bad"),
    [
        ("scrypt", "$scrypt$ln=x$salt$hash"),
        ("pbkdf2", "pbkdf2_md5$1$salt$hash"),
        ("sha512_crypt", "$5$salt$hash"),
        ("md5_crypt", "$1$"),
        ("phpass", "$Q$8salt"),
        ("ldap", "{CRYPT}abc"),
        ("firebase_scrypt", "not base64!"),
    ],
)
async def test_a_malformed_hash_names_the_format_expected(project, kind, bad):
    record = {"type": kind, "password_hash": bad, "salt": "c2FsdA==", "signer_key": "a2V5", "salt_separator": "Bw=="}
    if kind == "firebase_scrypt":
        record |= {"rounds": 8, "mem_cost": 14}
    detail = await import_one(project, {"email": "a@example.com", "password": record})

    (error,) = detail["errors"]
    assert error["reason"] == "InvalidPasswordHash"
    assert error["message"].startswith(f"password.password_hash is not a {kind} ")
    assert detail["record"]["password"] == {k: "REDACTED" if k != "type" else kind for k in record}


@pytest.mark.parametrize(
    ("kind", "legacy", "bound"),
    [
        ("scrypt", "$scrypt$ln=18,r=8,p=1$c2FsdA$aGFzaA", "scrypt_n"),
        ("scrypt", "$scrypt$ln=10,r=65,p=1$c2FsdA$aGFzaA", "scrypt_rp"),
        # N and r*p each within their bound, 128*N*r*p = 1 GiB above the memory bound.
        ("scrypt", "$scrypt$ln=17,r=64,p=1$c2FsdA$aGFzaA", "scrypt_memory_kib"),
        ("scrypt", "$scrypt$ln=17,r=8,p=8$c2FsdA$aGFzaA", "scrypt_memory_kib"),
        ("pbkdf2", "$pbkdf2-sha256$i=2000001$c2FsdA$aGFzaA", "pbkdf2_iterations"),
        ("sha512_crypt", "$6$rounds=1000001$saltsalt$" + "a" * 86, "sha_crypt_rounds"),
        ("phpass", "$P$J" + "saltsalt" + "a" * 22, "phpass_cost"),
    ],
)
async def test_a_hash_above_its_bound_fails_naming_the_bound(project, kind, legacy, bound):
    detail = await import_one(project, {"email": "a@example.com", "password": {"type": kind, "password_hash": legacy}})

    (error,) = detail["errors"]
    assert error["reason"] == "InvalidPasswordHash"
    assert error["info"]["bound"] == bound and f"hash_bounds.{bound}" in error["message"]


# Firebase's published vectors (github.com/firebase/scrypt README).
FIREBASE_CONFIG = {
    "signer_key": "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
    "salt_separator": "Bw==",
    "rounds": 8,
    "mem_cost": 14,
}
FIREBASE_USER = {
    "password_hash": "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
    "salt": "42xEC+ixf3L2lw==",
}
FIREBASE_PASSWORD = "user1password"


def test_firebase_scrypt_gives_firebases_published_hash():
    hashed = firebase_scrypt(
        FIREBASE_PASSWORD.encode(),
        base64.b64decode(FIREBASE_USER["salt"]),
        base64.b64decode(FIREBASE_CONFIG["salt_separator"]),
        base64.b64decode(FIREBASE_CONFIG["signer_key"]),
        8,
        14,
    )

    assert base64.b64encode(hashed).decode() == FIREBASE_USER["password_hash"]


async def test_firebase_users_sign_in_with_the_projects_hash_config(env):
    project = await env.make_project(ProjectSettings(firebase_scrypt=FirebaseHashConfig(**FIREBASE_CONFIG)))
    wrong_key = await env.make_project(
        ProjectSettings(firebase_scrypt=FirebaseHashConfig(**{**FIREBASE_CONFIG, "signer_key": _b64(b"k" * 64)}))
    )
    record = {"email": "a@example.com", "password": {"type": "firebase_scrypt", **FIREBASE_USER}}
    detail = await import_one(project, record)
    other = await import_one(wrong_key, record)
    users = env.services.users

    assert detail["record"]["password"] == {"type": "firebase_scrypt", "password_hash": "REDACTED", "salt": "REDACTED"}
    assert await users.verify_password(wrong_key.id, "a@example.com", FIREBASE_PASSWORD) is None
    assert await users.verify_password(project.id, "a@example.com", "user1passwore") is None
    assert await users.verify_password(project.id, "a@example.com", FIREBASE_PASSWORD) == detail["user_id"]
    assert (await primary_hash(project, detail["user_id"])).startswith("$2b$")
    assert other["outcome"] == "inserted"


@pytest.mark.engine
async def test_firebase_scrypt_is_bound_by_the_scrypt_memory_bound_too(backend, make_env):
    env = await make_env(backend, imports={"hash_bounds": PasswordHashBounds(scrypt_memory_kib=8192)})
    project = await env.make_project()
    inline = {"type": "firebase_scrypt", **FIREBASE_USER, **FIREBASE_CONFIG}  # N = 2^14, r = 8: 16 MiB

    detail = await import_one(project, {"email": "a@example.com", "password": inline})

    (error,) = detail["errors"]
    assert error["reason"] == "InvalidPasswordHash"
    assert error["info"]["bound"] == "scrypt_memory_kib" and error["info"]["value"] == 16384
    assert "hash_bounds.scrypt_memory_kib" in error["message"]


async def test_firebase_hash_config_in_the_record_and_missing_config(project):
    inline = {"type": "firebase_scrypt", **FIREBASE_USER, **FIREBASE_CONFIG}
    body = await run_import(
        project,
        [
            {"email": "a@example.com", "password": inline},
            {"email": "b@example.com", "password": {"type": "firebase_scrypt", **FIREBASE_USER}},
        ],
    )

    ok, missing = body["details"]
    assert ok["outcome"] == "inserted" and set(ok["record"]["password"].values()) == {"firebase_scrypt", "REDACTED"}
    assert missing["errors"][0]["reason"] == "InvalidPasswordHash"
    assert "without mem_cost, rounds, salt_separator, signer_key" in missing["errors"][0]["message"]
    users = project.env.services.users
    assert await users.verify_password(project.id, "a@example.com", FIREBASE_PASSWORD) == ok["user_id"]


async def test_weak_digests_need_the_projects_opt_in(env):
    strict = await env.make_project()
    weak = await env.make_project(ProjectSettings(allow_weak_password_hashes=True))
    records = [
        {
            "email": "a@example.com",
            "password": {"type": "md5", "password_hash": hashlib.md5(PASSWORD.encode()).hexdigest()},
        },
        {
            "email": "b@example.com",
            "password": {
                "type": "sha256",
                "password_hash": _b64(hashlib.sha256(b"pepper" + PASSWORD.encode()).digest()),
                "salt": "pepper",
                "salt_position": "prefix",
            },
        },
        {
            "email": "c@example.com",
            "password": {
                "type": "sha1",
                "password_hash": hashlib.sha1(PASSWORD.encode() + b"s").hexdigest(),
                "salt": "s",
            },
        },
    ]
    refused = await run_import(strict, records)
    accepted = await run_import(weak, records)
    users = env.services.users

    assert {d["errors"][0]["info"]["bound"] for d in refused["details"]} == {"allow_weak_password_hashes"}
    assert [d["outcome"] for d in accepted["details"]] == ["inserted"] * 3
    for detail, email in zip(accepted["details"], ["a@example.com", "b@example.com", "c@example.com"], strict=True):
        assert await users.verify_password(weak.id, email, "wrong") is None
        assert await users.verify_password(weak.id, email, PASSWORD) == detail["user_id"]
        assert (await primary_hash(weak, detail["user_id"])).startswith("$2b$")


async def test_a_flood_of_argon2_sign_ins_in_one_project_does_not_stall_another(backend, make_env):
    env = await make_env(backend, passwords=PasswordConfig(threads=2, threads_per_project=1, max_memory=24 << 20))
    busy, quiet = await env.make_project(), await env.make_project()
    costly = argon2_hash(PASSWORD, time_cost=2, memory_cost=16 << 10)
    await import_one(busy, {"email": "a@example.com", "password": {"type": "argon2", "password_hash": costly}})
    detail = await import_one(
        quiet, {"email": "a@example.com", "password": {"type": "argon2", "password_hash": argon2_hash(PASSWORD)}}
    )
    users = env.services.users

    flood = [asyncio.create_task(users.verify_password(busy.id, "a@example.com", "wrong")) for _ in range(30)]
    assert await users.verify_password(quiet.id, "a@example.com", PASSWORD) == detail["user_id"]
    finished = sum(task.done() for task in flood)
    outcomes = await asyncio.gather(*flood, return_exceptions=True)

    assert finished < len(flood)
    assert outcomes == [None] * len(flood)


async def test_memory_hard_checks_wait_for_the_memory_budget(backend, make_env, monkeypatch):
    """Four threads, but the budget holds one 8 MiB Argon2 check at a time: they never overlap."""
    env = await make_env(backend, passwords=PasswordConfig(threads=4, threads_per_project=4, max_memory=12 << 20))
    project = await env.make_project()
    legacy = argon2_hash(PASSWORD, memory_cost=8 << 10)
    await import_one(project, {"email": "a@example.com", "password": {"type": "argon2", "password_hash": legacy}})
    running, most = 0, 0
    lock = threading.Lock()
    real_verify = argon2.low_level.verify_secret

    def counting_verify(*args):
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        try:
            return real_verify(*args)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(argon2.low_level, "verify_secret", counting_verify)
    users = env.services.users

    outcomes = await asyncio.gather(*(users.verify_password(project.id, "a@example.com", "wrong") for _ in range(8)))

    assert outcomes == [None] * 8
    assert most == 1


@pytest.mark.engine
async def test_the_migration_state_counts_users_per_format_and_first_sign_ins(project):
    await run_import(
        project,
        [
            {"email": "a@example.com", "password": {"type": "argon2", "password_hash": argon2_hash(PASSWORD)}},
            {"email": "b@example.com", "password": {"type": "argon2", "password_hash": argon2_hash(PASSWORD)}},
            {"email": "c@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}},
            {
                "email": "d@example.com",
                "password": {"type": "md5_crypt", "password_hash": LEGACY_HASHES["md5_crypt"]()},
            },
            {"email": "e@example.com"},
        ],
    )
    before = (await project.get("/_api/admin/users/password-migration")).json()["result"]
    users = project.env.services.users
    signed_in = await users.verify_password(project.id, "a@example.com", PASSWORD)
    assert signed_in is not None
    await users.check_sign_in(project.id, signed_in)  # the host's sign-in: it records the sign-in

    response = await project.get("/_api/admin/users/password-migration")

    assert response.status_code == 200
    assert before == {
        "password_algorithm": "bcrypt",
        "users": 5,
        "never_signed_in": 5,
        "without_password": 1,
        "awaiting_rehash": 4,  # the bcrypt one too: cost 4, below the re-hash's 10
        "awaiting_rehash_never_signed_in": 4,
        "formats": {
            "argon2": {"users": 2, "never_signed_in": 2},
            "bcrypt": {"users": 1, "never_signed_in": 1},
            "md5_crypt": {"users": 1, "never_signed_in": 1},
        },
    }
    assert response.json()["result"] == {
        **before,
        "never_signed_in": 4,
        "awaiting_rehash": 3,
        "awaiting_rehash_never_signed_in": 3,
        "formats": {
            "argon2": {"users": 1, "never_signed_in": 1},
            "bcrypt": {"users": 2, "never_signed_in": 1},
            "md5_crypt": {"users": 1, "never_signed_in": 1},
        },
    }


async def test_the_dry_run_checks_known_pairs_per_record_and_keeps_no_plaintext(env):
    project = await env.make_project(ProjectSettings(firebase_scrypt=FirebaseHashConfig(**FIREBASE_CONFIG)))
    wrong_separator = {"type": "firebase_scrypt", **FIREBASE_USER, **FIREBASE_CONFIG, "salt_separator": "Cw=="}
    records = [
        {"email": "a@example.com", "password": {"type": "argon2", "password_hash": argon2_hash(PASSWORD)}},
        {"email": "b@example.com", "password": {"type": "firebase_scrypt", **FIREBASE_USER}},
        {"email": "c@example.com", "password": wrong_separator},
        {"email": "d@example.com"},
        {"email": "e@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}},
        {"email": "f@example.com", "password": {"type": "argon2", "password_hash": "$argon2id$bad"}},
    ]
    checks = [
        {"index": 0, "password": PASSWORD},
        {"index": 1, "password": FIREBASE_PASSWORD},
        {"index": 2, "password": FIREBASE_PASSWORD},
        {"index": 3, "password": "plaintext-3"},
        {"index": 4, "password": "plaintext-4"},
        {"index": 5, "password": "plaintext-5"},
    ]

    body = await run_import(project, records, dry_run=True, password_checks=checks)

    assert [d.get("password_check") for d in body["details"]] == [
        "verified",
        "verified",
        "mismatch",
        "unsupported",
        "mismatch",
        "unsupported",
    ]
    assert [d["outcome"] for d in body["details"]] == ["inserted"] * 5 + ["failed"]
    stored = await project.fetch("SELECT records, result FROM userio_import_chunk")
    for secret in (PASSWORD, FIREBASE_PASSWORD, "plaintext-3", "plaintext-4", "plaintext-5"):
        assert secret not in str(body) and secret not in str(stored)
    assert await env.services.users.verify_password(project.id, "a@example.com", PASSWORD) is None  # nothing written


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"password_checks": [{"index": 0, "password": "x"}]}, "password_checks needs dry_run = true"),
        ({"dry_run": True, "password_checks": [{"index": 1, "password": "x"}]}, "password_checks[0].index 1 names no"),
    ],
)
async def test_password_checks_are_refused_outside_a_dry_run_or_past_the_records(project, options, message):
    response = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}], **options})

    assert response.status_code == 400
    assert message in response.json()["error"]


async def test_a_second_factor_password_may_be_a_legacy_format(project):
    legacy = argon2_hash(PASSWORD)
    detail = await import_one(
        project, {"email": "a@example.com", "mfa": {"password": {"type": "argon2", "password_hash": legacy}}}
    )

    assert detail["outcome"] == "inserted"
    ((kind, type_, value),) = await authenticators(project, detail["user_id"])
    assert (kind, type_) == ("secondary", "password") and legacy in value
    assert await project.env.services.users.verify_password(project.id, "a@example.com", PASSWORD) is None


async def test_a_malformed_migrate_on_sign_in_marker_fails_its_record_naming_the_cause(project):
    marker = {"type": "migrate_on_sign_in"}
    body = await run_import(
        project,
        [
            {"email": "a@example.com", "password": {**marker, "password_hash": HASH_2B}},
            {"email": "b@example.com", "password": {**marker, "expire_after": "2030-01-01T00:00:00Z"}},
            {"email": "c@example.com", "mfa": {"password": marker}},
            {"email": "d@example.com", "password": {"type": "bcrypt"}},
            {"email": "e@example.com", "password": marker},
        ],
    )

    assert [d["outcome"] for d in body["details"]] == ["failed", "failed", "failed", "failed", "inserted"]
    with_hash, with_expiry, in_mfa, no_hash = (d["errors"][0] for d in body["details"][:4])
    assert with_hash["reason"] == "InvalidPasswordHash"
    assert with_hash["message"].startswith("password.password_hash is a migrate_on_sign_in marker, which has no other")
    assert with_expiry["info"]["location"] == "/password/expire_after"
    assert in_mfa["reason"] == "InvalidPasswordHash" and in_mfa["info"]["location"] == "/mfa/password/type"
    assert no_hash["reason"] == "ValidationFailed"
    assert no_hash["info"]["causes"][0]["location"] == "/password"
    assert no_hash["info"]["causes"][0]["kind"] == "required"


async def test_the_record_schema_accepts_the_marker_and_names_a_member_beside_it(project):
    marker = {"type": "migrate_on_sign_in"}
    body = await run_import(
        project,
        [{"email": 5, "password": marker}, {"email": 5, "password": {**marker, "salt": "x"}}],
    )

    clean, extra = ([c["location"] for c in d["errors"][0]["info"]["causes"]] for d in body["details"])
    assert clean == ["/email"]
    assert extra == ["/email", "/password/salt"]
