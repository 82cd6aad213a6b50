"""The `userio_*` Prometheus metrics (docs/reference.md#operations) in a registry of the plugin's own.

An own registry, not prometheus-client's default: the plugin's `/metrics` shows its figures only, and a host
that serves the default registry is not handed duplicates. Buckets are chosen for what they time: chunks take
a tenth of a second to seconds, hook runs about a millisecond warm.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, start_http_server
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE", "Metrics", "serve"]

CONTENT_TYPE = CONTENT_TYPE_LATEST
_HOOK_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_CHUNK_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
_TAKEOVER_BUCKETS = (1.0, 2.5, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0, 60.0, 120.0, 300.0, 900.0)
_TASK_BUCKETS = (0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, 4 * 3600.0, 24 * 3600.0)

REGISTRY = CollectorRegistry()
"""Shared by every `Metrics` of the process (one per configured app): a name may be registered once."""


class Metrics:
    """The plugin's metrics; `telemetry` calls it only when `UserIOConfig.metrics` is set."""

    _instruments: dict[str, Any] = {}

    def __init__(self) -> None:
        self.registry = REGISTRY
        i = self._instruments
        if not i:
            r = REGISTRY
            i["records"] = Counter(
                "userio_import_records",
                "Import records applied, by outcome and failure reason",
                ["outcome", "reason"],
                registry=r,
            )
            i["chunk"] = Histogram(
                "userio_import_chunk_seconds", "Time to apply one import chunk", buckets=_CHUNK_BUCKETS, registry=r
            )
            i["task"] = Histogram(
                "userio_import_task_seconds",
                "Import tasks from creation to completion",
                buckets=_TASK_BUCKETS,
                registry=r,
            )
            i["export"] = Histogram(
                "userio_export_seconds",
                "Time an export job took to write its file",
                buckets=_TASK_BUCKETS,
                registry=r,
            )
            i["import_bytes"] = Counter(
                "userio_import_request_bytes", "Bytes of import requests stored as tasks (202)", registry=r
            )
            i["export_bytes"] = Counter("userio_export_bytes", "Bytes of export files written", registry=r)
            i["secret_exports"] = Counter(
                "userio_secret_exports",
                "Lossless exports (password hashes and second-factor secrets) by outcome: accepted, refused, completed",
                ["outcome"],
                registry=r,
            )
            i["queue"] = Gauge(
                "userio_queue_jobs",
                "Import chunks and exports (kind) by state, all projects, as this process last read them",
                ["kind", "state"],
                registry=r,
            )
            i["age"] = Gauge(
                "userio_queue_oldest_pending_seconds",
                "Age of the oldest pending import chunk or export",
                ["kind"],
                registry=r,
            )
            i["requeued"] = Counter(
                "userio_queue_requeued",
                "Work enqueued again by the sweeper (a dead worker's lapsed lease, a lost job)",
                ["kind"],
                registry=r,
            )
            i["stalled"] = Gauge(
                "userio_tasks_stalled",
                "Import tasks (kind) with a chunk waiting for a worker longer than its lease (lease_ttl), by project",
                ["kind", "project"],
                registry=r,
            )
            i["takeover"] = Histogram(
                "userio_lease_takeover_seconds",
                "Time from a dead worker's last lease renewal to another worker taking its work",
                ["kind"],
                buckets=_TAKEOVER_BUCKETS,
                registry=r,
            )
            i["hook_runs"] = Counter(
                "userio_hook_runs", "Hook runs by event and outcome", ["event", "outcome"], registry=r
            )
            i["hook_seconds"] = Histogram(
                "userio_hook_seconds",
                "Hook run time, waiting for a worker included",
                ["event"],
                buckets=_HOOK_BUCKETS,
                registry=r,
            )
            i["hook_queue"] = Histogram(
                "userio_hook_queue_seconds",
                "Time a hook run waited for a free worker",
                buckets=_HOOK_BUCKETS,
                registry=r,
            )
            i["fetch"] = Counter("userio_hook_fetch_calls", "fetch calls of hooks by outcome", ["outcome"], registry=r)
            i["passwords"] = Counter(
                "userio_password_checks",
                "Password verifications by stored format and outcome (busy: refused, 429)",
                ["format", "outcome"],
                registry=r,
            )
            i["webhook_deliveries"] = Counter(
                "userio_webhook_deliveries",
                "Webhook delivery attempts by outcome (succeeded, retrying, failed, refused)",
                ["outcome"],
                registry=r,
            )
            i["webhook_seconds"] = Histogram(
                "userio_webhook_delivery_seconds",
                "Time of one webhook delivery attempt (connect to the answer's end or the timeout)",
                buckets=_HOOK_BUCKETS,
                registry=r,
            )
            i["tokens"] = Counter("userio_tokens_issued", "Tokens issued by kind", ["kind"], registry=r)
            i["pending_checks"] = Gauge(
                "userio_password_checks_pending", "Password checks running or waiting in this process", registry=r
            )
        self._i = i
        self._children: dict[tuple[str, ...], Any] = {}

    def _child(self, name: str, *labels: str) -> Any:
        """The labelled child, cached: prometheus-client's `labels()` validates and locks on every call."""
        key = (name, *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self._i[name].labels(*labels)
        return child

    def import_chunk_done(self, outcomes: Iterable[tuple[str, str]], seconds: float) -> None:
        """Count a chunk's records by (outcome, reason): one increment per distinct pair, not per record."""
        for (outcome, reason), count in Tally(outcomes).items():
            self._child("records", outcome, reason).inc(count)
        self._i["chunk"].observe(seconds)

    def import_accepted(self, size: int) -> None:
        """Count an accepted import request and its bytes."""
        self._i["import_bytes"].inc(size)

    def import_task_done(self, seconds: float) -> None:
        """Observe a completed task's duration."""
        self._i["task"].observe(seconds)

    def export_done(self, seconds: float, size: int) -> None:
        """Observe an export job."""
        self._i["export"].observe(seconds)
        self._i["export_bytes"].inc(size)

    def secret_export(self, outcome: str) -> None:
        """Count a lossless export's step."""
        self._child("secret_exports", outcome).inc()

    def queue_state(self, kind: str, counts: Mapping[str, int], oldest_pending_seconds: float) -> None:
        """Set the queue gauges of `kind`."""
        for state, count in counts.items():
            self._child("queue", kind, state).set(count)
        self._child("age", kind).set(oldest_pending_seconds)

    def stalled_tasks(self, kind: str, by_project: Mapping[str, int]) -> None:
        """Set the stalled-task gauge of `kind`: a project that has none now reads 0 (not its last count)."""
        for key in [k for k in self._children if k[:2] == ("stalled", kind) and k[2] not in by_project]:
            self._children[key].set(0)
        for project, count in by_project.items():
            self._child("stalled", kind, project).set(count)

    def requeued(self, kind: str, count: int) -> None:
        """Count work enqueued again."""
        self._child("requeued", kind).inc(count)

    def lease_taken_over(self, kind: str, seconds: float) -> None:
        """Observe a takeover."""
        self._child("takeover", kind).observe(seconds)

    def hook_run(self, event: str, outcome: str, seconds: float, queued_seconds: float) -> None:
        """Count and time a hook run."""
        self._child("hook_runs", event, outcome).inc()
        self._child("hook_seconds", event).observe(seconds)
        self._i["hook_queue"].observe(queued_seconds)

    def webhook_attempt(self, outcome: str, seconds: float) -> None:
        """Count and time a webhook delivery attempt."""
        self._child("webhook_deliveries", outcome).inc()
        self._i["webhook_seconds"].observe(seconds)

    def hook_fetch(self, outcome: str) -> None:
        """Count a fetch call."""
        self._child("fetch", outcome).inc()

    def password_checked(self, format_: str, outcome: str) -> None:
        """Count a password verification."""
        self._child("passwords", format_, outcome).inc()

    def token_issued(self, kind: str) -> None:
        """Count a token."""
        self._child("tokens", kind).inc()

    def watch(self, name: str, read: Callable[[], float]) -> None:
        """Read gauge `name` from `read` at scrape time (the last caller's function wins)."""
        self._i[name].set_function(read)

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)


def serve(port: int, address: str) -> Callable[[], None]:
    """Serve the registry over HTTP on `port` (an arq worker's own endpoint); returns the function that stops it."""
    server, thread = start_http_server(port, addr=address, registry=REGISTRY)

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return stop
