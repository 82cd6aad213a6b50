"""`litestar userio import`: stream a file of users into import tasks, follow them, and write the report.

The flow, and why:

- The input is read twice when it is a file: first to check every record and count them (so a broken line
  19 000 stops the run before anything is sent, and the progress bar knows its total), then to send them.
- Records are cut into requests just under the server's body limit, counting bytes exactly as the server does
  (the request body), with each record's own bytes spliced in: no re-encoding, nothing altered.
- Several tasks are in flight at once (bounded), each polled with backoff; their details are written in input
  order, with global indices, as tasks complete. A request waits while an earlier request still in flight holds
  one of its records' login ids, so records about one user apply in file order even across requests.
- Every request is journaled (report.py) before it is sent and once accepted; `--resume` uses that to finish a
  crashed run without sending any record twice.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import gc
import hashlib
import itertools
import os
import shlex
import signal
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Final

import msgspec

from litestar_userio.files import open_private
from litestar_userio.transfer.client import IMPORT_PATH, AdminClient, Connection, TransferError
from litestar_userio.transfer.converters import (
    SOURCE_TITLES,
    SOURCES,
    ConversionError,
    Source,
    firebase_hash_config,
    guess_source,
    source_with,
)
from litestar_userio.transfer.phones import PhoneFixer
from litestar_userio.transfer.progress import ImportProgress, Snapshot, format_count
from litestar_userio.transfer.reader import (
    CSVRows,
    InputError,
    JSONRecords,
    RequestOptions,
    decode_record,
    looks_like_csv,
    one_line,
)
from litestar_userio.transfer.report import OUTCOMES, ReportError, ReportWriter, ResumeState, read_report
from litestar_userio.transfer.summary import FailureSummary, failures_path
from litestar_userio.users.login_ids import normalize_login_id

__all__ = [
    "DEFAULT_MAX_REQUEST_BYTES",
    "ImportPlan",
    "ImportResult",
    "ImportSettings",
    "Importer",
    "InputSummary",
    "Interrupted",
    "describe_result",
    "plan_import",
    "scan_input",
]

DEFAULT_MAX_REQUEST_BYTES: Final = 500_000
"""500 KB, decimal; the server answers 413 above it (docs/reference.md#limits)."""
DEFAULT_IN_FLIGHT: Final = 24
"""Tasks outstanding at once: enough queued work that every worker stays busy while earlier tasks finish
(bench/cli_import.py: with 4 the two workers waited for the client between tasks; the server queues them)."""
_POLL_FIRST: Final = 0.05
_POLL_MAX: Final = 0.25
"""Seconds between status reads of a task at most: a finished task is noticed soon (bench/cli_import.py)."""
_LOGIN_IDS: Final = ("email", "phone_number", "preferred_username")
_MIN_SPLIT: Final = 100
"""Fewest records sent ahead of a record that must wait; fewer wait with it (no flood of tiny requests)."""

_encoder = msgspec.json.Encoder()


@dataclass
class ImportSettings:
    """What one `litestar userio import` run was asked to do (None: not given on the command line)."""

    path: Path | None
    """The input file; None reads standard input."""
    source: str | None = None
    """`--from`: a key of `converters.SOURCES`."""
    identifier: str | None = None
    upsert: bool | None = None
    dry_run: bool | None = None
    report: Path = Path("report.ndjson")
    failed: Path | None = None
    resume: bool = False
    """Continue the run recorded in `report`."""
    in_flight: int | None = None
    max_request_bytes: int | None = None
    phone_region: str | None = None
    """`--phone-region`: national and spaced numbers become E.164 for this region before sending."""
    firebase_hash_config: Path | None = None
    """`--firebase-hash-config`: the project's scrypt parameters, put into every converted Firebase password."""


@dataclass
class ImportResult:
    """How a run ended."""

    total: int
    counts: dict[str, int]
    elapsed: float
    sent: int
    """Records sent (and completed) in this run."""
    report: Path
    failed: Path
    dry_run: bool
    failures: FailureSummary
    summary_path: Path
    done_before: int = 0
    """A resumed run: records the earlier run(s) had an outcome for (in `counts` too, not sent again)."""

    @property
    def exit_code(self) -> int:
        """0 when nothing failed, 1 when some records failed."""
        return 1 if self.counts["failed"] else 0


@dataclass(slots=True)
class _Record:
    line: int
    raw: bytes
    """Exactly as read (what the failed file gets)."""
    body: bytes
    """What goes into the request: the record itself, or the converted one with `--from`."""
    keys: tuple[str, ...]
    """Normalized login ids, for ordering across requests."""
    warnings: list[dict[str, str]] | None = None
    """What the client changed or could not carry (`--from`, `--phone-region`), for the report."""


class _LoginIds(msgspec.Struct):
    """The members the client reads of a record it sends as is (msgspec skips the rest without building it)."""

    email: Any = None
    phone_number: Any = None
    preferred_username: Any = None


_login_ids_decoder = msgspec.json.Decoder(_LoginIds)


def _keys(email: Any, phone: Any, username: Any) -> tuple[str, ...]:
    """The server's own normalization (users/login_ids.py), so both sides agree on which records are one user."""
    keys = []
    if isinstance(email, str):
        keys.append("email:" + normalize_login_id("email", email))
    if isinstance(phone, str):
        keys.append("phone_number:" + normalize_login_id("phone_number", phone))
    if isinstance(username, str):
        keys.append("preferred_username:" + normalize_login_id("preferred_username", username))
    return tuple(keys)


def _login_keys(record: dict[str, Any]) -> tuple[str, ...]:
    return _keys(record.get("email"), record.get("phone_number"), record.get("preferred_username"))


def _raw_login_keys(line: int, raw: bytes, *, normalize: bool = True) -> tuple[str, ...]:
    """Login keys straight from the record's bytes; an `InputError` when it is not one JSON object.

    `normalize=False` only checks the record (the first pass over a file needs no keys).
    """
    try:
        ids = _login_ids_decoder.decode(raw)
    except msgspec.ValidationError as exc:
        raise InputError(line, f"a record must be a JSON object ({exc})") from exc
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise InputError(line, f"not a valid JSON record: {exc}") from exc
    return _keys(ids.email, ids.phone_number, ids.preferred_username) if normalize else ()


class _Input:
    """One pass over the input: records with their bytes, plus what the failed file needs."""

    def __init__(
        self,
        stream: BinaryIO,
        source: Source | None,
        upsert: Callable[[], bool],
        *,
        late_options: bool = True,
        ignored: frozenset[str] = frozenset(),
        phones: PhoneFixer | None = None,
    ) -> None:
        self.stream = stream
        self._source = source
        self._upsert = upsert
        self._phones = phones
        self.with_keys = True
        """False for a pass that only checks records (no login-id normalization needed)."""
        self.csv: CSVRows | None = None
        self.json: JSONRecords | None = None
        self._convert = source.convert if source is not None else None
        if source is not None and source.reads == "csv":
            self.csv = CSVRows(stream)
        elif source is not None and source.csv_header is not None and looks_like_csv(stream):
            self.csv = CSVRows(stream, header=source.csv_header)
            self._convert = source.convert_csv
        else:
            members = source.members if source is not None else None
            self.json = JSONRecords(stream, late_options=late_options, ignored=ignored, members=members)
            if source is not None and self.json.layout == "request":
                raise InputError(None, f"--from {source.name} reads the {source.name} export, not an import request")

    @property
    def layout(self) -> str:
        """`ndjson`, `array`, `request` or `csv`."""
        return "csv" if self.json is None else self.json.layout

    @property
    def options(self) -> RequestOptions:
        """The request object's own identifier/upsert/dry_run (empty for other layouts)."""
        return self.json.options if self.json is not None else RequestOptions()

    @property
    def failed_header(self) -> bytes:
        """What the failed file starts with (the CSV header row)."""
        if self.csv is None:
            return b""
        header = self.csv.header_raw
        return header if header.endswith(b"\n") else header + b"\n"

    def failed_line(self, raw: bytes) -> bytes:
        """A failed record as the failed file gets it: its own bytes, on one line (CSV: its own row)."""
        if self.csv is not None:
            return raw if raw.endswith(b"\n") else raw + b"\n"
        if self.layout == "ndjson":
            return raw + b"\n"  # the line as read (a CRLF line keeps its CR)
        return one_line(raw) + b"\n"

    def records(self) -> Iterator[_Record]:
        """The records in input order."""
        if self.csv is not None:
            assert self._source is not None
            for row in self.csv:
                yield self._converted(row.line, row.raw, row.values)
            return
        assert self.json is not None
        ndjson = self.json.layout == "ndjson"
        phones = self._phones
        for item in self.json:
            if self._source is not None:
                yield self._converted(item.line, item.raw, decode_record(item))
                continue
            body = item.raw.strip(b" \t\r") if ndjson else item.raw
            if phones is not None and phones.may_change(body):
                value = decode_record(item)
                warnings: list[dict[str, str]] = []
                if phones.fix(value, warnings):
                    yield _Record(item.line, item.raw, _encoder.encode(value), _login_keys(value), warnings)
                    continue
            yield _Record(item.line, item.raw, body, _raw_login_keys(item.line, body, normalize=self.with_keys))

    def _converted(self, line: int, raw: bytes, value: Any) -> _Record:
        assert self._source is not None
        warnings: list[dict[str, str]] = []
        try:
            assert self._convert is not None
            record = self._convert(value, upsert=self._upsert(), warnings=warnings)
        except ConversionError as exc:
            raise InputError(line, str(exc)) from exc
        if self._phones is not None:
            self._phones.fix(record, warnings)
        return _Record(line, raw, _encoder.encode(record), _login_keys(record), warnings or None)


def _open(path: Path | None) -> BinaryIO:
    if path is None:
        return sys.stdin.buffer
    try:
        return path.open("rb")
    except OSError as exc:
        raise TransferError(f"cannot read {path}: {exc.strerror}") from exc


@dataclass
class InputSummary:
    """What the first pass over a file found."""

    records: int
    layout: str
    options: RequestOptions
    size: int


def scan_input(path: Path, source: Source | None, phone_region: str | None = None) -> InputSummary:
    """Check every record of a file (and convert it with `--from`) without sending anything; count them."""
    stream = _open(path)
    with stream:
        size = os.fstat(stream.fileno()).st_size
        phones = PhoneFixer(phone_region) if phone_region else None
        reader = _Input(stream, source, lambda: False, phones=phones)
        if reader.json is not None and source is None and phones is None:
            count = _check_records(reader.json)
        else:
            reader.with_keys = False
            count = sum(1 for _ in reader.records())
        return InputSummary(count, reader.layout, reader.options, size)


def _check_records(records: JSONRecords) -> int:
    """Check records sent as they are, and count them: `_Input.records` less what only sending needs."""
    strip = records.layout == "ndjson"
    count = 0
    for item in records:
        _raw_login_keys(item.line, item.raw.strip(b" \t\r") if strip else item.raw, normalize=False)
        count += 1
    return count


# Units of work, in input order. The emitter writes them in this order.


@dataclass(eq=False)
class _Batch:
    """Consecutive records sent as one request (or, on resume, an already accepted task to follow)."""

    first: int
    records: list[_Record]
    task_id: str | None = None
    written: frozenset[int] = frozenset()
    """Global indices whose details a resumed report already has."""
    resubmitted: frozenset[int] = frozenset()
    """Global indices a crashed run may have sent already (its answer was lost)."""
    keys: frozenset[str] = frozenset()
    processed: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)
    runner: asyncio.Task[list[_Detail]] | None = None
    previous: _Batch | None = None
    """The request sent before this one: its status is read first (tasks finish, and are written, in order)."""

    @property
    def last(self) -> int:
        return self.first + len(self.records) - 1


@dataclass(eq=False)
class _Done:
    """Records a resumed report already has: only their failed lines are written again."""

    first: int
    last: int
    failed: list[bytes]


@dataclass(eq=False)
class _Rejected:
    """A record failed here, never sent: too large for any request, or a duplicate of an earlier line."""

    index: int
    record: _Record
    message: str
    reason: str = "RecordTooLarge"
    info: dict[str, Any] | None = None


_Unit = _Batch | _Done | _Rejected


_Detail = dict[str, msgspec.Raw]
"""A task's detail about one record: each member's JSON exactly as the server sent it."""
_details_decoder = msgspec.json.Decoder(list[_Detail])
_OUTCOMES_JSON: Final = {_encoder.encode(name): name for name in OUTCOMES}


def _decode_details(task_id: str, details: msgspec.Raw) -> list[_Detail]:
    """The details of a completed task; their members stay undecoded (they go into the report as they are)."""
    raw = bytes(details)
    if b"\n" in raw or b"\r" in raw:
        raw = msgspec.json.format(raw, indent=-1)  # one report line per record, whatever the server's layout
    try:
        return _details_decoder.decode(raw)
    except msgspec.DecodeError as exc:
        raise TransferError(f"task {task_id} completed without details") from exc


def _in_order(batch: _Batch, details: list[_Detail]) -> list[_Detail]:
    """The details by record position; a `TransferError` unless there is exactly one per record."""
    count = len(batch.records)
    wrong = TransferError(f"task {batch.task_id} reported {len(details)} details for {count} records")
    if len(details) != count:
        raise wrong
    ordered: list[_Detail | None] = [None] * count
    for detail in details:
        try:
            position = int(bytes(detail["index"]))
        except (KeyError, ValueError):
            raise wrong from None
        if not 0 <= position < count or ordered[position] is not None:
            raise wrong
        ordered[position] = detail
    return ordered  # type: ignore[return-value]  # one detail per position: none is left None


def _outcome(batch: _Batch, detail: _Detail) -> str:
    raw = detail.get("outcome")
    outcome = _OUTCOMES_JSON.get(bytes(raw)) if raw is not None else None
    if outcome is None:
        value = msgspec.json.decode(raw) if raw is not None else None
        if value not in OUTCOMES:
            raise TransferError(f"task {batch.task_id} reported an unknown outcome {value!r}")
        outcome = value
    return outcome


def _split(batch: _Batch, cut: int) -> tuple[_Batch, _Batch]:
    """The first `cut` records and the rest, as two requests."""
    head, tail = batch.records[:cut], batch.records[cut:]
    return (
        _Batch(batch.first, head, keys=frozenset(k for r in head for k in r.keys), resubmitted=batch.resubmitted),
        _Batch(batch.first + cut, tail, keys=frozenset(k for r in tail for k in r.keys), resubmitted=batch.resubmitted),
    )


class _Batcher:
    """Cuts the record stream into units (runs in a worker thread: it reads the file)."""

    def __init__(
        self,
        records: Iterator[_Record],
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
        self._next: tuple[int, _Record] | None = None
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

    def _peek(self) -> tuple[int, _Record] | None:
        if self._next is None:
            record = next(self._records, None)
            if record is None:
                return None
            self._next = (self._index, record)
            self._note_identifier(self._index, record)
            self._index += 1
            self.read += 1
        return self._next

    def _note_identifier(self, index: int, record: _Record) -> None:
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

    def _take(self) -> tuple[int, _Record]:
        item = self._peek()
        assert item is not None
        self._next = None
        return item

    def _is_done(self, index: int) -> bool:
        return self._resume is not None and self._resume.outcome(index) is not None and index not in self._open_tasks

    def _is_uncertain(self, index: int) -> bool:
        position = bisect.bisect_right(self._uncertain_starts, index) - 1
        return position >= 0 and index <= self._uncertain[position][1]

    def next_unit(self) -> _Unit | None:
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
            return _Rejected(
                index,
                record,
                f"duplicate of line {first}: {attribute} {value!r} (as normalized) names the user of line {first};"
                " not sent: merge the two records, or remove one",
                reason="DuplicateInFile",
                info={"duplicate_of_line": first, attribute: value},
            )
        if self._head_size + len(record.body) > self._limit:
            return _Rejected(
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
        return _Batch(index, records, keys=frozenset(keys), resubmitted=frozenset(resubmitted))

    def _uncertain_batch(self, first: int) -> _Batch:
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
        return _Batch(first, records, keys=keys, resubmitted=frozenset(range(first, last + 1)))

    def _journaled(self, first: int) -> _Batch:
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
        return _Batch(first, records, task_id=task_id, written=written, keys=keys)

    def _done_run(self) -> _Done:
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
        return _Done(first, last, failed)


class Interrupted(Exception):
    """Ctrl-C or SIGTERM: stop after the requests being sent have their answers journaled."""


@dataclass
class ImportPlan:
    """A run with every option resolved (flags, then the resumed report, then the request object, then defaults)."""

    settings: ImportSettings
    identifier: str
    upsert: bool
    dry_run: bool
    source: str | None
    failed: Path
    total: int | None
    header: dict[str, Any]
    resume: ResumeState | None
    stdin: _Input | None = None
    """Standard input, already opened (its request options had to be read before the header)."""
    in_flight: int = DEFAULT_IN_FLIGHT
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    phone_region: str | None = None
    summary_path: Path = Path("report.failures.json")
    looks_like: str | None = None
    """Without `--from`: the source whose export the input looks like (`converters.guess_source`), for a hint."""


def _converter(source: str | None, hash_config_path: str | None) -> Source | None:
    """The `--from` source of a run, with the Firebase hash config file's parameters when one is given."""
    if source is None:
        return None
    if hash_config_path is None:
        return SOURCES[source]
    try:
        text = Path(hash_config_path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TransferError(f"cannot read the Firebase hash config {hash_config_path}: {exc}") from exc
    try:
        return source_with(source, firebase_hash_config=firebase_hash_config(text))
    except ConversionError as exc:
        raise TransferError(f"{hash_config_path}: {exc}") from exc


def _looks_like(path: Path) -> str | None:
    try:
        with path.open("rb") as stream:
            return guess_source(stream.read(1 << 16))
    except OSError:
        return None


def from_hint(path: Path | str, source: str) -> str:
    """The hint for a file sent without `--from` that looks like `source`'s export."""
    return f"hint: {path} looks like {SOURCE_TITLES[source]}: import it with --from {source}"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError as exc:
        raise TransferError(f"cannot read {path}: {exc.strerror}") from exc


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def _taken(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def plan_import(settings: ImportSettings, *, connection: Connection) -> ImportPlan:
    """Check the input, the report and the options before anything is sent; raise on any problem.

    A resumed run takes every setting from its report's header (the report, failed and summary files, the
    source, identifier, upsert, dry run, phone region, request size); a new run never writes into a file
    that has content, so nothing one run wrote is overwritten or appended to by another.
    """
    from litestar_userio.transfer.phones import check_region

    resume: ResumeState | None = None
    previous: dict[str, Any] = {}
    if settings.resume:
        resume = read_report(settings.report)
        previous = resume.header
    elif _taken(settings.report):
        raise TransferError(
            f"{settings.report} exists from an earlier run: pass --resume {settings.report} to continue that run, "
            "or --report with a new file name"
        )

    def resolved(name: str, given: Any, default: Any) -> Any:
        if resume is None:
            return given if given is not None else default
        recorded = previous.get(name, default)
        if given is not None and given != recorded:
            flag = {"from": "--from", "dry_run": "--dry-run"}.get(name, "--" + name.replace("_", "-"))
            raise TransferError(f"{settings.report} was written with {flag} {recorded!r}: resume with the same options")
        return recorded

    source = resolved("from", settings.source, None)
    given_config = str(settings.firebase_hash_config) if settings.firebase_hash_config is not None else None
    hash_config_path = resolved("firebase_hash_config", given_config, None)
    if hash_config_path is not None and source != "firebase":
        raise TransferError("--firebase-hash-config goes with --from firebase")
    converter = _converter(source, hash_config_path)
    phone_region = resolved("phone_region", settings.phone_region, None)
    if phone_region is not None:
        phone_region = check_region(phone_region)
    in_flight = int(resolved("in_flight", settings.in_flight, DEFAULT_IN_FLIGHT))
    max_request_bytes = int(resolved("max_request_bytes", settings.max_request_bytes, DEFAULT_MAX_REQUEST_BYTES))
    total: int | None = None
    stdin: _Input | None = None
    size: int | None = None
    looks_like: str | None = None
    overridden = frozenset(
        k
        for k, v in (("identifier", settings.identifier), ("upsert", settings.upsert), ("dry_run", settings.dry_run))
        if v is not None or resume is not None
    )
    if settings.path is not None:
        size = _size(settings.path)
        if resume is not None and previous.get("input_size") not in (None, size):
            raise TransferError(
                f"{settings.path} changed since {settings.report} was written "
                f"({previous.get('input_size')} bytes then, {size} now): resuming would misplace records"
            )
        looks_like = _looks_like(settings.path) if source is None else None
        try:
            scanned = scan_input(settings.path, converter, phone_region)
        except InputError as exc:
            if looks_like is not None:
                exc.message += f"; {from_hint(settings.path, looks_like)}"
            raise
        total, layout, options = scanned.records, scanned.layout, scanned.options
    else:
        stdin = _Input(
            sys.stdin.buffer,
            converter,
            lambda: upsert,  # resolved below, before the first record is converted
            late_options=False,
            ignored=overridden,
            phones=PhoneFixer(phone_region) if phone_region else None,
        )
        layout, options = stdin.layout, stdin.options
    identifier = resolved("identifier", settings.identifier, options.identifier or "email")
    upsert: bool = resolved("upsert", settings.upsert, bool(options.upsert))
    dry_run = resolved("dry_run", settings.dry_run, bool(options.dry_run))
    suffix = ".csv" if layout == "csv" else ".ndjson"
    if resume is not None and previous.get("failed"):
        if settings.failed is not None and not _same_file(settings.failed, Path(previous["failed"])):
            raise TransferError(f"{settings.report} was written with --failed {previous['failed']}: leave out --failed")
        failed = Path(previous["failed"])
    else:
        failed = settings.failed or Path(f"failed{suffix}")
    summary_path = Path(previous["failures"]) if resume is not None and previous.get("failures") else None
    summary_path = summary_path or failures_path(settings.report)
    if resume is None:
        for path, flag in ((failed, "--failed"), (summary_path, "--report")):
            if _taken(path):
                raise TransferError(
                    f"{path} exists from an earlier run: pass {flag} with a new file name (a run never overwrites"
                    " another run's files)"
                )
    for other, role in ((settings.report, "report"),) + (((settings.path, "input"),) if settings.path else ()):
        if _same_file(failed, other):
            raise TransferError(f"the failed file {failed} would overwrite the {role}: pass another --failed")
    if settings.path is not None and _same_file(settings.report, settings.path):
        raise TransferError(f"the report {settings.report} would overwrite the input: pass another --report")
    header = {
        "version": 1,
        # Names this migration's requests (Idempotency-Key): a resumed run sends an uncertain request again
        # under the same key, and the server answers the task the lost answer was about.
        "run_id": str(resume.header.get("run_id") or uuid.uuid4().hex) if resume is not None else uuid.uuid4().hex,
        "input": str(settings.path) if settings.path is not None else "-",
        "input_size": size,
        "layout": layout,
        "records": total,
        "from": source,
        "identifier": identifier,
        "upsert": upsert,
        "dry_run": dry_run,
        "phone_region": phone_region,
        "firebase_hash_config": hash_config_path,
        "report": str(settings.report),
        "failed": str(failed.resolve()),
        "failures": str(summary_path.resolve()),
        "in_flight": in_flight,
        "max_request_bytes": max_request_bytes,
        "url": connection.url,
        "project": connection.project,
        "host": connection.host,
        "key": str(connection.key_path) if connection.key_path is not None else None,
        "cacert": str(connection.cacert) if connection.cacert is not None else None,
        "insecure": connection.insecure,
        "started_at": datetime.now(UTC).isoformat(),
        "resumed": resume is not None,
    }
    return ImportPlan(
        settings,
        identifier,
        upsert,
        dry_run,
        source,
        failed,
        total,
        header,
        resume,
        stdin,
        in_flight=in_flight,
        max_request_bytes=max_request_bytes,
        phone_region=phone_region,
        summary_path=summary_path,
        looks_like=looks_like,
    )


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
        self.source = _converter(plan.source, plan.header.get("firebase_hash_config"))
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
        self._slots = asyncio.Semaphore(plan.in_flight)
        self._in_flight: list[_Batch] = []
        self._last_admitted: _Batch | None = None
        self._keys: dict[str, list[_Batch]] = {}
        """Login id -> requests in flight holding it (oldest first)."""
        self._posting = 0
        self._posting_idle = asyncio.Event()
        self._posting_idle.set()
        self._interrupt = asyncio.Event()
        self._interrupts = 0
        self._sent = 0
        self.report: ReportWriter | None = None
        self._failed: BinaryIO | None = None
        self._failures = FailureSummary() if plan.resume is None else None
        """A new run's failures and warnings, counted as written (a resumed run reads its whole report)."""

    # Writing.

    def _body(self, batch: _Batch) -> bytes:
        return self._head + b",".join(r.body for r in batch.records) + b"]}"

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

    async def _emit(self, unit: _Unit, reader: _Input) -> None:
        assert self.report is not None
        if isinstance(unit, _Done):
            self._write_failed([reader.failed_line(raw) for raw in unit.failed])
            return
        if isinstance(unit, _Rejected):
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
            outcome = _outcome(unit, detail)
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
            self._count(index, outcome)
            if outcome == "failed" or "client_warnings" in line:
                self._summarize(line)
        self.report.write(lines)
        self._write_failed(failed)
        self._flush()
        self._in_flight.remove(unit)
        self._slots.release()

    # Sending and following one request.

    async def _follow(self, batch: _Batch) -> list[_Detail]:
        assert self.report is not None
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
        return _in_order(batch, details)

    async def _send(self, batch: _Batch) -> None:
        assert self.report is not None
        if self._interrupt.is_set():
            await asyncio.Event().wait()  # sent nothing; the interrupt watcher ends the run
        body = self._body(batch)
        self.report.submit(batch.first, batch.last)
        self._posting += 1
        self._posting_idle.clear()
        try:
            try:
                created, _ = await self.client.post_json(
                    IMPORT_PATH,
                    body,
                    action="create an import task",
                    idempotency_key=f"{self.plan.header['run_id']}:{batch.first}-{batch.last}",
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
            self._sent += len(batch.records)
        finally:
            self._posting -= 1
            if not self._posting:
                self._posting_idle.set()

    async def _wait(self, batch: _Batch) -> list[_Detail]:
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
                if exc.status == 404 and self.resume is not None:
                    raise TransferError(
                        f"import task {batch.task_id} (records {batch.first}-{batch.last}) is gone from the server "
                        "(tasks are kept 24 hours): whether those records were applied cannot be told from here"
                    ) from exc
                raise
            if status.status == "completed":
                return _decode_details(batch.task_id, status.details)
            if isinstance(status.progress, dict):
                batch.processed = int(status.progress.get("processed", 0))
            await asyncio.sleep(delay)
            delay = min(delay * 2, _POLL_MAX)

    def _hold(self, batch: _Batch) -> None:
        for key in batch.keys:
            self._keys.setdefault(key, []).append(batch)
        self._in_flight.append(batch)

    def _free_prefix(self, batch: _Batch) -> tuple[int, _Batch | None]:
        """How many leading records no request in flight holds a login id of, and the first one that blocks."""
        if self._keys.keys().isdisjoint(batch.keys):  # the usual case, without a look at each record
            return len(batch.records), None
        for position, record in enumerate(batch.records):
            for key in record.keys:
                holders = self._keys.get(key)
                if holders:
                    return position, holders[0]
        return len(batch.records), None

    async def _admit(self, batch: _Batch, queue: asyncio.Queue[_Unit | None], group: asyncio.TaskGroup) -> None:
        """Start `batch` once a slot is free, keeping records about one user in file order across requests.

        A record waits while an earlier request in flight holds one of its login ids (the server orders records
        within a task, not across tasks). Rather than hold the whole request back for one such record, the
        records before it go at once and the rest follows when the earlier request is done.
        """
        rest: _Batch | None = batch
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
                part, rest = _split(rest, cut)
            else:
                rest = None
            self._hold(part)
            part.previous, self._last_admitted = self._last_admitted, part
            part.runner = group.create_task(self._follow(part))
            await queue.put(part)

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
        while self._posting and self._interrupts < 2:
            idle = asyncio.ensure_future(self._posting_idle.wait())
            again = asyncio.ensure_future(self._second_interrupt())
            await asyncio.wait([idle, again], return_when=asyncio.FIRST_COMPLETED)
            idle.cancel()
            again.cancel()
        raise Interrupted()

    async def _second_interrupt(self) -> None:
        while self._interrupts < 2:
            await asyncio.sleep(0.05)

    async def _tick(self) -> None:
        while True:
            self.snapshot.in_progress = sum(b.processed for b in self._in_flight if not b.done.is_set())
            self.progress.update(self.snapshot)
            await asyncio.sleep(0.25)

    async def _produce(self, batcher: _Batcher, queue: asyncio.Queue[_Unit | None], group: asyncio.TaskGroup) -> None:
        while True:
            unit = await asyncio.to_thread(batcher.next_unit)
            self.snapshot.read = batcher.read
            if unit is None:
                break
            if isinstance(unit, _Batch):
                await self._admit(unit, queue, group)
            else:
                await queue.put(unit)
        await queue.put(None)

    async def _consume(self, queue: asyncio.Queue[_Unit | None], reader: _Input) -> None:
        while (unit := await queue.get()) is not None:
            await self._emit(unit, reader)

    async def run(self) -> ImportResult:
        """Send everything not done yet, follow it to the end, write report and failed file."""
        with _rare_collections():
            return await self._run()

    async def _run(self) -> ImportResult:
        settings = self.settings
        phones = PhoneFixer(self.plan.phone_region) if self.plan.phone_region else None
        reader = self.plan.stdin or _Input(_open(settings.path), self.source, lambda: self.upsert, phones=phones)
        stream = reader.stream
        self.report = ReportWriter(settings.report, append=self.resume is not None)
        self._failed = open_private(self.failed_path, exclusive=False)
        remove_signals = self._install_signals()
        try:
            self.report.run(self.plan.header)
            self._write_failed([reader.failed_header])
            batcher = _Batcher(
                reader.records(),
                self._head,
                self.plan.max_request_bytes,
                self.resume,
                # With upsert, later records about a user update it in file order (docs/reference.md#import-updates):
                # not duplicates.
                None if self.upsert else self.plan.identifier,
            )
            queue: asyncio.Queue[_Unit | None] = asyncio.Queue(maxsize=self.plan.in_flight + 64)
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
                sent=self._sent,
                done_before=self.snapshot.done_at_start,
                report=settings.report,
                failed=self.failed_path,
                dry_run=self.dry_run,
                failures=failures,
                summary_path=self.plan.summary_path,
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


def _next_free(path: Path) -> Path:
    """`report.ndjson` -> `report-2.ndjson` (or -3, ...): a name no earlier run wrote."""
    stem, suffix = path.stem, path.suffix
    base = stem.rsplit("-", 1)[0] if stem.rsplit("-", 1)[-1].isdigit() and "-" in stem else stem
    number = 2
    while True:
        candidate = path.with_name(f"{base}-{number}{suffix}")
        if not candidate.exists() and not failures_path(candidate).exists():
            return candidate
        number += 1


def fix_command(result: ImportResult, plan: ImportPlan, connection: Connection) -> str:
    """The command that imports the fixed failed file with this run's settings, into fresh output files."""
    report = _next_free(result.report)
    failed = _next_free(result.failed)
    args = ["userio", "import", str(result.failed), *connection.args()]
    if plan.source:
        args += ["--from", plan.source]
    args += ["--identifier", plan.identifier, "--upsert" if plan.upsert else "--no-upsert"]
    if plan.dry_run:
        args.append("--dry-run")
    if plan.phone_region:
        args += ["--phone-region", plan.phone_region]
    if plan.header.get("firebase_hash_config"):
        args += ["--firebase-hash-config", str(plan.header["firebase_hash_config"])]
    args += ["--report", str(report), "--failed", str(failed)]
    return shlex.join(args)


def describe_result(result: ImportResult, plan: ImportPlan, connection: Connection) -> list[str]:
    """The closing lines on stderr: totals, failures and warnings grouped, where the files are, what next."""
    counts = result.counts
    rate = result.sent / result.elapsed if result.elapsed > 0 else 0.0
    verb = "dry run (nothing was written):" if result.dry_run else "import done:"
    outcome = ", ".join(f"{format_count(counts[name])} {name}" for name in OUTCOMES)
    lines = [
        f"{verb} {format_count(result.total)} record{'' if result.total == 1 else 's'}, {outcome}; "
        f"{format_count(result.sent)} sent in {result.elapsed:.1f} s ({format_count(rate)} records/s)",
    ]
    if plan.resume is not None:
        lines.append(
            f"resumed: the counts cover the whole file; {format_count(result.done_before)} record"
            f"{'' if result.done_before == 1 else 's'} had their outcome from the earlier run (read from its report,"
            f" not sent again), {format_count(result.sent)} were sent by this run"
        )
    lines += result.failures.describe()
    if plan.looks_like is not None and counts["failed"]:
        lines.append(from_hint(plan.settings.path or "the input", plan.looks_like))
    if not plan.phone_region and (phones := result.failures.national_phones):
        lines.append(
            f"hint: {format_count(phones)} record{'' if phones == 1 else 's'} failed on a phone number in national "
            "or spaced form; --phone-region REGION (e.g. GB) turns such numbers into E.164 before sending"
        )
    for attribute, count in sorted(result.failures.other_identifiers.items(), key=lambda item: -item[1]):
        lines.append(
            f"hint: {format_count(count)} record{'' if count == 1 else 's'} without {plan.identifier} "
            f"{'has' if count == 1 else 'have'} {attribute}: import {'it' if count == 1 else 'them'} with "
            f"--identifier {attribute}"
        )
    lines.append(f"report: {result.report}; failures and warnings grouped: {result.summary_path}")
    if counts["failed"]:
        lines.append(f"failed records, as read: {result.failed}; fix them, then:")
        lines.append(f"  {fix_command(result, plan, connection)}")
    return lines
