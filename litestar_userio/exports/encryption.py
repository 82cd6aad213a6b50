"""Encrypting an export as it is written: age to X25519 recipients, with pyrage (docs/reference.md#export-lossless).

pyrage has no incremental encryptor, but `pyrage.encrypt_io(reader, writer, recipients)` streams: it reads its input
8 KiB at a time and writes age's STREAM chunks (64 KiB of plaintext each) as they fill (measured: a 40 MB input gave
its first chunk after 80 KiB read). It runs in a thread of its own for the whole file; each `write` hands it one
slice of plaintext and waits until it has read all of it, then stores the ciphertext it produced. So no more than a
slice of plaintext and about 64 KiB inside age are held at a time, and none of it reaches storage.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import queue
import threading
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future

import pyrage
from pyrage import x25519

from litestar_userio.errors import Cause, ValidationFailed

__all__ = ["AgeStream", "parse_recipients"]


def parse_recipients(recipients: Sequence[str], location: str = "/encryption/age_recipients") -> list[x25519.Recipient]:
    """The age X25519 recipients of a request; `Invalid/ValidationFailed` naming each one that is not such a key."""
    if not recipients:
        raise ValidationFailed(
            [Cause(location, "minItems", {"expected": 1, "actual": 0})],
            "encryption.age_recipients needs at least one age X25519 public key (age1...)",
        )
    parsed, causes = [], []
    for index, text in enumerate(recipients):
        try:
            parsed.append(x25519.Recipient.from_str(text))
        except pyrage.RecipientError:
            causes.append(
                Cause(
                    f"{location}/{index}",
                    "format",
                    {"format": "age-x25519-recipient", "value": text},
                    f"{text!r} is not an age X25519 public key (age1... as `age-keygen -y` prints it)",
                )
            )
    if causes:
        raise ValidationFailed(causes)
    return parsed


class _Plaintext(io.RawIOBase):
    """What the encrypting thread reads: slices handed over one at a time; each is acknowledged once read whole."""

    def __init__(self) -> None:
        super().__init__()
        self.slices: queue.SimpleQueue[tuple[bytes | None, Future[None]]] = queue.SimpleQueue()
        """Slices to read, each with the future set once it is read whole; None ends the file."""
        self._view = memoryview(b"")
        self._taken: Future[None] | None = None

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        # pyrage asks for `size` bytes and must never get more (it fails the stream otherwise).
        while not self._view:
            if self._taken is not None:
                self._taken.set_result(None)  # the previous slice is read whole
                self._taken = None
            data, taken = self.slices.get()
            if data is None:
                taken.set_result(None)
                return b""
            self._view, self._taken = memoryview(data), taken
        size = len(self._view) if size is None or size < 0 else size
        chunk, self._view = self._view[:size], self._view[size:]
        return bytes(chunk)


class _Ciphertext(io.RawIOBase):
    """Where the encrypting thread writes: chunks collected for the event loop to store."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.chunks.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        chunks, self.chunks = self.chunks, []  # the thread waits while this runs: no chunk is lost
        return b"".join(chunks)


class AgeStream:
    """An age file written to `sink` as plaintext comes in: `write` each slice, then `close` (or `abort`)."""

    def __init__(self, recipients: Sequence[x25519.Recipient], sink: Callable[[bytes], Awaitable[None]]) -> None:
        self._sink = sink
        self._plaintext = _Plaintext()
        self._ciphertext = _Ciphertext()
        self._done: Future[None] = Future()
        self._thread = threading.Thread(target=self._encrypt, args=(list(recipients),), name="userio-age", daemon=True)
        self._thread.start()

    def _encrypt(self, recipients: list[x25519.Recipient]) -> None:
        try:
            pyrage.encrypt_io(self._plaintext, self._ciphertext, recipients)  # type: ignore[arg-type]
        except BaseException as exc:
            self._done.set_exception(exc)
            # A slice waiting for its acknowledgement would wait forever: fail it too.
            reading = self._plaintext._taken
            if reading is not None and not reading.done():
                reading.set_exception(exc)
            while True:
                try:
                    _, taken = self._plaintext.slices.get_nowait()
                except queue.Empty:
                    break
                if not taken.done():
                    taken.set_exception(exc)
        else:
            self._done.set_result(None)

    async def _hand_over(self, data: bytes | None) -> None:
        taken: Future[None] = Future()
        if self._done.done():
            self._done.result()  # raises the thread's error
        self._plaintext.slices.put((data, taken))
        await asyncio.wrap_future(taken)

    async def write(self, data: bytes) -> None:
        """Encrypt `data` after what came before, and store the whole chunks it completed."""
        if not data:
            return
        await self._hand_over(data)
        if ciphertext := self._ciphertext.take():
            await self._sink(ciphertext)

    async def close(self) -> None:
        """End the file: age writes its last chunk, which is stored with what was left."""
        await self._hand_over(None)
        await asyncio.wrap_future(self._done)
        if ciphertext := self._ciphertext.take():
            await self._sink(ciphertext)

    async def abort(self) -> None:
        """Stop the encrypting thread without storing anything more (the caller aborts the file)."""
        if not self._done.done():
            self._plaintext.slices.put((None, Future()))
        with contextlib.suppress(Exception):  # the thread's own error, if any, is not the one being reported
            await asyncio.wrap_future(self._done)
