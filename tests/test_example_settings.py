"""The example app's settings: what its environment variables give, and a clear error naming a bad one."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from example_app.settings import userio_config
from litestar_userio import S3StorageConfig


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """The example app's environment, its state in a temporary home."""
    monkeypatch.setenv("USERIO_HOME", str(tmp_path))
    return monkeypatch


@pytest.mark.parametrize(
    ("value", "expected"), [(None, "CRC32"), ("crc32", "CRC32"), ("CRC32", "CRC32"), ("none", None), (" None ", None)]
)
def test_the_s3_checksum_setting(env: pytest.MonkeyPatch, value: str | None, expected: str | None):
    env.setenv("USERIO_S3_BUCKET", "exports")
    if value is None:
        env.delenv("USERIO_S3_CHECKSUM", raising=False)
    else:
        env.setenv("USERIO_S3_CHECKSUM", value)

    storage = userio_config().exports.storage

    assert isinstance(storage, S3StorageConfig)
    assert storage.checksum == expected


def test_numbers_are_read_from_the_environment(env: pytest.MonkeyPatch):
    env.setenv("USERIO_JOB_TIMEOUT", "90.5")
    env.setenv("USERIO_WORKER_MAX_JOBS", "7")
    env.setenv("USERIO_CHUNK_SIZE", "250")
    env.setenv("USERIO_EXPORT_PAGE_SIZE", "500")
    env.setenv("USERIO_SILENT_TRANSACTION_TIMEOUT", "0")
    env.setenv("USERIO_CHANGE_RETENTION", "3600")
    env.setenv("USERIO_SCIM_MAX_OPERATIONS", "50")
    env.setenv("USERIO_SCIM_MAX_PAYLOAD", "65536")

    config = userio_config()

    assert config.queue.job_timeout == timedelta(seconds=90.5)
    assert config.queue.worker_max_jobs == 7
    assert config.imports.chunk_size == 250
    assert config.exports.page_size == 500
    assert config.db_silent_transaction_timeout is None
    assert config.changes.retention == timedelta(hours=1)
    assert config.scim is not None
    assert (config.scim.max_operations, config.scim.max_payload_size) == (50, 65536)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("USERIO_S3_CHECKSUM", "Off", "USERIO_S3_CHECKSUM must be crc32 or none, got 'Off'"),
        ("USERIO_JOB_TIMEOUT", "2m", "USERIO_JOB_TIMEOUT must be a number of seconds, got '2m'"),
        ("USERIO_LEASE_TTL", "-5", "USERIO_LEASE_TTL must be a number of seconds, got '-5'"),
        ("USERIO_STALE_AFTER", "nan", "USERIO_STALE_AFTER must be a number of seconds, got 'nan'"),
        ("USERIO_SWEEP_INTERVAL", "inf", "USERIO_SWEEP_INTERVAL must be a number of seconds, got 'inf'"),
        ("USERIO_CHUNK_SIZE", "0", "USERIO_CHUNK_SIZE must be a whole number of at least 1, got '0'"),
        ("USERIO_EXPORT_PAGE_SIZE", "1e3", "USERIO_EXPORT_PAGE_SIZE must be a whole number of at least 1, got '1e3'"),
        ("USERIO_WORKER_MAX_JOBS", "", "USERIO_WORKER_MAX_JOBS must be a whole number of at least 1, got ''"),
    ],
)
def test_a_bad_value_is_refused_by_name(env: pytest.MonkeyPatch, name: str, value: str, message: str):
    env.setenv("USERIO_S3_BUCKET", "exports")
    env.setenv(name, value)

    with pytest.raises(ValueError, match=f"^{message}$"):
        userio_config()


def test_metrics_are_on_unless_turned_off_and_tracing_off_unless_turned_on(env: pytest.MonkeyPatch):
    env.delenv("USERIO_METRICS", raising=False)
    env.delenv("USERIO_TRACING", raising=False)
    env.setenv("USERIO_METRICS_PORT", "9500")
    default = userio_config()
    env.setenv("USERIO_METRICS", "off")
    env.setenv("USERIO_TRACING", "console")
    switched = userio_config()

    assert default.metrics is not None
    assert default.metrics.worker_port == 9500
    assert default.tracing is None
    assert switched.metrics is None
    assert switched.tracing is not None


@pytest.mark.parametrize(("name", "value"), [("USERIO_METRICS", "yes"), ("USERIO_TRACING", "jaeger")])
def test_a_bad_observability_switch_is_named(env: pytest.MonkeyPatch, name: str, value: str):
    env.setenv(name, value)

    with pytest.raises(ValueError, match=name):
        userio_config()


def test_webhook_retries_and_private_origins_are_read_from_the_environment(env: pytest.MonkeyPatch):
    env.setenv("USERIO_WEBHOOK_RETRY_DELAYS", "1, 2.5,60")
    env.setenv("USERIO_WEBHOOK_PRIVATE_ORIGINS", "http://127.0.0.1:8123, http://10.0.0.7:9000")
    config = userio_config()
    env.setenv("USERIO_WEBHOOK_RETRY_DELAYS", "1,soon")

    assert config.webhooks.retry_delays == (timedelta(seconds=1), timedelta(seconds=2.5), timedelta(seconds=60))
    assert config.webhooks.allowed_private_origins == ("http://127.0.0.1:8123", "http://10.0.0.7:9000")
    with pytest.raises(ValueError, match="USERIO_WEBHOOK_RETRY_DELAYS must be comma-separated seconds"):
        userio_config()
