"""Optional clients: the base install serves the embedded default (SQLite, the in-process runner, local files).

PostgreSQL (asyncpg), Redis (arq) and S3 (aiobotocore) come with the extras `postgres`, `redis` and `s3`
(`production`: all three). A configuration that needs one that is missing fails at once, in one line naming it.
"""

from __future__ import annotations

from importlib.util import find_spec

from litestar_userio.config import S3StorageConfig, UserIOConfig
from litestar_userio.errors import ExtraNotInstalled

__all__ = ["require", "require_extras"]


def require(module: str, extra: str, feature: str) -> None:
    """`ExtraNotInstalled` unless `module` can be imported."""
    if find_spec(module) is None:
        raise ExtraNotInstalled(feature, extra)


def require_extras(config: UserIOConfig) -> None:
    """Every client `config` needs is installed; else `ExtraNotInstalled` for the first missing."""
    if config.database_url.startswith(("postgres://", "postgresql://")):
        require("asyncpg", "postgres", "a PostgreSQL database_url")
    if config.queue.redis_url:
        require("arq", "redis", "QueueConfig.redis_url")
    if isinstance(config.exports.storage, S3StorageConfig):
        require("aiobotocore", "s3", "S3StorageConfig")
