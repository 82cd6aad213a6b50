"""An imported user signs in with its bcrypt password (DECISIONS 3, `verify_password`)."""

from __future__ import annotations

import bcrypt
import pytest

from tests.helpers import HASH_2A, HASH_2B, HASH_2Y, PASSWORD, import_one


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


async def test_unknown_user_costs_as_much_bcrypt_work_as_a_known_one(project, monkeypatch):
    """No timing oracle: the unknown-user path also runs bcrypt, at the cost of the project's hashes."""
    costly = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(12)).decode()
    await import_one(project, {"email": "a@example.com", "password": {"type": "bcrypt", "password_hash": costly}})
    checked: list[bytes] = []
    real_checkpw = bcrypt.checkpw
    monkeypatch.setattr(
        bcrypt, "checkpw", lambda password, hashed: checked.append(hashed) or real_checkpw(password, hashed)
    )
    users = project.env.services.users

    await users.verify_password(project.id, "a@example.com", "wrong")
    await users.verify_password(project.id, "nobody@example.com", "wrong")

    assert [h[:7] for h in checked] == [b"$2b$12$", b"$2b$12$"]
