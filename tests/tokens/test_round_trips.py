"""A grant's round trips to PostgreSQL (issue 47): what a refresh grant and a password grant send, counted on the
app's own pool.

A refresh grant reads the refresh token with its user (login ids, roles, groups, attributes, sign-in state) in one
statement, then rotates the token in one; the project and the client come from the process's caches. A password
grant reads the user in one statement and records `last_login_at` in one. Each grant is counted three times and the
fewest kept: a cache that expired between two requests of a slow machine costs one read more, not a failure.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from tests.tokens.test_refresh_grant import refresh


async def statements_of(world: Any, send: Callable[[], Awaitable[None]]) -> list[str]:
    """The statements the app's pool ran while `send` ran (the fewest of three tries)."""
    db = world.env.services.db
    sent: list[str] = []
    watched: list[Any] = []
    connect = db._pg_connection

    def log(record: Any) -> None:
        sent.append(record.query)

    @asynccontextmanager
    async def watching_connection() -> AsyncIterator[Any]:
        async with connect() as connection:
            raw = connection._con  # the pool hands out a proxy of it
            if raw not in watched:
                watched.append(raw)
                raw.add_query_logger(log)
            yield connection

    db._pg_connection = watching_connection  # every reader and transaction takes its connection here
    try:
        tries = []
        for _ in range(3):
            sent.clear()
            await send()
            tries.append(list(sent))
    finally:
        del db._pg_connection
        for raw in watched:
            raw.remove_query_logger(log)
    return min(tries, key=len)


@pytest.fixture
def postgres_world(world):
    if world.env.services.db.dialect != "postgres":
        pytest.skip("round trips to a database server: PostgreSQL")
    return world


async def test_a_refresh_grant_is_one_read_and_one_rotation(postgres_world):
    world = postgres_world
    first = await world.sign_in(scope="openid offline_access")
    assert first.status_code == 200, first.text
    state = {"token": first.json()["refresh_token"]}

    async def send() -> None:
        response = await refresh(world, state["token"])
        assert response.status_code == 200, response.text
        state["token"] = response.json()["refresh_token"]

    await send()  # the project's, the client's and the hooks' caches filled
    statements = await statements_of(world, send)

    assert len(statements) == 2, statements
    read, rotation = statements
    assert "FROM userio_refresh_token t LEFT JOIN" in read and "userio_role" in read and "userio_identity" in read
    assert rotation.startswith("WITH used AS (UPDATE userio_refresh_token")


async def test_a_password_grant_is_one_read_and_one_write(postgres_world):
    world = postgres_world

    async def send() -> None:
        response = await world.sign_in(scope="openid")
        assert response.status_code == 200, response.text

    await send()
    statements = await statements_of(world, send)

    assert len(statements) == 2, statements
    assert "userio_identity" in statements[0] and statements[1].startswith('UPDATE "userio_user"')
