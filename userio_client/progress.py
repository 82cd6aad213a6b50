"""Progress of a long import or export on stderr: a live rich bar on a terminal, plain lines otherwise.

Why two: a person at a terminal wants one bar that updates in place; a CI log or `--quiet` wants a few plain
lines it can keep. Both read the same `Snapshot`, so the numbers never differ.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Protocol, TextIO

__all__ = ["ExportProgress", "ImportProgress", "Snapshot", "export_progress", "format_count", "import_progress"]

_OUTCOMES = ("inserted", "updated", "skipped", "failed")
PLAIN_INTERVAL = 2.0
"""Seconds between plain progress lines."""


def format_count(value: float) -> str:
    """`12,345`."""
    return f"{value:,.0f}"


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@dataclass
class Snapshot:
    """Where an import stands."""

    total: int | None
    """Records in the input (None for a stream: only the count read so far is known)."""
    read: int = 0
    """Records read from the input so far."""
    done: int = 0
    """Records with an outcome (including those a resumed report already had)."""
    in_progress: int = 0
    """Records the server has processed in tasks not completed yet."""
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_OUTCOMES, 0))
    done_at_start: int = 0
    """Records done before this run (a resumed report): not counted in the rate."""
    started: float = field(default_factory=time.monotonic)

    @property
    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        """Records per second of this run (finished plus processed in pending tasks)."""
        elapsed = self.elapsed
        return (self.done + self.in_progress - self.done_at_start) / elapsed if elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the current rate, when the total is known."""
        rate = self.rate
        if self.total is None or rate <= 0:
            return None
        return max(0.0, (self.total - self.done - self.in_progress) / rate)

    def outcomes(self) -> str:
        """`inserted 10 · updated 0 · skipped 1 · failed 2`."""
        return " · ".join(f"{name} {format_count(value)}" for name, value in self.counts.items())


class ImportProgress(Protocol):
    """Where the importer reports progress."""

    def update(self, snapshot: Snapshot) -> None:
        """Show the latest numbers (called often; implementations throttle)."""

    def note(self, message: str) -> None:
        """A one-line message that stays (a wait, a retry)."""

    def close(self, snapshot: Snapshot) -> None:
        """Show the final numbers and release the terminal."""


class _PlainImport:
    def __init__(self, stream: TextIO, interval: float) -> None:
        self._stream = stream
        self._interval = interval
        self._last = time.monotonic()

    def _line(self, snapshot: Snapshot) -> str:
        done = snapshot.done + snapshot.in_progress
        if snapshot.total is not None:
            share = 100 * done / snapshot.total if snapshot.total else 100.0
            position = f"{format_count(done)}/{format_count(snapshot.total)} records ({share:.0f}%)"
        else:
            position = f"{format_count(done)} records (read {format_count(snapshot.read)})"
        eta = snapshot.eta
        tail = f" · ETA {_duration(eta)}" if eta is not None else ""
        return (
            f"import: {position} · {snapshot.outcomes()} · {format_count(snapshot.rate)} records/s"
            f" · {_duration(snapshot.elapsed)} elapsed{tail}"
        )

    def update(self, snapshot: Snapshot) -> None:
        now = time.monotonic()
        if now - self._last >= self._interval:
            self._last = now
            print(self._line(snapshot), file=self._stream, flush=True)

    def note(self, message: str) -> None:
        print(message, file=self._stream, flush=True)

    def close(self, snapshot: Snapshot) -> None:
        print(self._line(snapshot), file=self._stream, flush=True)


class _RichImport:
    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

        self._console = Console(file=stream)
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]import"),
            BarColumn(),
            TextColumn("{task.fields[position]}"),
            TextColumn("[green]{task.fields[outcomes]}"),
            TextColumn("{task.fields[speed]}"),
            console=self._console,
            refresh_per_second=8,
        )
        self._task = self._progress.add_task("import", total=None, position="", outcomes="", speed="")
        self._progress.start()

    def _fields(self, snapshot: Snapshot) -> dict[str, str]:
        done = snapshot.done + snapshot.in_progress
        position = (
            f"{format_count(done)}/{format_count(snapshot.total)}"
            if snapshot.total is not None
            else f"{format_count(done)} (read {format_count(snapshot.read)})"
        )
        eta = snapshot.eta
        speed = f"{format_count(snapshot.rate)}/s" + (f" ETA {_duration(eta)}" if eta is not None else "")
        return {"position": position, "outcomes": snapshot.outcomes(), "speed": speed}

    def update(self, snapshot: Snapshot) -> None:
        fields = self._fields(snapshot)
        self._progress.update(
            self._task,
            total=snapshot.total,
            completed=snapshot.done + snapshot.in_progress,
            position=fields["position"],
            outcomes=fields["outcomes"],
            speed=fields["speed"],
        )

    def note(self, message: str) -> None:
        self._progress.console.print(message, markup=False, highlight=False)

    def close(self, snapshot: Snapshot) -> None:
        self.update(snapshot)
        self._progress.stop()


def _interactive(stream: TextIO, quiet: bool) -> bool:
    return not quiet and stream.isatty()


def import_progress(*, quiet: bool, stream: TextIO | None = None, interval: float = PLAIN_INTERVAL) -> ImportProgress:
    """A rich bar when stderr is a terminal and not `quiet`; plain lines every `interval` seconds otherwise."""
    out = stream or sys.stderr
    return _RichImport(out) if _interactive(out, quiet) else _PlainImport(out, interval)


class ExportProgress(Protocol):
    """Where the exporter reports progress."""

    def update(self, phase: str, count: int | None) -> None:
        """`phase` is `export` (users written by the server) or `download` (bytes received)."""

    def note(self, message: str) -> None:
        """A one-line message that stays."""

    def close(self) -> None:
        """Release the terminal."""


class _PlainExport:
    def __init__(self, stream: TextIO, interval: float) -> None:
        self._stream = stream
        self._interval = interval
        self._last = time.monotonic()

    def update(self, phase: str, count: int | None) -> None:
        now = time.monotonic()
        if now - self._last >= self._interval:
            self._last = now
            unit = "users written" if phase == "export" else "bytes downloaded"
            print(f"{phase}: {format_count(count or 0)} {unit}", file=self._stream, flush=True)

    def note(self, message: str) -> None:
        print(message, file=self._stream, flush=True)

    def close(self) -> None:
        pass


class _RichExport:
    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn

        self._progress = Progress(
            SpinnerColumn(), TextColumn("[bold]{task.description}"), console=Console(file=stream), transient=True
        )
        self._task = self._progress.add_task("export: waiting for the server", total=None)
        self._progress.start()

    def update(self, phase: str, count: int | None) -> None:
        unit = "users written" if phase == "export" else "bytes downloaded"
        self._progress.update(self._task, description=f"{phase}: {format_count(count or 0)} {unit}")

    def note(self, message: str) -> None:
        self._progress.console.print(message, markup=False, highlight=False)

    def close(self) -> None:
        self._progress.stop()


def export_progress(*, quiet: bool, stream: TextIO | None = None, interval: float = PLAIN_INTERVAL) -> ExportProgress:
    """A spinner with the count on a terminal; plain lines otherwise."""
    out = stream or sys.stderr
    return _RichExport(out) if _interactive(out, quiet) else _PlainExport(out, interval)
