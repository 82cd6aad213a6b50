"""The import report (`report.ndjson`): every record's outcome, and the journal that makes `--resume` safe.

One JSON object per line, flushed as written, so a killed CLI loses at most the line being written:

    {"run": {...}}                                   each run (a resumed run appends another)
    {"submit": [first, last]}                        before a request for input records first..last is sent
    {"task": "task_...", "indices": [first, last]}   as soon as the server answered 202 for it
    {"refused": [first, last]}                       the server refused that request (4xx): nothing was created
    {"index": 17, "task": "task_...", "outcome": "inserted", "user_id": ..., "record": ..., ...}
    {"summary": {...}}                               end of a run

Indices are global: positions of records in the input file, from 0. Why a journal: after a crash the CLI
must know which records the server already holds, even when their task is still running, so that no record is
sent twice; a `task` line is exactly that knowledge (the server keeps tasks 24 hours). A `submit` without its
`task` is a request whose answer was lost: the server may or may not have it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Final

import msgspec

from userio_core.files import open_private

__all__ = ["OUTCOMES", "ReportError", "ReportWriter", "ResumeState", "read_header", "read_report"]

OUTCOMES: Final = ("inserted", "updated", "skipped", "failed")
_CODES: Final = {name: code for code, name in enumerate(OUTCOMES, start=1)}

_encoder = msgspec.json.Encoder()


class ReportError(Exception):
    """A report that cannot be resumed from."""


class _Line(msgspec.Struct):
    """The members `--resume` needs from any line; everything else is skipped while decoding."""

    run: dict[str, Any] | None = None
    submit: list[int] | None = None
    refused: list[int] | None = None
    task: str | None = None
    indices: list[int] | None = None
    index: int | None = None
    outcome: str | None = None


@dataclass
class ResumeState:
    """What a report says was done, and what was in flight when its run stopped."""

    header: dict[str, Any]
    outcomes: bytearray = field(default_factory=bytearray)
    """Per global index: 0 not done, else 1 + position in OUTCOMES. A byte per record keeps millions cheap."""
    tasks: dict[int, tuple[int, str]] = field(default_factory=dict)
    """first index -> (last index, task id) of every journaled request."""
    uncertain: list[tuple[int, int]] = field(default_factory=list)
    """Ranges sent without a recorded answer: the server may hold them."""
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))

    def outcome(self, index: int) -> str | None:
        """The recorded outcome of a record, or None."""
        code = self.outcomes[index] if index < len(self.outcomes) else 0
        return OUTCOMES[code - 1] if code else None

    @property
    def done(self) -> int:
        """Records with an outcome."""
        return sum(self.counts.values())

    def record(self, index: int, outcome: str) -> bool:
        """Note an outcome; False if the index already had one."""
        if index >= len(self.outcomes):
            self.outcomes.extend(bytes(index + 1 - len(self.outcomes) + 1024))
        if self.outcomes[index]:
            return False
        self.outcomes[index] = _CODES[outcome]
        self.counts[outcome] += 1
        return True


def read_header(path: Path) -> dict[str, Any]:
    """The first run header of a report: the settings `--resume` continues with."""
    try:
        with path.open("rb") as file:
            first = file.readline()
    except OSError as exc:
        raise ReportError(f"cannot read the report {path}: {exc.strerror}") from exc
    try:
        item = msgspec.json.decode(first, type=_Line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        item = _Line()
    if item.run is None:
        raise ReportError(f"{path} does not start with a run header: not an import report")
    return item.run


def read_report(path: Path) -> ResumeState:
    """Read a report for `--resume`; a torn last line (the writer was killed mid-line) is cut off the file."""
    try:
        file = path.open("r+b")
    except OSError as exc:
        raise ReportError(f"cannot read the report {path}: {exc.strerror}") from exc
    state: ResumeState | None = None
    submits: dict[int, int] = {}
    with file:
        offset = 0
        number = 0
        for line in file:
            number += 1
            if not line.endswith(b"\n"):
                # Torn: the writer died inside this line. Drop it; the next run appends after the last full line.
                file.truncate(offset)
                break
            offset += len(line)
            try:
                item = msgspec.json.decode(line, type=_Line)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise ReportError(f"{path}:{number}: not a report line ({exc})") from exc
            if item.run is not None:
                if state is None:
                    state = ResumeState(header=item.run)
                continue
            if state is None:
                raise ReportError(f"{path} does not start with a run header: not an import report")
            if item.index is not None:
                if item.outcome not in _CODES:
                    raise ReportError(f"{path}:{number}: unknown outcome {item.outcome!r}")
                state.record(item.index, item.outcome)
            elif item.submit is not None:
                submits[item.submit[0]] = item.submit[1]
            elif item.refused is not None:
                submits.pop(item.refused[0], None)
            elif item.task is not None and item.indices is not None:
                first, last = item.indices
                state.tasks[first] = (last, item.task)
                submits.pop(first, None)
    if state is None:
        raise ReportError(f"{path} is empty: nothing to resume")
    state.uncertain = sorted(submits.items())
    return state


class ReportWriter:
    """Appends report lines and flushes after each group, so a kill loses at most the line being written."""

    def __init__(self, path: Path, *, append: bool) -> None:
        self.path = path
        self._file: BinaryIO = open_private(path, exclusive=False, append=append)
        self._lock()

    def _lock(self) -> None:
        """One CLI per report: two would both resubmit what the journal says is not done."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            self._file.close()
            raise ReportError(f"{self.path} is in use by another import") from exc

    def write(self, items: list[Any]) -> None:
        """Write JSON lines and hand them to the OS (enough to survive the process being killed)."""
        if items:
            self._file.write(_encoder.encode_lines(items))
            self._file.flush()

    def run(self, header: dict[str, Any]) -> None:
        """The header of a run."""
        self.write([{"run": header}])

    def submit(self, first: int, last: int) -> None:
        """Journal: a request for first..last is about to be sent."""
        self.write([{"submit": [first, last]}])

    def task(self, task_id: str, first: int, last: int) -> None:
        """Journal: the server accepted first..last as `task_id`."""
        self.write([{"task": task_id, "indices": [first, last]}])

    def refused(self, first: int, last: int) -> None:
        """Journal: the server answered the request for first..last with a 4xx: it created nothing."""
        self.write([{"refused": [first, last]}])

    def summary(self, summary: dict[str, Any]) -> None:
        """The totals at the end of a run."""
        self.write([{"summary": summary}])

    def sync(self) -> None:
        """Also survive a power cut: called at the end of a run."""
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Flush and close."""
        self._file.close()
