"""The client's retry policy, seen from outside: which answers it retries, how long it waits, what it tells the user.

The server is an `httpx.MockTransport` playing a script of answers; `asyncio.sleep` records the waits instead of
taking them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from userio_client.client import IMPORT_PATH, AdminClient, Connection, TokenSource, TransferError

URL = "https://userio.example.test"
Answer = httpx.Response | Exception


class Script:
    """A server that gives the scripted answers in order, then 200 `{}`; remembers each request."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if self.answers else httpx.Response(200, json={})
        if isinstance(answer, Exception):
            raise answer
        return answer


def status(code: int, **headers: str) -> httpx.Response:
    return httpx.Response(code, json={"error": f"status {code}"}, headers=headers)


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", record)
    return waits


@pytest.fixture
def client() -> Callable[[Script], tuple[AdminClient, list[str]]]:
    def make(script: Script) -> tuple[AdminClient, list[str]]:
        notes: list[str] = []
        connection = Connection(URL, "acme", TokenSource(token="t", project="acme"), verify=True)
        http = httpx.AsyncClient(base_url=URL, transport=httpx.MockTransport(script))
        return AdminClient(connection, http, notes.append), notes

    return make


async def test_a_get_is_retried_through_server_errors(client: Any, slept: list[float]) -> None:
    script = Script(status(503), status(502))
    admin, notes = client(script)

    assert await admin.get_json(f"{IMPORT_PATH}/task_1", action="read it") == {}
    assert len(script.requests) == 3
    assert slept == [0.5, 1.0]
    assert notes == [
        "server error (503) while trying to read it: status 503; retrying in 0 s",
        "server error (502) while trying to read it: status 502; retrying in 1 s",
    ]


async def test_a_get_gives_up_after_six_attempts_with_capped_backoff(client: Any, slept: list[float]) -> None:
    script = Script(*[status(500)] * 10)
    admin, notes = client(script)

    with pytest.raises(TransferError) as failure:
        await admin.get_json(f"{IMPORT_PATH}/task_1", action="read it")
    assert failure.value.status == 500
    assert failure.value.message == "server error (500) while trying to read it: status 500"
    assert len(script.requests) == 6
    assert slept == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert len(notes) == 5


async def test_a_post_without_idempotency_key_is_not_retried_after_a_server_error(
    client: Any, slept: list[float]
) -> None:
    script = Script(status(503))
    admin, notes = client(script)

    with pytest.raises(TransferError, match=r"server error \(503\)"):
        await admin.post_json(IMPORT_PATH, b"{}", action="start an import")
    assert len(script.requests) == 1
    assert slept == []
    assert notes == []


async def test_a_post_with_idempotency_key_is_retried_like_a_get(client: Any, slept: list[float]) -> None:
    script = Script(status(503))
    admin, _ = client(script)

    body, _ = await admin.post_json(IMPORT_PATH, b"{}", action="start an import", idempotency_key="k1")
    assert body == {}
    assert [r.headers["Idempotency-Key"] for r in script.requests] == ["k1", "k1"]
    assert slept == [0.5]


async def test_a_post_is_retried_when_it_could_not_connect_and_says_so_from_the_second_failure(
    client: Any, slept: list[float]
) -> None:
    script = Script(httpx.ConnectError("Connection refused"), httpx.ConnectError("Connection refused"))
    admin, notes = client(script)

    body, _ = await admin.post_json(IMPORT_PATH, b"{}", action="start an import")
    assert body == {}
    assert len(script.requests) == 3
    assert slept == [0.5, 1.0]
    assert notes == [f"cannot connect to {URL}: connection refused (is the server running?); retrying in 1 s"]


async def test_a_post_that_may_have_reached_the_server_is_not_retried(client: Any, slept: list[float]) -> None:
    script = Script(httpx.ReadTimeout("slow"))
    admin, _ = client(script)

    with pytest.raises(TransferError, match="did not answer in time") as failure:
        await admin.post_json(IMPORT_PATH, b"{}", action="start an import")
    assert isinstance(failure.value.__cause__, httpx.ReadTimeout)
    assert len(script.requests) == 1
    assert slept == []


async def test_a_get_is_retried_after_a_read_timeout_with_a_note(client: Any, slept: list[float]) -> None:
    script = Script(httpx.ReadTimeout("slow"))
    admin, notes = client(script)

    assert await admin.get_json(f"{IMPORT_PATH}/task_1", action="read it") == {}
    assert slept == [0.5]
    assert notes == [f"the server at {URL} did not answer in time (ReadTimeout); retrying in 0 s"]


async def test_an_untrusted_certificate_is_never_retried(client: Any, slept: list[float]) -> None:
    script = Script(httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] self-signed certificate"))
    admin, _ = client(script)

    with pytest.raises(TransferError, match="TLS verification failed"):
        await admin.get_json(f"{IMPORT_PATH}/task_1", action="read it")
    assert len(script.requests) == 1
    assert slept == []


async def test_a_rate_limited_request_waits_as_long_as_the_server_asks(client: Any, slept: list[float]) -> None:
    script = Script(status(429, **{"Retry-After": "3"}))
    admin, notes = client(script)

    body, _ = await admin.post_json(IMPORT_PATH, b"{}", action="start an import")
    assert body == {}
    assert slept == [3.0]
    assert notes == ["rate limited by the server (429): status 429; retry after 3 s; waiting 3 s"]


async def test_a_rate_limit_longer_than_a_minute_ends_the_command(client: Any, slept: list[float]) -> None:
    script = Script(status(429, **{"Retry-After": "120"}))
    admin, _ = client(script)

    with pytest.raises(TransferError) as failure:
        await admin.post_json(IMPORT_PATH, b"{}", action="start an import")
    assert failure.value.retry_after == 120.0
    assert len(script.requests) == 1
    assert slept == []


async def test_the_backoff_grows_across_kinds_of_failure(client: Any, slept: list[float]) -> None:
    script = Script(status(503), status(429), status(429, **{"Retry-After": "2"}), status(503))
    admin, _ = client(script)

    assert await admin.get_json(f"{IMPORT_PATH}/task_1", action="read it") == {}
    assert len(script.requests) == 5
    assert slept == [0.5, 1.0, 2.0, 4.0]


async def test_a_last_rate_limited_attempt_ends_the_command(client: Any, slept: list[float]) -> None:
    script = Script(*[status(429)] * 10)
    admin, _ = client(script)

    with pytest.raises(TransferError, match=r"rate limited by the server \(429\)"):
        await admin.get_json(f"{IMPORT_PATH}/task_1", action="read it")
    assert len(script.requests) == 6
    assert slept == [0.5, 1.0, 2.0, 4.0, 8.0]


async def test_check_access_tries_once(client: Any, slept: list[float]) -> None:
    script = Script(status(503))
    admin, _ = client(script)

    with pytest.raises(TransferError, match=r"server error \(503\)"):
        await admin.check_access()
    assert len(script.requests) == 1
    assert slept == []
