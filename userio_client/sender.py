"""Sending import requests and following their tasks: a bounded number in flight, one user's records in file order."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from userio_client.batches import Batch, Unit, split_batch
from userio_client.client import IMPORT_PATH, TransferError
from userio_client.details import Detail, decode_details, in_order

if TYPE_CHECKING:
    from userio_client.client import AdminClient
    from userio_client.report import ReportWriter

__all__ = ["Sender"]

_POLL_FIRST: Final = 0.05
_POLL_MAX: Final = 0.25
"""Seconds between status reads of a task at most: a finished task is noticed soon (bench/cli_import.py)."""
_MIN_SPLIT: Final = 100
"""Fewest records sent ahead of a record that must wait; fewer wait with it (no flood of tiny requests)."""


class Sender:
    """The requests of one run: each journaled in the report, sent, and its task polled until it completed."""

    def __init__(
        self,
        client: AdminClient,
        report: ReportWriter,
        *,
        head: bytes,
        run_id: str,
        in_flight: int,
        interrupt: asyncio.Event,
        resumed: bool,
    ) -> None:
        """`head`: the request body up to its first record; `interrupt`: once set, nothing more is sent."""
        self.client = client
        self.report = report
        self._head = head
        self._run_id = run_id
        self._interrupt = interrupt
        self._resumed = resumed
        self._slots = asyncio.Semaphore(in_flight)
        self._in_flight: list[Batch] = []
        self._last_admitted: Batch | None = None
        self._keys: dict[str, list[Batch]] = {}
        """Login id -> requests in flight holding it (oldest first)."""
        self.posting = 0
        """Requests sent whose answer has not come yet."""
        self.posting_idle = asyncio.Event()
        self.posting_idle.set()
        self.sent = 0
        """Records sent (and accepted) in this run."""

    @property
    def in_progress(self) -> int:
        """Records the server reported processed in tasks not completed yet (for the progress bar)."""
        return sum(b.processed for b in self._in_flight if not b.done.is_set())

    def release(self, batch: Batch) -> None:
        """`batch`'s details are written: its slot goes to the next request."""
        self._in_flight.remove(batch)
        self._slots.release()

    def _body(self, batch: Batch) -> bytes:
        return self._head + b",".join(r.body for r in batch.records) + b"]}"

    async def _follow(self, batch: Batch) -> list[Detail]:
        try:
            if batch.task_id is None:
                await self._send(batch)
            assert batch.task_id is not None
            details = await self._wait(batch)
        finally:
            batch.done.set()
            for key in batch.keys:
                holders = self._keys.get(key)
                if holders is not None:
                    holders.remove(batch)
                    if not holders:
                        del self._keys[key]
        return in_order(batch, details)

    async def _send(self, batch: Batch) -> None:
        if self._interrupt.is_set():
            await asyncio.Event().wait()  # sent nothing; the interrupt watcher ends the run
        body = self._body(batch)
        self.report.submit(batch.first, batch.last)
        self.posting += 1
        self.posting_idle.clear()
        try:
            try:
                created, _ = await self.client.post_json(
                    IMPORT_PATH,
                    body,
                    action="create an import task",
                    idempotency_key=f"{self._run_id}:{batch.first}-{batch.last}",
                )
            except TransferError as exc:
                if exc.status is not None and 400 <= exc.status < 500:
                    self.report.refused(batch.first, batch.last)
                raise
            task_id = created.get("id")
            if not isinstance(task_id, str):
                raise TransferError("the server accepted an import but sent no task id")
            batch.task_id = task_id
            self.report.task(task_id, batch.first, batch.last)
            self.sent += len(batch.records)
        finally:
            self.posting -= 1
            if not self.posting:
                self.posting_idle.set()

    async def _wait(self, batch: Batch) -> list[Detail]:
        """The task's details once it completed.

        Only the oldest unfinished task is polled: the server queues tasks in order, and results are written in
        order, so reading the status of later ones sooner only costs the server requests (24 tasks polled at
        once took a visible share of its CPU in bench/cli_import.py).
        """
        assert batch.task_id is not None
        if batch.previous is not None:
            await batch.previous.done.wait()
            batch.previous = None  # let finished batches be freed
        delay = _POLL_FIRST
        while True:
            try:
                status = await self.client.import_status(batch.task_id)
            except TransferError as exc:
                if exc.status == 404 and self._resumed:
                    raise TransferError(
                        f"import task {batch.task_id} (records {batch.first}-{batch.last}) is gone from the server "
                        "(tasks are kept 24 hours): whether those records were applied cannot be told from here"
                    ) from exc
                raise
            if status.status == "completed":
                return decode_details(batch.task_id, status.details)
            if isinstance(status.progress, dict):
                batch.processed = int(status.progress.get("processed", 0))
            await asyncio.sleep(delay)
            delay = min(delay * 2, _POLL_MAX)

    def _hold(self, batch: Batch) -> None:
        for key in batch.keys:
            self._keys.setdefault(key, []).append(batch)
        self._in_flight.append(batch)

    def _free_prefix(self, batch: Batch) -> tuple[int, Batch | None]:
        """How many leading records no request in flight holds a login id of, and the first one that blocks."""
        if self._keys.keys().isdisjoint(batch.keys):  # the usual case, without a look at each record
            return len(batch.records), None
        for position, record in enumerate(batch.records):
            for key in record.keys:
                holders = self._keys.get(key)
                if holders:
                    return position, holders[0]
        return len(batch.records), None

    async def admit(self, batch: Batch, queue: asyncio.Queue[Unit | None], group: asyncio.TaskGroup) -> None:
        """Start `batch` once a slot is free, keeping records about one user in file order across requests.

        A record waits while an earlier request in flight holds one of its login ids (the server orders records
        within a task, not across tasks). Rather than hold the whole request back for one such record, the
        records before it go at once and the rest follows when the earlier request is done.
        """
        rest: Batch | None = batch
        while rest is not None:
            await self._slots.acquire()
            if rest.task_id is not None:  # resumed: already on the server, nothing to wait for
                cut = len(rest.records)
            else:
                while True:
                    cut, blocker = self._free_prefix(rest)
                    if blocker is None or cut >= _MIN_SPLIT:
                        break
                    await blocker.done.wait()
            part = rest
            if cut < len(rest.records):
                part, rest = split_batch(rest, cut)
            else:
                rest = None
            self._hold(part)
            part.previous, self._last_admitted = self._last_admitted, part
            part.runner = group.create_task(self._follow(part))
            await queue.put(part)
