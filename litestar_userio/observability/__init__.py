"""What operators see: the one interface the domain code reports through, a no-op until configured.

See docs/reference.md#operations.

The hot paths (an import chunk, a hook run, a token, a password check) call `telemetry.<event>(...)` in one line.
With metrics and tracing off (the default) each call is one attribute test; `configure` switches them on for the
process, as prometheus-client's and OpenTelemetry's own registries are process-wide. The Prometheus side lives in
`metrics.py`, the OpenTelemetry side in `tracing.py`; both import their library only when switched on (the
`metrics` and `tracing` extras).

Labels are bounded: an outcome, a reason name, an event type, a kind. Never a user, a login id, a URL or a secret;
span attributes carry ids of tasks and projects at most.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from litestar_userio.config import MetricsConfig, TracingConfig
    from litestar_userio.observability.metrics import Metrics
    from litestar_userio.observability.tracing import Tracing

__all__ = ["Telemetry", "reasons", "telemetry"]

_NO_SPAN: AbstractContextManager[None] = nullcontext()


class Telemetry:
    """The process's metrics and traces; every method does nothing while its side is off."""

    __slots__ = ("metrics", "tracing")

    def __init__(self) -> None:
        self.metrics: Metrics | None = None
        self.tracing: Tracing | None = None

    def configure(self, metrics: MetricsConfig | None, tracing: TracingConfig | None) -> None:
        """Switch on what is configured; what is not stays as it is (another app of the process may use it)."""
        if metrics is not None and self.metrics is None:
            from litestar_userio.observability.metrics import Metrics

            self.metrics = Metrics()
        if tracing is not None:
            from litestar_userio.observability.tracing import Tracing

            self.tracing = Tracing(tracing.tracer_provider)

    def reset(self) -> None:
        """Everything off again (benchmarks compare both in one run)."""
        self.metrics = None
        self.tracing = None

    # Traces.

    def span(
        self, name: str, attributes: Mapping[str, str | int] | None = None, parent: Mapping[str, str] | None = None
    ) -> AbstractContextManager[Any]:
        """A span around a unit of work, continuing `parent` (a `carrier()` taken where the work was created)."""
        if self.tracing is None:
            return _NO_SPAN
        return self.tracing.span(name, attributes, parent)

    def carrier(self) -> dict[str, str] | None:
        """The current trace context as a small dict a job carries to the worker (W3C `traceparent`), or None."""
        return None if self.tracing is None else self.tracing.carrier()

    # Imports and exports.

    def import_chunk_done(self, outcomes: Iterable[tuple[str, str]], seconds: float) -> None:
        """A chunk committed: its records' (outcome, reason) pairs (reason "" unless failed) and its duration."""
        if self.metrics is not None:
            self.metrics.import_chunk_done(outcomes, seconds)

    def import_accepted(self, size: int) -> None:
        """An import request of `size` bytes was stored as a task (202)."""
        if self.metrics is not None:
            self.metrics.import_accepted(size)

    def import_task_done(self, seconds: float) -> None:
        """An import task completed `seconds` after it was created."""
        if self.metrics is not None:
            self.metrics.import_task_done(seconds)

    def export_done(self, seconds: float, size: int) -> None:
        """An export job wrote its file of `size` bytes in `seconds`."""
        if self.metrics is not None:
            self.metrics.export_done(seconds, size)

    def secret_export(self, outcome: str) -> None:
        """A lossless export (hashes, second-factor secrets): `accepted`, `refused` (setting off), `completed`."""
        if self.metrics is not None:
            self.metrics.secret_export(outcome)

    def queue_state(self, kind: str, enqueued_at: Sequence[datetime | None], now: datetime) -> None:
        """Work of a `kind` by state and its oldest pending's age, as this process read them.

        `enqueued_at` holds when each pending item was enqueued; None where a worker runs it.
        """
        if self.metrics is None:
            return
        waiting = [at for at in enqueued_at if at is not None]
        oldest = max((now - min(waiting)).total_seconds(), 0.0) if waiting else 0.0
        self.metrics.queue_state(kind, {"pending": len(waiting), "running": len(enqueued_at) - len(waiting)}, oldest)

    def stalled_tasks(self, kind: str, by_project: Mapping[str, int]) -> None:
        """How many tasks of each project wait for a worker longer than their lease (`userio_tasks_stalled`)."""
        if self.metrics is not None:
            self.metrics.stalled_tasks(kind, by_project)

    def requeued(self, kind: str, count: int) -> None:
        """The sweeper enqueued `count` chunks or exports again (their worker died, or the queue lost them)."""
        if self.metrics is not None and count:
            self.metrics.requeued(kind, count)

    def lease_taken_over(self, kind: str, seconds: float) -> None:
        """A worker took a chunk's or export's lease `seconds` after its dead holder last renewed it."""
        if self.metrics is not None:
            self.metrics.lease_taken_over(kind, seconds)

    # Hooks, sign-in, tokens.

    def hook_run(self, event: str, outcome: str, seconds: float, queued_seconds: float) -> None:
        """One hook run (`allowed`, `refused`, `error`), its whole time and its wait for a worker."""
        if self.metrics is not None:
            self.metrics.hook_run(event, outcome, seconds, queued_seconds)

    def webhook_attempt(self, outcome: str, seconds: float) -> None:
        """A webhook delivery attempt: `succeeded`, `retrying`, `failed` (no try left) or `refused` (address rules)."""
        if self.metrics is not None:
            self.metrics.webhook_attempt(outcome, seconds)

    def hook_fetches(self, answers: Iterable[Mapping[str, Any]]) -> None:
        """A batch of a hook's `fetch` answers (`hooks.fetch`), counted as `ok`, `refused` or `failed`."""
        if self.metrics is not None:
            for answer in answers:
                refused = not answer.get("ok") and str(answer.get("error", "")).startswith("fetch refused")
                self.metrics.hook_fetch("ok" if answer.get("ok") else "refused" if refused else "failed")

    def password_checked(self, format_: str, outcome: str) -> None:
        """One password verification: the stored hash's format (`none` when no user) and `match`/`mismatch`/`busy`."""
        if self.metrics is not None:
            self.metrics.password_checked(format_, outcome)

    def token_issued(self, kind: str) -> None:
        """A token signed or handed out: `access`, `id`, `refresh`."""
        if self.metrics is not None:
            self.metrics.token_issued(kind)

    def watch(self, name: str, read: Callable[[], float]) -> None:
        """A gauge read at scrape time (`read() -> float`), e.g. the password pool's waiting checks."""
        if self.metrics is not None:
            self.metrics.watch(name, read)


telemetry = Telemetry()
"""The process's one instance; `Services.start` configures it from `UserIOConfig.metrics` / `.tracing`."""


def reasons(details: Iterable[Any]) -> Iterator[tuple[str, str]]:
    """(outcome, reason) of import details: a failed record's first error reason, "" otherwise."""
    for detail in details:
        errors = detail.errors
        yield detail.outcome, (errors[0].reason if detail.outcome == "failed" and errors else "")
