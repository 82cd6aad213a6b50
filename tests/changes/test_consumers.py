"""Consumers of the change log (docs/changes.md#consumers): a durable position per project, every committed entry
at least once and in order, the position and the consumer's own writes in one transaction."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import timedelta

import pytest

from litestar_userio.changes.change_service import ChangeConsumer, ChangeService
from litestar_userio.changes.entries import ChangeEntry
from litestar_userio.db.engine import Tx
from tests.changes.test_log import USERS, call
from tests.helpers import run_import, until

pytestmark = pytest.mark.engine  # the consumers' row locks and the order are each engine's


class Recorder:
    def __init__(self, name: str, *, with_imports: bool = True, failures: int = 0) -> None:
        self.name = name
        self.with_imports = with_imports
        self.failures = failures
        self.seen: list[tuple[str, str, str]] = []

    async def wants_imports(self, tx: Tx, project_id: str) -> bool:
        return self.with_imports

    async def handle(self, tx: Tx, project_id: str, entries: Sequence[ChangeEntry]) -> None:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("the consumer's own write failed")
        self.seen.extend((project_id, entry.id, entry.kind) for entry in entries)


@pytest.fixture
async def follow(env) -> AsyncIterator[Callable[[ChangeConsumer], ChangeService]]:
    """`follow(consumer)`: a change service built with `consumer` and started, as another process of the deployment
    would (it sees the others' commits through its poll, made short here), closed after the test."""
    started: list[ChangeService] = []
    config = dataclasses.replace(env.config.changes, poll_interval=timedelta(milliseconds=50))

    def start(consumer: ChangeConsumer) -> ChangeService:
        changes = ChangeService(env.services.db, config, env.clock, consumers=[consumer])
        changes.start()
        started.append(changes)
        return changes

    yield start
    for changes in started:
        await changes.close()


async def test_a_consumer_sees_every_entry_once_in_order_and_keeps_its_position(env, follow):
    project = await env.make_project()
    recorder = Recorder("test-recorder")
    follow(recorder)
    await run_import(project, [{"email": f"u{i}@example.com"} for i in range(3)])
    user = (await call(project, "POST", USERS, {"email": "ada@example.com"})).json()["result"]
    await call(project, "DELETE", f"{USERS}/{user['sub']}")

    await until(lambda: len([s for s in recorder.seen if s[0] == project.id]) >= 5, "five entries handled")

    mine = [s for s in recorder.seen if s[0] == project.id]
    assert [kind for _, _, kind in mine] == ["created"] * 4 + ["deleted"]
    assert len({entry_id for _, entry_id, _ in mine}) == 5

    async def saved() -> bool:  # handled inside the transaction that then saves the position
        return (project.id, "test-recorder") in await env.services.changes.positions([project.id])

    await until(saved, "the consumer's position saved")


async def test_a_consumer_that_fails_gets_the_same_entries_again(env, follow):
    project = await env.make_project()
    recorder = Recorder("test-failing", failures=2)
    follow(recorder)
    await call(project, "POST", USERS, {"email": "ada@example.com"})

    await until(lambda: any(s[0] == project.id for s in recorder.seen), "the entry handled after two failures")

    assert [kind for p, _, kind in recorder.seen if p == project.id] == ["created"]


async def test_a_consumer_without_imports_passes_them_over(env, follow):
    project = await env.make_project()
    recorder = Recorder("test-no-imports", with_imports=False)
    follow(recorder)
    await run_import(project, [{"email": f"u{i}@example.com"} for i in range(3)])
    await call(project, "POST", USERS, {"email": "ada@example.com"})

    await until(lambda: any(s[0] == project.id for s in recorder.seen), "the admin entry handled")
    entries = (await project.get("/_api/admin/users/changes")).json()["result"]["items"]

    assert [kind for p, _, kind in recorder.seen if p == project.id] == ["created"]

    assert len(entries) == 4

    async def past_all() -> bool:  # handled inside the transaction that then saves the position
        position = (await env.services.changes.positions([project.id])).get((project.id, "test-no-imports"))
        return position is not None and f"change_{position.seq}" == entries[-1]["id"]

    await until(past_all, "the consumer's position past every entry, the imported ones too")
