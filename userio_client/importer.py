"""`litestar userio import`: stream a file of users into import tasks, follow them, and write the report.

The flow, and why (options are resolved and the files checked first, in plan.py):

- The input is read twice when it is a file: first to check every record and count them (so a broken line
  19 000 stops the run before anything is sent, and the progress bar knows its total), then to send them
  (records.py).
- Records are cut into requests just under the server's body limit, counting bytes exactly as the server does
  (the request body), with each record's own bytes spliced in: no re-encoding, nothing altered (batches.py).
- Several tasks are in flight at once (bounded), each polled with backoff (sender.py); their details
  (details.py) are written here in input order, with global indices, as tasks complete. A request waits while
  an earlier request still in flight holds one of its records' login ids, so records about one user apply in
  file order even across requests.
- Every request is journaled (report.py) before it is sent and once accepted; `--resume` uses that to finish a
  crashed run without sending any record twice. The closing lines are result.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, BinaryIO

import msgspec

from userio_client.batches import Batch, Batcher, Done, Rejected, Unit
from userio_client.client import TransferError
from userio_client.details import outcome_of
from userio_client.plan import input_pass, source_for
from userio_client.progress import Snapshot
from userio_client.reader import InputError
from userio_client.records import InputPass
from userio_client.report import ReportError, ReportWriter
from userio_client.result import ImportResult
from userio_client.sender import Sender
from userio_client.summary import FailureSummary
from userio_core.files import open_private

if TYPE_CHECKING:
    from userio_client.client import AdminClient
    from userio_client.plan import ImportPlan
    from userio_client.progress import ImportProgress

__all__ = ["Importer", "Interrupted"]

_encoder = msgspec.json.Encoder()


class Interrupted(Exception):
    """Ctrl-C or SIGTERM: stop after the requests being sent have their answers journaled."""


class Importer:
    """One import run: `await Importer(plan, client, progress).run()`."""

    def __init__(self, plan: ImportPlan, client: AdminClient, progress: ImportProgress) -> None:
        settings = plan.settings
        self.plan = plan
        self.settings = settings
        self.client = client
        self.progress = progress
        self.upsert = plan.upsert
        self.dry_run = plan.dry_run
        self.source = (
            None
            if plan.age_identities
            else source_for(plan.source, plan.header.get("firebase_hash_config"), bool(plan.header.get("new_ids")))
        )
        self.kept_ids = 0
        """Records of this run sent with the old system's id as `sub` (`--from`, without `--new-ids`)."""
        self.failed_path = plan.failed
        self.resume = plan.resume
        self.snapshot = Snapshot(total=plan.total)
        if plan.resume is not None:
            self.snapshot.counts = dict(plan.resume.counts)
            self.snapshot.done = self.snapshot.done_at_start = plan.resume.done
        head: dict[str, Any] = {"identifier": plan.identifier, "upsert": plan.upsert}
        if plan.dry_run:  # only when asked: the reference API knows no `dry_run`
            head["dry_run"] = True
        self._head = _encoder.encode(head)[:-1] + b',"records":['
        self._interrupt = asyncio.Event()
        self._interrupts = 0
        self.report: ReportWriter | None = None
        self._sender: Sender | None = None
        self._failed: BinaryIO | None = None
        self._failures = FailureSummary() if plan.resume is None else None
        """A new run's failures and warnings, counted as written (a resumed run reads its whole report)."""

    # Writing.

    def _write_failed(self, lines: list[bytes]) -> None:
        assert self._failed is not None
        if lines:
            self._failed.write(b"".join(lines))

    def _flush(self) -> None:
        assert self._failed is not None
        self._failed.flush()

    def _summarize(self, line: dict[str, Any]) -> None:
        if self._failures is not None:
            self._failures.add(_encoder.encode(line))

    def _count(self, index: int, outcome: str) -> None:
        self.snapshot.counts[outcome] += 1
        self.snapshot.done += 1
        if self.resume is not None:
            self.resume.record(index, outcome)

    async def _emit(self, unit: Unit, reader: InputPass) -> None:
        assert self.report is not None
        if isinstance(unit, Done):
            self._write_failed([reader.failed_line(raw) for raw in unit.failed])
            return
        if isinstance(unit, Rejected):
            error: dict[str, Any] = {"name": "Invalid", "reason": unit.reason, "message": unit.message}
            if unit.info is not None:
                error["info"] = unit.info
            errors = [error]
            rejected = {
                "index": unit.index,
                "line": unit.record.line,
                "task": None,
                "outcome": "failed",
                "errors": errors,
            }
            self.report.write([rejected])
            self._summarize(rejected)
            self._write_failed([reader.failed_line(unit.record.raw)])
            self._count(unit.index, "failed")
            self._flush()
            return
        assert unit.runner is not None
        details = await unit.runner
        lines: list[Any] = []
        failed: list[bytes] = []
        for index, record, detail in zip(itertools.count(unit.first), unit.records, details):
            outcome = outcome_of(unit, detail)
            if outcome == "failed":
                failed.append(reader.failed_line(record.raw))
            if index in unit.written:
                continue
            # The server's members in its order (values as sent), between ours; `index` becomes global.
            line: dict[str, Any] = {"index": index, "line": record.line, "task": unit.task_id}
            line.update(detail)
            line["index"] = index
            if record.warnings:
                line["client_warnings"] = record.warnings
            if index in unit.resubmitted:
                line["resubmitted"] = True
            line["record"] = line.pop("record", None)  # last: the long part, after what a reader scans for
            lines.append(line)
            self.kept_ids += record.kept_id
            self._count(index, outcome)
            if outcome == "failed" or "client_warnings" in line or line.get("warnings"):
                self._summarize(line)
        self.report.write(lines)
        self._write_failed(failed)
        self._flush()
        assert self._sender is not None
        self._sender.release(unit)

    # The run.

    def _install_signals(self) -> Callable[[], None]:
        loop = asyncio.get_running_loop()
        installed: list[int] = []

        def interrupted() -> None:
            self._interrupts += 1
            if self._interrupts == 1:
                self.progress.note(
                    "interrupted: waiting for the answers to requests being sent (press Ctrl-C again to stop now)"
                )
            self._interrupt.set()

        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(number, interrupted)
                    installed.append(number)

        def remove() -> None:
            for number in installed:
                loop.remove_signal_handler(number)

        return remove

    async def _watch_interrupt(self) -> None:
        await self._interrupt.wait()
        assert self._sender is not None
        while self._sender.posting and self._interrupts < 2:
            idle = asyncio.ensure_future(self._sender.posting_idle.wait())
            again = asyncio.ensure_future(self._second_interrupt())
            await asyncio.wait([idle, again], return_when=asyncio.FIRST_COMPLETED)
            idle.cancel()
            again.cancel()
        raise Interrupted()

    async def _second_interrupt(self) -> None:
        while self._interrupts < 2:
            await asyncio.sleep(0.05)

    async def _tick(self) -> None:
        assert self._sender is not None
        while True:
            self.snapshot.in_progress = self._sender.in_progress
            self.progress.update(self.snapshot)
            await asyncio.sleep(0.25)

    async def _produce(self, batcher: Batcher, queue: asyncio.Queue[Unit | None], group: asyncio.TaskGroup) -> None:
        assert self._sender is not None
        while True:
            unit = await asyncio.to_thread(batcher.next_unit)
            self.snapshot.read = batcher.read
            if unit is None:
                break
            if isinstance(unit, Batch):
                await self._sender.admit(unit, queue, group)
            else:
                await queue.put(unit)
        await queue.put(None)

    async def _consume(self, queue: asyncio.Queue[Unit | None], reader: InputPass) -> None:
        while (unit := await queue.get()) is not None:
            await self._emit(unit, reader)

    async def run(self) -> ImportResult:
        """Send everything not done yet, follow it to the end, write report and failed file."""
        with _rare_collections():
            return await self._run()

    async def _run(self) -> ImportResult:
        settings = self.settings
        reader = self.plan.stdin
        if reader is None:
            assert settings.path is not None
            reader = input_pass(
                settings.path, self.source, lambda: self.upsert, self.plan.phone_region, self.plan.age_identities
            )
        stream = reader.stream
        self.report = ReportWriter(settings.report, append=self.resume is not None)
        self._sender = Sender(
            self.client,
            self.report,
            head=self._head,
            run_id=self.plan.header["run_id"],
            in_flight=self.plan.in_flight,
            interrupt=self._interrupt,
            resumed=self.resume is not None,
        )
        self._failed = open_private(self.failed_path, exclusive=False)
        remove_signals = self._install_signals()
        try:
            self.report.run(self.plan.header)
            self._write_failed([reader.failed_header])
            batcher = Batcher(
                reader.records(),
                self._head,
                self.plan.max_request_bytes,
                self.resume,
                # With upsert, later records about a user update it in file order (docs/reference.md#import-updates):
                # not duplicates.
                None if self.upsert else self.plan.identifier,
            )
            queue: asyncio.Queue[Unit | None] = asyncio.Queue(maxsize=self.plan.in_flight + 64)
            try:
                async with asyncio.TaskGroup() as group:
                    watcher = group.create_task(self._watch_interrupt())
                    ticker = group.create_task(self._tick())
                    group.create_task(self._produce(batcher, queue, group))
                    await self._consume(queue, reader)
                    watcher.cancel()
                    ticker.cancel()
            except BaseExceptionGroup as group_error:
                raise _first_error(group_error) from None
            if self.snapshot.total is None:
                self.snapshot.total = batcher.read
            self.snapshot.in_progress = 0
            summary = {
                "records": batcher.read,
                **self.snapshot.counts,
                "dry_run": self.dry_run,
                "finished_at": datetime.now(UTC).isoformat(),
            }
            self.report.summary(summary)
            self.report.sync()
            self.report.close()
            failures = self._failures if self._failures is not None else FailureSummary.from_report(settings.report)
            failures.write(self.plan.summary_path, records=batcher.read, counts=self.snapshot.counts)
            return ImportResult(
                total=batcher.read,
                counts=dict(self.snapshot.counts),
                elapsed=self.snapshot.elapsed,
                sent=self._sender.sent,
                done_before=self.snapshot.done_at_start,
                report=settings.report,
                failed=self.failed_path,
                dry_run=self.dry_run,
                failures=failures,
                summary_path=self.plan.summary_path,
                kept_ids=self.kept_ids,
            )
        finally:
            remove_signals()
            self._failed.close()
            self.report.close()
            if stream is not sys.stdin.buffer:
                stream.close()


@contextlib.contextmanager
def _rare_collections() -> Iterator[None]:
    """Run with the cyclic garbage collector mostly idle.

    A run allocates a few objects per record, nearly all freed by reference counting, yet the default
    collections kept walking every live object (modules, records in flight): 0.45 s of CPU per 100 000
    records (bench/cli_import.py). Objects that exist before the run are frozen out of collections, and
    collections are 30 times rarer.
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _first_error(group: BaseExceptionGroup[Any]) -> BaseException:
    """The error that stopped a run: ours first, then anything else (never a bare cancellation)."""
    flat: list[BaseException] = []

    def walk(error: BaseException) -> None:
        if isinstance(error, BaseExceptionGroup):
            for inner in error.exceptions:
                walk(inner)
        else:
            flat.append(error)

    walk(group)
    for kind in (TransferError, InputError, ReportError, Interrupted):
        for error in flat:
            if isinstance(error, kind):
                return error
    return next((e for e in flat if not isinstance(e, asyncio.CancelledError)), flat[0])
