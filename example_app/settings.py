"""The example app's configuration, from the environment (DECISIONS 1: backends by configuration only)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Literal

from litestar_userio import (
    ChangeLogConfig,
    ConsoleConfig,
    ExportConfig,
    HookConfig,
    ImportConfig,
    LocalStorageConfig,
    MetricsConfig,
    QueueConfig,
    S3StorageConfig,
    ScimConfig,
    TracingConfig,
    UserIOConfig,
    WebhookConfig,
)
from litestar_userio.hooks.secrets import SecretBox


def home() -> Path:
    """All local state (database, keys, certificate, files): `$USERIO_HOME`, default `.userio`."""
    return Path(os.environ.get("USERIO_HOME", ".userio"))


def _seconds(name: str, default: float) -> timedelta:
    """`$name` in seconds (a number, not negative), `default` when unset."""
    raw = os.environ.get(name)
    if raw is None:
        return timedelta(seconds=default)
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise ValueError(f"{name} must be a number of seconds, got {raw!r}")
    return timedelta(seconds=seconds)


def _count(name: str, default: int) -> int:
    """`$name` as a whole number of at least 1, `default` when unset."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        count = int(raw)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, got {raw!r}")
    return count


def _webhooks() -> WebhookConfig:
    """`$USERIO_WEBHOOK_RETRY_DELAYS` (comma-separated seconds; empty: no retry) and
    `$USERIO_WEBHOOK_PRIVATE_ORIGINS` (comma-separated origins such as `http://127.0.0.1:8123`)."""
    config = WebhookConfig()
    raw = os.environ.get("USERIO_WEBHOOK_RETRY_DELAYS")
    if raw is not None:
        delays = []
        for part in (p.strip() for p in raw.split(",")):
            if not part:
                continue
            try:
                seconds = float(part)
            except ValueError:
                seconds = -1.0
            if not 0 <= seconds < float("inf"):
                raise ValueError(f"USERIO_WEBHOOK_RETRY_DELAYS must be comma-separated seconds, got {raw!r}")
            delays.append(timedelta(seconds=seconds))
        config.retry_delays = tuple(delays)
    origins = os.environ.get("USERIO_WEBHOOK_PRIVATE_ORIGINS", "")
    config.allowed_private_origins = tuple(o.strip() for o in origins.split(",") if o.strip())
    return config


def _seconds_or_off(name: str, default: timedelta | None) -> timedelta | None:
    """`$name` in seconds, `0` for none at all; `default` when unset."""
    if name not in os.environ:
        return default
    return _seconds(name, 0) or None


def _s3_checksum() -> Literal["CRC32"] | None:
    """`$USERIO_S3_CHECKSUM`: `crc32` (the default) or `none`, in any case; anything else is refused."""
    raw = os.environ.get("USERIO_S3_CHECKSUM", "crc32")
    value = raw.strip().lower()
    if value not in ("crc32", "none"):
        raise ValueError(f"USERIO_S3_CHECKSUM must be crc32 or none, got {raw!r}")
    return "CRC32" if value == "crc32" else None


def _metrics() -> MetricsConfig | None:
    """`$USERIO_METRICS`: `on` (the default: `/metrics`, and each worker on `$USERIO_METRICS_PORT`, 9464) or `off`."""
    raw = os.environ.get("USERIO_METRICS", "on").strip().lower()
    if raw not in ("on", "off"):
        raise ValueError(f"USERIO_METRICS must be on or off, got {raw!r}")
    return MetricsConfig(worker_port=_count("USERIO_METRICS_PORT", 9464)) if raw == "on" else None


def _tracing() -> TracingConfig | None:
    """`$USERIO_TRACING`: `off` (the default), `console` (spans as JSON on stderr) or `discard` (spans made and
    dropped: what `bench/` measures). A real deployment installs its own exporter's tracer provider instead."""
    raw = os.environ.get("USERIO_TRACING", "off").strip().lower()
    if raw not in ("off", "console", "discard"):
        raise ValueError(f"USERIO_TRACING must be off, console or discard, got {raw!r}")
    if raw == "off":
        return None
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter, SpanExportResult

    class Discard(SpanExporter):
        def export(self, spans: object) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter() if raw == "console" else Discard()))
    return TracingConfig(tracer_provider=provider)


def hook_secrets_key(state: Path) -> str:
    """`$USERIO_HOOK_SECRETS_KEY`, else a key generated once into `<home>/hook-secrets.key` (0600)."""
    if key := os.environ.get("USERIO_HOOK_SECRETS_KEY"):
        return key
    path = state / "hook-secrets.key"
    if not path.exists():
        state.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process of this app wrote it first
            return path.read_text().strip()
        with os.fdopen(fd, "w") as file:
            file.write(SecretBox.generate_key())
    return path.read_text().strip()


def userio_config() -> UserIOConfig:
    """The plugin's config: embedded default unless `USERIO_DATABASE_URL` / `USERIO_REDIS_URL` / `USERIO_S3_*` say."""
    state = home()
    database_url = os.environ.get("USERIO_DATABASE_URL") or f"sqlite:///{(state / 'userio.sqlite3').resolve()}"
    storage: LocalStorageConfig | S3StorageConfig
    if os.environ.get("USERIO_S3_BUCKET"):
        storage = S3StorageConfig(
            bucket=os.environ["USERIO_S3_BUCKET"],
            endpoint_url=os.environ.get("USERIO_S3_ENDPOINT_URL") or None,
            region=os.environ.get("USERIO_S3_REGION", "us-east-1"),
            access_key_id=os.environ.get("USERIO_S3_ACCESS_KEY_ID") or None,
            secret_access_key=os.environ.get("USERIO_S3_SECRET_ACCESS_KEY") or None,
            checksum=_s3_checksum(),
        )
    else:
        storage = LocalStorageConfig(directory=state / "exports", base_url=os.environ.get("USERIO_DOWNLOAD_BASE_URL"))
    queue = QueueConfig(
        redis_url=os.environ.get("USERIO_REDIS_URL") or None,
        queue_name=os.environ.get("USERIO_QUEUE_NAME", "userio:queue"),
        job_timeout=_seconds("USERIO_JOB_TIMEOUT", 120),
        stale_after=_seconds("USERIO_STALE_AFTER", 180),
        sweep_interval=_seconds("USERIO_SWEEP_INTERVAL", QueueConfig.sweep_interval.total_seconds()),
        lease_ttl=_seconds("USERIO_LEASE_TTL", QueueConfig.lease_ttl.total_seconds()),
        worker_max_jobs=_count("USERIO_WORKER_MAX_JOBS", QueueConfig.worker_max_jobs),
        worker_poll_delay=_seconds("USERIO_WORKER_POLL_DELAY", QueueConfig.worker_poll_delay.total_seconds()),
    )
    return UserIOConfig(
        database_url=database_url,
        db_silent_transaction_timeout=_seconds_or_off(
            "USERIO_SILENT_TRANSACTION_TIMEOUT", UserIOConfig.db_silent_transaction_timeout
        ),
        queue=queue,
        imports=ImportConfig(chunk_size=_count("USERIO_CHUNK_SIZE", ImportConfig.chunk_size)),
        exports=ExportConfig(storage=storage, page_size=_count("USERIO_EXPORT_PAGE_SIZE", 2000)),
        changes=ChangeLogConfig(
            retention=_seconds("USERIO_CHANGE_RETENTION", ChangeLogConfig.retention.total_seconds())
        ),
        hooks=HookConfig(secrets_key=hook_secrets_key(state)),
        scim=ScimConfig(
            max_operations=_count("USERIO_SCIM_MAX_OPERATIONS", ScimConfig.max_operations),
            max_payload_size=_count("USERIO_SCIM_MAX_PAYLOAD", ScimConfig.max_payload_size),
        ),
        webhooks=_webhooks(),
        migrate_on_startup=True,
        console=ConsoleConfig(public_url=f"https://localhost:{os.environ.get('PORT', '8443')}"),
        metrics=_metrics(),
        tracing=_tracing(),
    )
