"""Passwords of other systems (DECISIONS 12): imported, verified at sign-in, re-hashed at the first good one."""

from __future__ import annotations

import argon2
import pytest

from litestar_userio.config import PasswordHashBounds
from litestar_userio.projects.settings import ProjectSettings
from tests.helpers import HASH_2B, PASSWORD, authenticators, import_one, run_import

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
        ],
    )
    a, b = (d["user_id"] for d in body["details"])
    b_before = await primary_hash(project, b)
    users = env.services.users

    assert await users.verify_password(project.id, "a@example.com", PASSWORD) == a
    assert await users.verify_password(project.id, "b@example.com", PASSWORD) == b
    assert "$argon2id$v=19$m=65536,t=3,p=4$" in await primary_hash(project, a)
    assert await primary_hash(project, b) == b_before  # already argon2id: kept
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
