"""The storage contract for export files, shared by the local-disk and S3 implementations.

See docs/reference.md#export-download.

An export streams its file through a `FileWriter` in pieces, so memory stays flat whatever the user count,
and the file becomes downloadable only when the writer completes. Downloads go through a short-lived signed
URL (docs/reference.md#export-download: 60 seconds), never through the admin API.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol
from urllib.parse import quote

import msgspec

__all__ = [
    "MAX_KEY_BYTES",
    "FileWriter",
    "Storage",
    "StoredFile",
    "check_content_type",
    "content_disposition",
    "validate_key",
]

MAX_KEY_BYTES = 1024
"""S3's limit on a key, applied to both stores so a key valid on one is valid on the other."""


class StoredFile(msgspec.Struct, frozen=True):
    """What a completed upload reports."""

    key: str
    """The key the caller gave (without any storage prefix)."""
    size: int
    """Bytes written."""
    sha256: str
    """Hex SHA-256 of the bytes written, computed while they streamed."""


class FileWriter(Protocol):
    """One file being written; nothing of it is visible until `complete()`."""

    async def write(self, data: bytes) -> None:
        """Append `data`; called many times while the export streams. The writer buffers a bounded amount."""
        ...

    async def complete(self) -> StoredFile:
        """Publish the file atomically under its key and report its size and SHA-256.

        On failure the partial upload is discarded and the error raised; the writer is then closed.
        """
        ...

    async def abort(self) -> None:
        """Discard everything written. Idempotent; a no-op after a successful `complete()`."""
        ...


class Storage(Protocol):
    """Where export files live and how a downloader reaches them."""

    async def open_writer(self, key: str, *, content_type: str, filename: str) -> FileWriter:
        """Start a file under `key`, served later with `content_type` and `Content-Disposition: attachment`.

        Raises:
            ValueError: `key`, `content_type` or `filename` is not acceptable.
        """
        ...

    async def signed_url(self, key: str, *, expires_in: timedelta, request_base_url: str | None = None) -> str:
        """A freshly signed download URL for `key`, valid for `expires_in`.

        `request_base_url` is the origin of the current request (`https://auth.example.com`); the local store
        uses it when its config has no `base_url`, object storage ignores it.
        """
        ...

    async def delete(self, key: str) -> None:
        """Remove the file; a missing file is not an error."""
        ...

    async def exists(self, key: str) -> bool:
        """Whether a completed file is stored under `key`."""
        ...

    async def close(self) -> None:
        """Release connections; call once on shutdown."""
        ...


def validate_key(key: str) -> str:
    """Return `key` if it is a safe relative storage key.

    Keys become file paths and URL paths, so anything that could climb out of the storage root or name one
    file two ways is refused: an empty or absolute key, empty segments, `.` and `..`, backslashes, control
    characters. A segment may not start with a dot either: those names are the local store's own files.

    Raises:
        ValueError: The key is not acceptable.
    """
    if not isinstance(key, str) or not key:
        raise ValueError("storage key must be a non-empty string")
    try:
        size = len(key.encode())
    except UnicodeEncodeError:
        raise ValueError("storage key is not valid Unicode") from None
    if size > MAX_KEY_BYTES:
        raise ValueError(f"storage key is longer than {MAX_KEY_BYTES} bytes")
    if key.startswith("/"):
        raise ValueError("storage key must be relative")
    if "\\" in key:
        raise ValueError("storage key must not contain a backslash")
    if not key.isprintable():
        raise ValueError("storage key must not contain control characters")
    for segment in key.split("/"):
        if not segment:
            raise ValueError("storage key must not contain empty segments")
        if segment.startswith("."):
            raise ValueError("storage key segments must not start with a dot")
    return key


def check_content_type(content_type: str) -> str:
    """Return `content_type` if it can go into a header as is.

    Raises:
        ValueError: It is empty or holds characters outside printable ASCII.
    """
    if not content_type or not all(" " <= c <= "~" for c in content_type):
        raise ValueError("content type must be non-empty printable ASCII")
    return content_type


def content_disposition(filename: str) -> str:
    """`attachment` with the file's name, per RFC 6266.

    The `filename` parameter carries an ASCII fallback; a name that needs more gets `filename*` (RFC 8187)
    too, which every current browser prefers.

    Raises:
        ValueError: The name is empty, holds control characters or a path separator.
    """
    if not filename or not filename.isprintable() or "/" in filename or "\\" in filename:
        raise ValueError("filename must be a non-empty printable name without path separators")
    fallback = "".join(c if " " <= c <= "~" and c != '"' else "_" for c in filename)
    value = f'attachment; filename="{fallback}"'
    if fallback != filename:
        value += f"; filename*=UTF-8''{quote(filename, safe='')}"
    return value
