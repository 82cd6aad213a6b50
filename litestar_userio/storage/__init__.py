"""Where export files are written and how they are downloaded: local disk or S3, behind one protocol.

`S3Storage` is imported on first use: aiobotocore takes about half a second to import, which the embedded
deployment should not pay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litestar_userio.config import LocalStorageConfig, S3StorageConfig
from litestar_userio.extras import require
from litestar_userio.storage.local import LocalDownload, LocalFileWriter, LocalStorage
from litestar_userio.storage.storage_protocol import (
    FileWriter,
    Storage,
    StoredFile,
    check_content_type,
    content_disposition,
    validate_key,
)
from userio_core.clock import Clock

if TYPE_CHECKING:
    from litestar_userio.storage.s3 import S3FileWriter, S3Storage

__all__ = [
    "FileWriter",
    "LocalDownload",
    "LocalFileWriter",
    "LocalStorage",
    "S3FileWriter",
    "S3Storage",
    "Storage",
    "StoredFile",
    "build_storage",
    "check_content_type",
    "content_disposition",
    "validate_key",
]


def build_storage(config: LocalStorageConfig | S3StorageConfig, clock: Clock) -> Storage:
    """The store `config` describes; `clock` decides the expiry of local URLs (S3 signs with real time).

    Raises:
        ValueError: The configuration cannot work (part size under 5 MiB, secret too short, ...).
    """
    if isinstance(config, S3StorageConfig):
        require("aiobotocore", "s3", "S3StorageConfig")
        from litestar_userio.storage.s3 import S3Storage

        return S3Storage(config)
    return LocalStorage(config, clock)


def __getattr__(name: str) -> Any:
    if name in ("S3Storage", "S3FileWriter"):
        from litestar_userio.storage import s3

        return getattr(s3, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
