"""Reading a lossless export as it is decrypted: `userio import FILE --from userio --age-identity KEYFILE`.

See docs/reference.md#export-lossless. pyrage's `decrypt_io` streams (age's STREAM chunks of 64 KiB, each
authenticated before it is handed out); it runs in a thread writing into a pipe, and the import reads the pipe as it
reads any file, twice (the check, then the sending). The plaintext never touches the disk, and a file cut short or
tampered with fails at the chunk that does not authenticate, before anything is sent.
"""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path
from typing import BinaryIO, Final

import pyrage
from pyrage import x25519

from userio_client.client import TransferError
from userio_client.reader import InputError

__all__ = ["AGE_MAGIC", "is_age_file", "load_identities", "open_decrypted"]

AGE_MAGIC: Final = b"age-encryption.org/v1\n"
"""How every age file (binary, not armored) begins."""


def is_age_file(path: Path) -> bool:
    """Whether the file is an age file (so it needs `--age-identity`)."""
    try:
        with path.open("rb") as file:
            return file.read(len(AGE_MAGIC)) == AGE_MAGIC
    except OSError:
        return False


def load_identities(path: Path) -> list[x25519.Identity]:
    """The age X25519 identities of a key file (as `age-keygen` writes it: `#` comments, one key a line)."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TransferError(f"cannot read the age identity file {path}: {exc}") from exc
    identities = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("age1"):
            continue  # a comment, or the public key a generator printed beside it
        try:
            identities.append(x25519.Identity.from_str(line))
        except pyrage.IdentityError:
            raise TransferError(f"{path}:{number}: not an age X25519 identity (AGE-SECRET-KEY-1...)") from None
    if not identities:
        raise TransferError(f"{path} holds no age identity (AGE-SECRET-KEY-1..., as age-keygen writes it)")
    return identities


class _Decrypted(io.RawIOBase):
    """The plaintext of an age file, read from the pipe a decrypting thread fills; `fileno` is the file's own."""

    def __init__(self, path: Path, identities: list[x25519.Identity]) -> None:
        super().__init__()
        try:
            self._source = path.open("rb")
        except OSError as exc:
            raise TransferError(f"cannot read {path}: {exc.strerror}") from exc
        read_end, write_end = os.pipe()
        self._pipe = os.fdopen(read_end, "rb", buffering=0)
        self._sink = os.fdopen(write_end, "wb")
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._decrypt, args=(identities,), name="userio-age", daemon=True)
        self._thread.start()

    def _decrypt(self, identities: list[x25519.Identity]) -> None:
        try:
            pyrage.decrypt_io(self._source, self._sink, identities)
        except BaseException as exc:  # reported to the reader at the end of what was decrypted
            self._error = exc
        finally:
            try:
                self._sink.close()
            except OSError:  # the reader went away first
                pass

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        count = self._pipe.readinto(buffer)
        if not count:
            self._thread.join()
            if self._error is not None and not isinstance(self._error, BrokenPipeError):
                raise InputError(None, f"cannot decrypt the age file: {self._error}")
        return count or 0

    def fileno(self) -> int:
        """The encrypted file's descriptor: its size is what a resumed run checks."""
        return self._source.fileno()

    def close(self) -> None:
        if not self.closed:
            self._pipe.close()  # a thread still writing gets a broken pipe and stops
            self._thread.join()
            self._source.close()
        super().close()


def open_decrypted(path: Path, identities: list[x25519.Identity]) -> BinaryIO:
    """A buffered stream of the plaintext of the age file at `path`."""
    return io.BufferedReader(_Decrypted(path, identities), buffer_size=1 << 16)
