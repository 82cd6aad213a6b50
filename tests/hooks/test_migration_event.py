"""The `user.password_migration` event's shape, the check of its answer, and its per-login-id lock (DECISIONS 13)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from litestar_userio.errors import HookDisallowed, HookInvalidResponse
from litestar_userio.hooks.fetch import FetchClient, FetchLimits, FetchSession
from litestar_userio.hooks.lazy_migration_event import MigrationLocks, build_migration_event, migration_response
from litestar_userio.hooks.v8_runtime import HookRuntime, RuntimeLimits
from tests.hooks.test_runtime import hook

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


class OldSystem:
    """A loopback server playing an old system that only checks passwords (as Cognito's InitiateAuth does)."""

    USERS: ClassVar[dict[str, str]] = {"ann@example.com": "right-pw-123"}

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        old = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                old.seen.append({"auth": self.headers["authorization"], **body})
                good = self.headers["authorization"] == "Bearer old-key-123456" and (
                    OldSystem.USERS.get(body["username"]) == body["password"]
                )
                answer = {"sub": "old-1", "email": body["username"], "name": "Ann"} if good else {"error": "nope"}
                data = json.dumps(answer).encode()
                self.send_response(200 if good else 401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


MIGRATION_HOOK = """
export default async function (e: any, ctx: any) {
  const response = await fetch("%s/auth", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${ctx.secrets.OLD_KEY}` },
    body: JSON.stringify({ username: e.payload.login_id, password: e.payload.password }),
  });
  if (!response.ok) return { is_allowed: false, reason: "the old system refused the password" };
  const old = await response.json();
  return { is_allowed: true, user: { email: old.email, name: old.name, custom_attributes: { old_id: old.sub } } };
}
"""


@pytest.fixture(scope="module")
def old_system() -> Iterator[OldSystem]:
    started = OldSystem()
    yield started
    started.close()


@pytest.fixture(scope="module")
async def runtime() -> AsyncIterator[HookRuntime]:
    rt = HookRuntime(RuntimeLimits(pool_size=1, hook_timeout=5.0))
    await rt.start()
    yield rt
    await rt.close()


async def run_migration_hook(runtime: HookRuntime, old: OldSystem, login_id: str, password: str) -> Any:
    secrets = {"OLD_KEY": "old-key-123456"}
    client = FetchClient(timeout=5.0)
    try:
        session = FetchSession(client, [old.origin], FetchLimits(), secrets.values())
        event = build_migration_event(login_id, "email", password, None, "p1", NOW)
        result = await runtime.run(
            hook(MIGRATION_HOOK % old.origin), json.dumps(event), timeout=5.0, secrets=secrets, fetcher=session
        )
    finally:
        await client.close()
    assert result.ok, result.error_message
    return result.response


async def test_a_hook_asks_the_old_system_and_answers_the_record(runtime, old_system) -> None:
    answer = await run_migration_hook(runtime, old_system, "ann@example.com", "right-pw-123")
    assert migration_response(answer) == {
        "email": "ann@example.com",
        "name": "Ann",
        "custom_attributes": {"old_id": "old-1"},
    }
    assert old_system.seen[-1] == {
        "auth": "Bearer old-key-123456",
        "username": "ann@example.com",
        "password": "right-pw-123",
    }


async def test_the_old_systems_refusal_is_a_refused_migration(runtime, old_system) -> None:
    answer = await run_migration_hook(runtime, old_system, "ann@example.com", "wrong-pw-123")
    with pytest.raises(HookDisallowed):
        migration_response(answer)
