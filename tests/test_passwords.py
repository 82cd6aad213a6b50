"""An imported user signs in with its bcrypt password (DECISIONS 3, `verify_password`)."""

from __future__ import annotations

import bcrypt
import pytest

from litestar_userio.config import PasswordConfig
from litestar_userio.projects.settings import ProjectSettings
from tests.helpers import HASH_2A, HASH_2B, HASH_2Y, PASSWORD, authenticators, import_one, run_import


@pytest.mark.parametrize("password_hash", [HASH_2A, HASH_2B, HASH_2Y], ids=["2a", "2b", "2y"])
async def test_imported_user_signs_in_with_the_right_password(project, password_hash):
    detail = await import_one(
        project, {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": password_hash}}
    )
    users = project.env.services.users

    assert await users.verify_password(project.id, "a@example.com", PASSWORD) == detail["user_id"]
    assert await users.verify_password(project.id, "A@Example.com", PASSWORD) == detail["user_id"]
    assert await users.verify_password(project.id, "a@example.com", "wrong") is None


async def test_sign_in_by_phone_or_username(project):
    detail = await import_one(
        project,
        {
            "email": "a@example.com",
            "phone_number": "+14155550123",
            "preferred_username": "Ada",
            "password": {"type": "bcrypt", "password_hash": HASH_2B},
        },
    )
    users = project.env.services.users

    assert await users.verify_password(project.id, "+14155550123", PASSWORD) == detail["user_id"]
    assert await users.verify_password(project.id, "ada", PASSWORD) == detail["user_id"]


async def test_password_of_another_project_does_not_work(env, project):
    await import_one(project, {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}})
    other = await env.make_project()

    assert await env.services.users.verify_password(other.id, "a@example.com", PASSWORD) is None


async def test_user_without_password_and_unknown_user_fail(project):
    await import_one(project, {"email": "a@example.com"})
    users = project.env.services.users

    assert await users.verify_password(project.id, "a@example.com", PASSWORD) is None
    assert await users.verify_password(project.id, "nobody@example.com", PASSWORD) is None


async def test_passwords_longer_than_72_bytes_compare_on_their_first_72(project):
    long_password = "p" * 72
    password_hash = bcrypt.hashpw(long_password.encode(), bcrypt.gensalt(4)).decode()
    detail = await import_one(
        project, {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": password_hash}}
    )

    assert (
        await project.env.services.users.verify_password(project.id, "a@example.com", long_password + "tail")
        == detail["user_id"]
    )


def spy_on_checkpw(monkeypatch) -> list[bytes]:
    """The hashes bcrypt checks, in order (bcrypt still does the work)."""
    checked: list[bytes] = []
    real_checkpw = bcrypt.checkpw
    monkeypatch.setattr(
        bcrypt, "checkpw", lambda password, hashed: checked.append(hashed) or real_checkpw(password, hashed)
    )
    return checked


async def test_unknown_user_is_checked_against_one_fixed_hash_of_the_configured_cost(backend, make_env, monkeypatch):
    """No timing oracle, and no cost taken from whatever row comes first: the dummy hash is fixed and configured."""
    env = await make_env(backend, passwords=PasswordConfig(dummy_hash_cost=5))
    project, other = await env.make_project(), await env.make_project()
    costly = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(6)).decode()
    await import_one(project, {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": costly}})
    await import_one(project, {"email": "nopassword@example.com"})
    checked = spy_on_checkpw(monkeypatch)
    users = env.services.users

    assert await users.verify_password(project.id, "a@example.com", "wrong") is None
    assert await users.verify_password(project.id, "nobody@example.com", "wrong") is None
    assert await users.verify_password(project.id, "nopassword@example.com", "wrong") is None
    assert await users.verify_password(other.id, "nobody@example.com", "wrong") is None

    assert [h[:7] for h in checked] == [b"$2b$06$", b"$2b$05$", b"$2b$05$", b"$2b$05$"]
    assert checked[1] == checked[2] == checked[3]


@pytest.mark.engine
async def test_a_hash_cheaper_than_the_projects_cost_is_re_hashed_at_the_first_good_sign_in(backend, make_env):
    """A cost-4 bcrypt hash answers a wrong password faster than an unknown login id's dummy: it is legacy."""
    env = await make_env(backend, passwords=PasswordConfig(bcrypt_cost=5))
    project = await env.make_project()
    costlier = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(6)).decode()
    cheap = await import_one(
        project, {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}}
    )
    kept = await import_one(
        project, {"email": "b@example.com", "password": {"type": "bcrypt", "password_hash": costlier}}
    )
    users = env.services.users

    assert await users.verify_password(project.id, "a@example.com", "wrong") is None
    assert await stored_hash(project, cheap["user_id"]) == HASH_2B  # a wrong password proves nothing
    assert await users.verify_password(project.id, "a@example.com", PASSWORD) == cheap["user_id"]
    assert await users.verify_password(project.id, "b@example.com", PASSWORD) == kept["user_id"]

    rehashed = await stored_hash(project, cheap["user_id"])
    assert rehashed.startswith("$2b$05$") and bcrypt.checkpw(PASSWORD.encode(), rehashed.encode())
    assert await stored_hash(project, kept["user_id"]) == costlier  # not cheaper: kept
    assert await users.verify_password(project.id, "a@example.com", PASSWORD) == cheap["user_id"]


async def test_an_unknown_login_id_is_checked_at_the_projects_bcrypt_cost(backend, make_env, monkeypatch):
    env = await make_env(backend, passwords=PasswordConfig(bcrypt_cost=5))
    project = await env.make_project()
    checked = spy_on_checkpw(monkeypatch)

    assert await env.services.users.verify_password(project.id, "nobody@example.com", "wrong") is None

    assert [h[:7] for h in checked] == [b"$2b$05$"]


async def test_an_unknown_login_id_of_an_argon2id_project_runs_an_argon2id_check_on_the_pool(backend, make_env):
    env = await make_env(backend, passwords=PasswordConfig(bcrypt_cost=5))
    argon2_project = await env.make_project(ProjectSettings(password_algorithm="argon2id"))
    bcrypt_project = await env.make_project()
    users = env.services.users

    assert await users.verify_password(argon2_project.id, "nobody@example.com", "wrong") is None
    assert dict(users.passwords.runs) == {"argon2": 1}
    assert await users.verify_password(bcrypt_project.id, "nobody@example.com", "wrong") is None
    assert dict(users.passwords.runs) == {"argon2": 1, "bcrypt": 1}


async def stored_hash(project, user_id: str) -> str:
    [(_, _, value)] = [a for a in await authenticators(project, user_id) if a[:2] == ("primary", "password")]
    return str(value)


COST_15 = "$2b$15$" + HASH_2B[7:]
COST_14 = "$2b$14$" + HASH_2B[7:]


async def test_a_hash_above_the_maximum_cost_fails_its_record_with_the_reason(project):
    body = await run_import(
        project,
        [
            {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": COST_15}},
            {"email": "b@example.com", "mfa": {"password": {"type": "bcrypt", "password_hash": COST_15}}},
            {"email": "c@example.com", "password": {"type": "bcrypt", "password_hash": COST_14}},
            {"email": "d@example.com"},
        ],
    )

    assert [d["outcome"] for d in body["details"]] == ["failed", "failed", "inserted", "inserted"]
    for detail, location in zip(
        body["details"][:2], ["/password/password_hash", "/mfa/password/password_hash"], strict=True
    ):
        (error,) = detail["errors"]
        assert (error["name"], error["reason"]) == ("Invalid", "InvalidBcryptHash")
        assert "cost 15" in error["message"] and "maximum of 14" in error["message"]
        assert error["info"] == {"location": location, "cost": 15, "maximum": 14}
    assert COST_15 not in str(body)


async def test_the_maximum_cost_is_configured(backend, make_env):
    env = await make_env(backend, imports={"max_bcrypt_cost": 10})
    project = await env.make_project()

    body = await run_import(
        project,
        [
            {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": "$2b$11$" + HASH_2B[7:]}},
            {"email": "b@example.com", "password": {"type": "bcrypt", "password_hash": "$2b$10$" + HASH_2B[7:]}},
        ],
    )

    assert [d["outcome"] for d in body["details"]] == ["failed", "inserted"]
    assert body["details"][0]["errors"][0]["info"] == {"location": "/password/password_hash", "cost": 11, "maximum": 10}


async def test_a_stored_hash_above_the_maximum_is_never_run_at_sign_in(backend, make_env, monkeypatch):
    """A hash imported while the limit was higher: the attempt fails after the dummy check only."""
    before = await make_env(backend, imports={"max_bcrypt_cost": 6})
    project = await before.make_project()
    cost_6 = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(6)).decode()
    await import_one(project, {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": cost_6}})
    after = await make_env(backend, imports={"max_bcrypt_cost": 5}, passwords=PasswordConfig(dummy_hash_cost=4))
    checked = spy_on_checkpw(monkeypatch)

    assert await before.services.users.verify_password(project.id, "a@example.com", PASSWORD) is not None
    assert await after.services.users.verify_password(project.id, "a@example.com", PASSWORD) is None

    assert [h[:7] for h in checked] == [b"$2b$06$", b"$2b$04$"]
