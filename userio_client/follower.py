"""`userio changes`: the change log as ndjson on stdout, one entry a line, resumable (docs/changes.md#the-client).

With `--state FILE` the cursor after the last entry written (and flushed) is saved there, replaced atomically, and
read back at the next start: entries are printed at least once (a crash between printing and saving prints the last
page again; a consumer drops a repeat by its `id`). `--follow` keeps asking every `--poll` seconds once caught up.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urlencode

import msgspec

from userio_client.client import AdminClient, TransferError

__all__ = ["CHANGES_PATH", "FollowSettings", "follow_changes", "read_state", "write_state"]

CHANGES_PATH = "/_api/admin/users/changes"


@dataclass
class FollowSettings:
    """What one `userio changes` run was asked to do."""

    cursor: str | None = None
    """Where to start; None: the saved state, else the oldest kept entry."""
    state: Path | None = None
    """Where the cursor is kept between runs."""
    follow: bool = False
    poll: float = 2.0
    limit: int = 500


def read_state(path: Path) -> str | None:
    """The cursor saved in `path`; None when there is none yet."""
    try:
        text = path.read_text("utf-8").strip()
    except FileNotFoundError:
        return None
    return text or None


def write_state(path: Path, cursor: str) -> None:
    """Save `cursor` in `path` atomically (a crash leaves the old one or the new one)."""
    temp = path.with_name(f".{path.name}.tmp")
    with temp.open("w", encoding="utf-8") as file:
        file.write(cursor + "\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(temp, path)


async def follow_changes(settings: FollowSettings, client: AdminClient, out: IO[bytes] | None = None) -> int:
    """Print entries until caught up (or forever with `follow`); how many were printed."""
    out = out or sys.stdout.buffer
    cursor = settings.cursor or (read_state(settings.state) if settings.state is not None else None)
    printed = 0
    while True:
        query = {"limit": settings.limit, **({"cursor": cursor} if cursor else {})}
        try:
            body = await client.get_json(f"{CHANGES_PATH}?{urlencode(query)}", action="read the change log")
        except TransferError as error:
            if error.status == 410:
                raise TransferError(
                    "the saved cursor is older than the change log's retention: take a full export and follow from"
                    " its watermark (userio changes --cursor WATERMARK)"
                ) from error
            raise
        page = body["result"]
        items = page["items"]
        if items:
            out.write(b"".join(msgspec.json.encode(item) + b"\n" for item in items))
            out.flush()
            printed += len(items)
        cursor = page["next_cursor"]
        if settings.state is not None:
            write_state(settings.state, cursor)
        if page["has_more"]:
            continue
        if not settings.follow:
            return printed
        await asyncio.sleep(settings.poll)
