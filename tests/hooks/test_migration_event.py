"""The `user.password_migration` event's shape, the check of its answer, and its per-login-id lock (DECISIONS 13)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from litestar_userio.errors import HookDisallowed, HookInvalidResponse
from litestar_userio.hooks.migration import MigrationLocks, build_migration_event, migration_response

NOW = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)


def test_event_carries_the_login_id_the_password_and_the_waiting_user() -> None:
    event = build_migration_event("ann@example.com", "email", "s3cret!", None, "p1", NOW)
    assert event["type"] == "user.password_migration"
    assert event["payload"] == {
        "login_id": "ann@example.com",
        "login_id_type": "email",
        "password": "s3cret!",
        "user": None,
    }
    assert event["context"]["app_id"] == "p1"
    assert event["context"]["timestamp"] == int(NOW.timestamp())


def test_event_refuses_an_unknown_login_id_type() -> None:
    with pytest.raises(ValueError, match="login_id_type"):
        build_migration_event("ann", "username", "pw", None, "p1", NOW)


def test_allowed_answer_gives_the_record() -> None:
    record = {"email": "ann@example.com", "name": "Ann"}
    assert migration_response({"is_allowed": True, "user": record}) == record
    assert migration_response({"is_allowed": True}) is None


def test_refusal_is_hook_disallowed_with_its_reason() -> None:
    with pytest.raises(HookDisallowed) as caught:
        migration_response({"is_allowed": False, "reason": "wrong password"})
    assert caught.value.to_object().info == {"reason": "wrong password"}


@pytest.mark.parametrize(
    "answer",
    [
        None,
        "yes",
        {},
        {"is_allowed": "true"},
        {"is_allowed": True, "mutations": {}},
        {"is_allowed": True, "user": ["ann"]},
        {"is_allowed": True, "user": {"email": "a@example.com", "password": {"type": "bcrypt"}}},
        {"is_allowed": False, "title": 3},
        {"is_allowed": False, "user": {}},
    ],
)
def test_a_malformed_answer_fails_closed(answer: Any) -> None:
    with pytest.raises(HookInvalidResponse):
        migration_response(answer)


async def test_one_run_per_login_id_at_a_time() -> None:
    locks = MigrationLocks()
    inside = 0
    most = 0
    order: list[str] = []

    async def run(login_id: str, name: str) -> None:
        nonlocal inside, most
        async with locks.hold("p1", login_id):
            inside += 1
            most = max(most, inside)
            order.append(f"{name}+")
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            order.append(f"{name}-")
            inside -= 1

    await asyncio.gather(run("ann", "a"), run("ann", "b"), run("ann", "c"))
    assert most == 1
    assert order == ["a+", "a-", "b+", "b-", "c+", "c-"]
    assert len(locks) == 0


async def test_different_login_ids_do_not_wait_for_each_other() -> None:
    locks = MigrationLocks()
    release = asyncio.Event()
    entered: list[str] = []

    async def holder() -> None:
        async with locks.hold("p1", "ann"):
            entered.append("ann")
            await release.wait()

    task = asyncio.create_task(holder())
    await asyncio.sleep(0)
    async with locks.hold("p1", "bob"):
        entered.append("bob")
    release.set()
    await task
    assert entered == ["ann", "bob"]
    assert len(locks) == 0
