"""File-system steps the server and the `userio` client share: private files and durable renames.

It imports nothing of litestar_userio, so the client can use it without loading the server.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

__all__ = ["fsync_directory", "open_private", "write_private"]


def open_private(path: Path, *, exclusive: bool = True, append: bool = False) -> BinaryIO:
    """Open `path` for writing, readable by its owner only: mode 0600 from creation, never briefly wider.

    Args:
        path: The file.
        exclusive: Refuse (`FileExistsError`) a file that exists; False: truncate it (its mode stays as it was).
        append: Keep what a file that exists holds and write after it (its mode stays as it was).
    """
    if append:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    else:
        flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    return os.fdopen(os.open(path, flags | getattr(os, "O_BINARY", 0), 0o600), "ab" if append else "wb")


def write_private(path: Path, data: bytes, *, exclusive: bool = True) -> None:
    """Write `data` to a file only its owner can read (see `open_private`); on disk when this returns."""
    with open_private(path, exclusive=exclusive) as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def fsync_directory(path: Path) -> None:
    """Make a rename or link in the directory `path` durable; best effort, as not every platform can open one."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
