"""`litestar userio export`: start an export, wait for it, download the file and prove it is the server's.

Why the care: the download URL lives 60 seconds and may point at another host (S3), so a slow start gets a
fresh URL from the status endpoint instead of failing, and the admin token never goes with it (the download
client is a separate client without credentials). The file is streamed to a temporary file next to the
output, checked against the size and SHA-256 the server recorded, and only then renamed into place: the
output is either the complete, verified file or absent. `-o -` writes to stdout, also only once verified (the
temporary file then lives in the system's temporary directory), so a pipe never gets a torn or wrong file.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec

from userio_client.client import (
    EXPORT_PATH,
    AdminClient,
    Connection,
    TransferError,
    describe_transport_error,
)
from userio_client.progress import ExportProgress, format_count
from userio_core.files import fsync_directory, open_private
from userio_core.retry import NO_WAIT, Backoff, retrying

__all__ = ["ExportResult", "ExportSettings", "describe_export", "parse_field", "run_export"]

_POLL_FIRST: Final = 0.2
_POLL_MAX: Final = 2.0
_DOWNLOAD_ATTEMPTS: Final = 4
_BUSY_WAIT: Final = 5.0
_BUSY_LIMIT: Final = 300.0
"""How long to wait for another export of the project to finish (one at a time: docs/reference.md#limits)."""
_CHUNK: Final = 1 << 20
STDOUT: Final = "-"
"""`-o -`: the file goes to stdout."""


@dataclass
class ExportSettings:
    """What one `litestar userio export` run was asked to do."""

    format: Literal["csv", "ndjson", "userio"]
    output: Path
    """`-` for stdout."""
    fields: list[dict[str, str]]
    """`csv.fields` of the request (docs/reference.md#export-columns); empty: every supported pointer."""
    escape_formulas: bool = False
    """`csv.escape_formulas`: text cells a spreadsheet would run as a formula start with `'`."""
    since: str | None = None
    """A watermark: only the users changed after it, and a tombstone per deleted one (docs/changes.md)."""
    age_recipients: list[str] = field(default_factory=list)
    """`format: "userio"`: the age X25519 public keys the lossless export is encrypted to
    (docs/reference.md#export-lossless)."""


@dataclass
class ExportResult:
    """The verified file."""

    task_id: str
    path: Path
    size: int
    sha256: str
    record_count: int | None
    elapsed: float
    watermark: str | None = None
    """The change-log cursor of the file's snapshot: the next `--since`."""


def parse_field(text: str) -> dict[str, str]:
    """`--field POINTER[=NAME]` as a field object; a `ValueError` for anything but a JSON pointer.

    See docs/reference.md#export-columns.
    """
    pointer, separator, name = text.partition("=")
    if not pointer.startswith("/"):
        raise ValueError(f"--field {text!r}: expected a JSON pointer such as /email or /custom_attributes/plan=plan")
    if separator and not name:
        raise ValueError(f"--field {text!r}: the name after '=' is empty")
    return {"pointer": pointer, "field_name": name} if separator else {"pointer": pointer}


class _Expired(Exception):
    """The signed URL was refused (expired or used too late): ask the status endpoint for a fresh one."""


async def _initiate(client: AdminClient, body: bytes, progress: ExportProgress) -> dict[str, Any]:
    def note(error: BaseException, attempt: int, wait: float) -> None:
        if attempt == 1:
            progress.note("another export of this project is running: waiting for it to finish")

    tries = 1 + int(_BUSY_LIMIT // _BUSY_WAIT)
    retries = retrying(attempts=tries, on=_busy, backoff=Backoff(_BUSY_WAIT, cap=_BUSY_WAIT), on_retry=note)
    async for attempt in retries:
        with attempt:
            answer, _ = await client.post_json(EXPORT_PATH, body, action="start an export")
    result = answer.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("id"), str):
        raise TransferError("the server started an export but sent no task id")
    return result


def _busy(error: BaseException) -> bool:
    """The project's one running export holds the slot (`MaximumConcurrentJobLimitExceeded`: 429, no Retry-After)."""
    return isinstance(error, TransferError) and error.status == 429 and error.retry_after is None


async def _wait(client: AdminClient, task_id: str, progress: ExportProgress) -> dict[str, Any]:
    delay = _POLL_FIRST
    while True:
        task = await client.export_status(task_id)
        if task.get("status") == "completed":
            if "failed_at" in task or "error" in task:
                error = task.get("error") or {}
                message = error.get("message", "no reason given") if isinstance(error, dict) else str(error)
                raise TransferError(f"the export failed on the server: {message}")
            return task
        processed = (task.get("progress") or {}).get("processed")
        progress.update("export", processed if isinstance(processed, int) else None)
        await asyncio.sleep(delay)
        delay = min(delay * 2, _POLL_MAX)


def _route(url: str, connection: Connection) -> tuple[str, dict[str, str]]:
    """Where to fetch a download URL: a URL on the `--host` name goes to `--url`'s address with that Host.

    `--host` says the server at `--url` answers for that name, which need not resolve here (`trial.localhost`).
    """
    parts = urlsplit(url)
    if not connection.host or parts.hostname is None:
        return url, {}
    if _bare_host(parts.hostname) != _bare_host(connection.host):
        return url, {}
    server = urlsplit(connection.url)
    return urlunsplit(parts._replace(scheme=server.scheme, netloc=server.netloc)), {"Host": parts.netloc}


def _bare_host(host: str) -> str:
    """A host name without port, lower case."""
    return host.strip().lower().rsplit(":", 1)[0] if host.count(":") == 1 else host.strip().lower()


async def _download(
    http: httpx.AsyncClient, url: str, temp: Path, progress: ExportProgress, connection: Connection
) -> tuple[int, str]:
    """Stream `url` into `temp`; the size and SHA-256 of what arrived."""
    digest = hashlib.sha256()
    size = 0
    target, headers = _route(url, connection)
    try:
        async with http.stream("GET", target, headers=headers) as response:
            if response.status_code in (401, 403, 404, 410):
                raise _Expired()
            if not response.is_success:
                await response.aread()
                raise TransferError(
                    f"the download failed ({response.status_code}): {response.text.strip()[:200] or 'no details'}"
                )
            with open_private(temp, exclusive=False) as file:
                async for chunk in response.aiter_bytes(_CHUNK):
                    file.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
                    progress.update("download", size)
                file.flush()
                os.fsync(file.fileno())
    except httpx.TransportError as exc:
        raise TransferError(describe_transport_error(exc, url.split("?", 1)[0])) from exc
    return size, digest.hexdigest()


async def run_export(
    settings: ExportSettings, client: AdminClient, progress: ExportProgress, *, verify: Any
) -> ExportResult:
    """Initiate, wait, download, verify, rename into place."""
    started = time.monotonic()
    request: dict[str, Any] = {"format": settings.format}
    csv: dict[str, Any] = {}
    if settings.fields:
        csv["fields"] = settings.fields
    if settings.escape_formulas:
        csv["escape_formulas"] = True
    if csv:
        request["csv"] = csv
    if settings.since is not None:
        request["since"] = settings.since
    if settings.age_recipients:
        request["encryption"] = {"age_recipients": settings.age_recipients}
    to_stdout = str(settings.output) == STDOUT
    if not to_stdout and settings.output.exists():
        raise TransferError(f"{settings.output} exists: pass another -o (an export never overwrites a file)")
    created = await _initiate(client, msgspec.json.encode(request), progress)
    task_id = created["id"]
    progress.note(f"export task {task_id} started")
    task = await _wait(client, task_id, progress)
    output = settings.output
    if to_stdout:  # in a shared folder: a file of its own, readable by this user only (mode 0600)
        descriptor, name = tempfile.mkstemp(prefix=".userio-export.", suffix=".part")
        os.close(descriptor)
        temp = Path(name)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        temp = output.parent / f".{output.name}.{secrets.token_hex(4)}.part"
    # A client of its own, without the admin token: the URL may be on a storage host
    # (docs/reference.md#export-download).
    async with httpx.AsyncClient(verify=verify, timeout=httpx.Timeout(300, connect=15), follow_redirects=True) as http:
        try:
            retries = retrying(
                attempts=_DOWNLOAD_ATTEMPTS,
                on=_Expired,
                backoff=NO_WAIT,
                on_retry=lambda *_: progress.note(
                    "the download URL was refused (expired?): asking the server for a fresh one"
                ),
            )
            try:
                async for attempt in retries:
                    with attempt:
                        if attempt.retry_state.attempt_number > 1:
                            task = await client.export_status(task_id)
                        url = task.get("download_url")
                        if not isinstance(url, str):
                            raise TransferError(f"export task {task_id} completed without a download URL")
                        size, sha256 = await _download(http, url, temp, progress, client.connection)
            except _Expired:
                raise TransferError(
                    f"the storage refused {_DOWNLOAD_ATTEMPTS} fresh download URLs of export {task_id}"
                ) from None
            expected_size, expected_sha = task.get("size"), task.get("sha256")
            if expected_size is not None and expected_size != size:
                raise TransferError(
                    f"the download is {size} bytes, the server's file {expected_size}: deleted it", exit_code=1
                )
            if expected_sha is not None and expected_sha != sha256:
                raise TransferError(
                    f"the download's SHA-256 {sha256} is not the server's {expected_sha}: deleted it", exit_code=1
                )
            if to_stdout:
                _copy_to_stdout(temp)
            else:
                try:
                    os.link(temp, output)  # never replaces a file another run (or anything else) put there
                except FileExistsError:
                    raise TransferError(
                        f"{output} appeared during the export: left it alone, pass another -o"
                    ) from None
                fsync_directory(output.parent)
        finally:
            temp.unlink(missing_ok=True)
    count = task.get("record_count")
    watermark = task.get("watermark")
    return ExportResult(
        task_id=task_id,
        path=output,
        size=size,
        sha256=sha256,
        record_count=count if isinstance(count, int) else None,
        elapsed=time.monotonic() - started,
        watermark=watermark if isinstance(watermark, str) else None,
    )


def _copy_to_stdout(path: Path) -> None:
    """The verified file onto stdout; a reader that stops early (`| head`) ends the run without a traceback.

    Written with `os.write` until every byte is taken: under `PYTHONUNBUFFERED` (common in containers)
    `sys.stdout.buffer` is the raw file, whose `write` may take part of a chunk and drop the rest unreported.
    """
    sys.stdout.flush()
    descriptor = sys.stdout.fileno()
    try:
        with path.open("rb") as file:
            while chunk := file.read(_CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(descriptor, view) :]
    except BrokenPipeError:
        # Python would report the pipe again when it flushes stdout at exit: point stdout at nothing instead.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, descriptor)
        os.close(devnull)
        raise TransferError("stdout was closed before the whole file was written", exit_code=1) from None


def describe_export(result: ExportResult) -> str:
    """The closing line on stderr."""
    users = f"{format_count(result.record_count)} users, " if result.record_count is not None else ""
    where = "stdout" if str(result.path) == STDOUT else str(result.path)
    line = (
        f"export done: {where} ({users}{format_count(result.size)} bytes, "
        f"sha256 {result.sha256[:16]}... verified) in {result.elapsed:.1f} s"
    )
    return line if result.watermark is None else f"{line}; watermark {result.watermark}"
