"""One call signs a user in or refuses with a typed error (DECISIONS 11); the refusal of a disabled account, an
account outside its valid period or an expired password is told only after the password was right."""

from __future__ import annotations

import pytest

from litestar_userio import (
    InvalidCredentials,
    PasswordExpired,
    UnknownClient,
    UserDisabled,
    UserOutsideValidPeriod,
)
from tests.helpers import HASH_2B, PASSWORD, import_one

PAST = "2020-01-01T00:00:00Z"


def record(email, password=None, **members):
    hashed = {"type": "bcrypt", "password_hash": HASH_2B, **(password or {})}
    return {"email": email, "password": hashed, **members}


@pytest.fixture
async def project(env):
    project = await env.make_project()
    await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=True)
    return project


async def test_sign_in_returns_the_user_id(project):
    detail = await import_one(project, record("ok@example.com"))

    user_id = await project.env.services.users.sign_in(project.id, "ok@example.com", PASSWORD, "app")

    assert user_id == detail["user_id"]


async def test_verify_password_never_returns_a_disabled_user(project):
    await import_one(project, record("off@example.com", disabled=True))
    users = project.env.services.users

    assert await users.verify_password(project.id, "off@example.com", "wrong") is None
    with pytest.raises(UserDisabled):
        await users.verify_password(project.id, "off@example.com", PASSWORD)


@pytest.mark.parametrize(
    ("members", "error"),
    [
        ({"disabled": True}, UserDisabled),
        ({"account_valid_until": PAST}, UserOutsideValidPeriod),
        ({"account_valid_from": "2099-01-01T00:00:00Z"}, UserOutsideValidPeriod),
        ({"password": {"expire_after": PAST}}, PasswordExpired),
    ],
)
async def test_a_refused_account_is_told_only_after_the_right_password(project, members, error):
    members = dict(members)
    password = members.pop("password", None)
    await import_one(project, record("x@example.com", password, **members))
    users = project.env.services.users

    with pytest.raises(InvalidCredentials):
        await users.sign_in(project.id, "x@example.com", "wrong", "app")
    with pytest.raises(error):
        await users.sign_in(project.id, "x@example.com", PASSWORD, "app")


async def test_unknown_login_id_and_wrong_password_are_one_refusal(project):
    await import_one(project, record("a@example.com"))
    users = project.env.services.users

    with pytest.raises(InvalidCredentials) as unknown:
        await users.sign_in(project.id, "nobody@example.com", PASSWORD, "app")
    with pytest.raises(InvalidCredentials) as wrong:
        await users.sign_in(project.id, "a@example.com", "wrong", "app")
    assert unknown.value.message == wrong.value.message


async def test_unknown_client_is_refused_before_the_password_is_checked(project):
    await import_one(project, record("a@example.com"))

    with pytest.raises(UnknownClient):
        await project.env.services.users.sign_in(project.id, "a@example.com", PASSWORD, "nope")


async def test_a_user_inside_a_temporary_disable_window_is_refused_after_the_right_password(project):
    from datetime import timedelta

    from litestar_userio import UserTemporarilyDisabled

    detail = await import_one(project, record("t@example.com"))
    env = project.env
    now = env.clock.now()
    record_ = await env.services.projects.get(project.id)
    await env.services.user_admin.disable(
        record_,
        detail["user_id"],
        reason="free text the client never sees",
        temporarily_disabled_from=now - timedelta(hours=1),
        temporarily_disabled_until=now + timedelta(hours=1),
    )
    users = env.services.users

    with pytest.raises(InvalidCredentials):
        await users.sign_in(project.id, "t@example.com", "wrong", "app")
    with pytest.raises(UserTemporarilyDisabled) as refused:
        await users.sign_in(project.id, "t@example.com", PASSWORD, "app")
    assert "free text" not in refused.value.message
