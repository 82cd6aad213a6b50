"""Cutting the record stream into requests under the size limit, and the units a resumed run skips or refuses."""

from __future__ import annotations

import asyncio
import bisect
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from userio_client.reader import InputError

if TYPE_CHECKING:
    from userio_client.records import Record
    from userio_client.report import ResumeState

__all__ = ["Batch", "Batcher", "Done", "Rejected", "Unit", "split_batch"]


# Units of work, in input order. The emitter writes them in this order.


@dataclass(eq=False)
class Batch:
    """Consecutive records sent as one request (or, on resume, an already accepted task to follow)."""

    first: int
    records: list[Record]
    task_id: str | None = None
    written: frozenset[int] = frozenset()
    """Global indices whose details a resumed report already has."""
    resubmitted: frozenset[int] = frozenset()
    """Global indices a crashed run may have sent already (its answer was lost)."""
    keys: frozenset[str] = frozenset()
    processed: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)
    runner: asyncio.Task[list[dict[str, Any]]] | None = None
    """The task sending it, whose result is its details (`details.Detail`, one per record)."""
    previous: Batch | None = None
    """The request sent before this one: its status is read first (tasks finish, and are written, in order)."""

    @property
    def last(self) -> int:
        """The global index of the request's last record."""
        return self.first + len(self.records) - 1


@dataclass(eq=False)
class Done:
    """Records a resumed report already has: only their failed lines are written again."""

    first: int
    last: int
    failed: list[bytes]


@dataclass(eq=False)
class Rejected:
    """A record failed here, never sent: too large for any request, or a duplicate of an earlier line."""

    index: int
    record: Record
    message: str
    reason: str = "RecordTooLarge"
    info: dict[str, Any] | None = None


Unit = Batch | Done | Rejected


def split_batch(batch: Batch, cut: int) -> tuple[Batch, Batch]:
    """The first `cut` records and the rest, as two requests."""
    head, tail = batch.records[:cut], batch.records[cut:]
    return (
        Batch(batch.first, head, keys=frozenset(k for r in head for k in r.keys), resubmitted=batch.resubmitted),
        Batch(batch.first + cut, tail, keys=frozenset(k for r in tail for k in r.keys), resubmitted=batch.resubmitted),
    )


class Batcher:
    """Cuts the record stream into units (runs in a worker thread: it reads the file)."""

    def __init__(
        self,
        records: Iterator[Record],
        head: bytes,
        limit: int,
        resume: ResumeState | None,
        identifier: str | None = None,
    ) -> None:
        """`identifier`: records naming one value of it after the first are failed as duplicates (None: not)."""
        self._records = records
        self._identifier = identifier + ":" if identifier is not None else None
        self._first_lines: dict[int, tuple[int, int]] = {}
        """Hash of a normalized identifier -> (index, line) of the first record naming it."""
        self._duplicates: dict[int, tuple[int, str]] = {}
        """Index of a record whose identifier an earlier line named -> (that line, the identifier)."""
        self._head_size = len(head) + len(b"]}")
        self._limit = limit
        self._resume = resume
        self._next: tuple[int, Record] | None = None
        self._index = 0
        self._open_tasks: dict[int, tuple[int, str]] = {}
        self._uncertain_starts: list[int] = []
        self._uncertain: list[tuple[int, int]] = []
        if resume is not None:
            for first, (last, task_id) in resume.tasks.items():
                if any(resume.outcome(i) is None for i in range(first, last + 1)):
                    self._open_tasks[first] = (last, task_id)
            self._uncertain = resume.uncertain
            self._uncertain_starts = [first for first, _ in resume.uncertain]
        self._uncertain_ranges = dict(self._uncertain)
        self.read = 0

    def _peek(self) -> tuple[int, Record] | None:
        if self._next is None:
            record = next(self._records, None)
            if record is None:
                return None
            self._next = (self._index, record)
            self._note_identifier(self._index, record)
            self._index += 1
            self.read += 1
        return self._next

    def _note_identifier(self, index: int, record: Record) -> None:
        """Note a record whose identifier an earlier line named (after the server's normalization).

        The later one would be `skipped` with the earlier one's user id, or overwrite it with upsert.
        """
        if self._identifier is None:
            return
        key = next((k for k in record.keys if k.startswith(self._identifier)), None)
        if key is None:
            return
        digest = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest())
        first_index, first_line = self._first_lines.setdefault(digest, (index, record.line))
        if first_index != index:
            self._duplicates[index] = (first_line, key.removeprefix(self._identifier))

    def _take(self) -> tuple[int, Record]:
        item = self._peek()
        assert item is not None
        self._next = None
        return item

    def _is_done(self, index: int) -> bool:
        return self._resume is not None and self._resume.outcome(index) is not None and index not in self._open_tasks

    def _is_uncertain(self, index: int) -> bool:
        position = bisect.bisect_right(self._uncertain_starts, index) - 1
        return position >= 0 and index <= self._uncertain[position][1]

    def next_unit(self) -> Unit | None:
        """The next unit of work, or None at the end of the input."""
        item = self._peek()
        if item is None:
            return None
        index, record = item
        if index in self._open_tasks:
            return self._journaled(index)
        if self._is_done(index):
            return self._done_run()
        if index in self._uncertain_ranges:
            return self._uncertain_batch(index)
        self._take()
        if (duplicate := self._duplicates.pop(index, None)) is not None:
            first, value = duplicate
            attribute = (self._identifier or ":")[:-1]
            return Rejected(
                index,
                record,
                f"duplicate of line {first}: {attribute} {value!r} (as normalized) names the user of line {first};"
                " not sent: merge the two records, or remove one",
                reason="DuplicateInFile",
                info={"duplicate_of_line": first, attribute: value},
            )
        if self._head_size + len(record.body) > self._limit:
            return Rejected(
                index,
                record,
                f"the record is {len(record.body)} bytes; a request may carry at most {self._limit} bytes in all",
            )
        records, keys, size = [record], set(record.keys), self._head_size + len(record.body)
        resubmitted = {index} if self._is_uncertain(index) else set()
        resumed = self._resume is not None  # else nothing to skip or mark: no per-record look-ups
        while (following := self._peek()) is not None:
            next_index, next_record = following
            if next_index in self._duplicates or (
                resumed and (next_index in self._open_tasks or self._is_done(next_index))
            ):
                break
            grown = size + 1 + len(next_record.body)
            if grown > self._limit:
                break
            self._next = None
            records.append(next_record)
            keys.update(next_record.keys)
            size = grown
            if resumed and self._is_uncertain(next_index):
                resubmitted.add(next_index)
        return Batch(index, records, keys=frozenset(keys), resubmitted=frozenset(resubmitted))

    def _uncertain_batch(self, first: int) -> Batch:
        """A request whose answer was lost, sent again exactly as it was.

        Same records, same Idempotency-Key: the server answers the task the first send created, if it did.
        """
        last = self._uncertain_ranges[first]
        records = []
        for expected in range(first, last + 1):
            item = self._peek()
            if item is None or item[0] != expected:
                raise InputError(None, f"the input ends before record {expected}, sent before the crash: it changed")
            records.append(self._take()[1])
        keys = frozenset(k for r in records for k in r.keys)
        return Batch(first, records, keys=keys, resubmitted=frozenset(range(first, last + 1)))

    def _journaled(self, first: int) -> Batch:
        assert self._resume is not None
        last, task_id = self._open_tasks[first]
        records = []
        for expected in range(first, last + 1):
            item = self._peek()
            if item is None or item[0] != expected:
                raise InputError(None, f"the input ends before record {expected} of task {task_id}: it changed")
            records.append(self._take()[1])
        written = frozenset(i for i in range(first, last + 1) if self._resume.outcome(i) is not None)
        keys = frozenset(k for r in records for k in r.keys)
        return Batch(first, records, task_id=task_id, written=written, keys=keys)

    def _done_run(self) -> Done:
        assert self._resume is not None
        first, record = self._take()
        last = first
        failed = [record.raw] if self._resume.outcome(first) == "failed" else []
        while (following := self._peek()) is not None and len(failed) < 1024:
            index, record = following
            if index in self._open_tasks or not self._is_done(index):
                break
            self._take()
            last = index
            if self._resume.outcome(index) == "failed":
                failed.append(record.raw)
        return Done(first, last, failed)
