"""The input's records as the importer sends them: bytes as read, request body, login ids; the checking first pass."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

import msgspec

from userio_client.client import TransferError
from userio_client.phones import PhoneFixer
from userio_client.reader import (
    CSVRows,
    InputError,
    JSONRecords,
    RequestOptions,
    decode_record,
    looks_like_csv,
    one_line,
)
from userio_client.sources import ConversionError, Source, keep_old_id
from userio_core.login_ids import normalize_login_id

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["InputPass", "InputSummary", "Record", "open_input", "scan_input"]

_encoder = msgspec.json.Encoder()


@dataclass(slots=True)
class Record:
    """One input record: where it was, its bytes as read, and what is sent for it."""

    line: int
    raw: bytes
    """Exactly as read (what the failed file gets)."""
    body: bytes
    """What goes into the request: the record itself, or the converted one with `--from`."""
    keys: tuple[str, ...]
    """Normalized login ids, for ordering across requests."""
    warnings: list[dict[str, str]] | None = None
    """What the client changed or could not carry (`--from`, `--phone-region`), for the report."""
    kept_id: bool = False
    """`--from`: the old system's user id is the record's `sub` (`sources.keep_old_id`)."""


class _LoginIds(msgspec.Struct):
    """The members the client reads of a record it sends as is (msgspec skips the rest without building it)."""

    email: Any = None
    phone_number: Any = None
    preferred_username: Any = None


_login_ids_decoder = msgspec.json.Decoder(_LoginIds)


def _keys(email: Any, phone: Any, username: Any) -> tuple[str, ...]:
    """The server's own normalization (`userio_core/login_ids.py`): both sides agree on which records are one user."""
    keys = []
    if isinstance(email, str):
        keys.append("email:" + normalize_login_id("email", email))
    if isinstance(phone, str):
        keys.append("phone_number:" + normalize_login_id("phone_number", phone))
    if isinstance(username, str):
        keys.append("preferred_username:" + normalize_login_id("preferred_username", username))
    return tuple(keys)


def _login_keys(record: dict[str, Any]) -> tuple[str, ...]:
    return _keys(record.get("email"), record.get("phone_number"), record.get("preferred_username"))


def _raw_login_keys(line: int, raw: bytes, *, normalize: bool = True) -> tuple[str, ...]:
    """Login keys straight from the record's bytes; an `InputError` when it is not one JSON object.

    `normalize=False` only checks the record (the first pass over a file needs no keys).
    """
    try:
        ids = _login_ids_decoder.decode(raw)
    except msgspec.ValidationError as exc:
        raise InputError(line, f"a record must be a JSON object ({exc})") from exc
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise InputError(line, f"not a valid JSON record: {exc}") from exc
    return _keys(ids.email, ids.phone_number, ids.preferred_username) if normalize else ()


class InputPass:
    """One pass over the input: records with their bytes, plus what the failed file needs."""

    def __init__(
        self,
        stream: BinaryIO,
        source: Source | None,
        upsert: Callable[[], bool],
        *,
        late_options: bool = True,
        ignored: frozenset[str] = frozenset(),
        phones: PhoneFixer | None = None,
    ) -> None:
        self.stream = stream
        self._source = source
        self._upsert = upsert
        self._phones = phones
        self.with_keys = True
        """False for a pass that only checks records (no login-id normalization needed)."""
        self.csv: CSVRows | None = None
        self.json: JSONRecords | None = None
        self._convert = source.convert if source is not None else None
        if source is not None and source.reads == "csv":
            self.csv = CSVRows(stream)
        elif source is not None and source.csv_header is not None and looks_like_csv(stream):
            self.csv = CSVRows(stream, header=source.csv_header)
            self._convert = source.convert_csv
        else:
            members = source.members if source is not None else None
            self.json = JSONRecords(stream, late_options=late_options, ignored=ignored, members=members)
            if source is not None and self.json.layout == "request":
                raise InputError(None, f"--from {source.name} reads the {source.name} export, not an import request")

    @property
    def layout(self) -> str:
        """`ndjson`, `array`, `request` or `csv`."""
        return "csv" if self.json is None else self.json.layout

    @property
    def options(self) -> RequestOptions:
        """The request object's own identifier/upsert/dry_run (empty for other layouts)."""
        return self.json.options if self.json is not None else RequestOptions()

    @property
    def failed_header(self) -> bytes:
        """What the failed file starts with (the CSV header row)."""
        if self.csv is None:
            return b""
        header = self.csv.header_raw
        return header if header.endswith(b"\n") else header + b"\n"

    def failed_line(self, raw: bytes) -> bytes:
        """A failed record as the failed file gets it: its own bytes, on one line (CSV: its own row)."""
        if self.csv is not None:
            return raw if raw.endswith(b"\n") else raw + b"\n"
        if self.layout == "ndjson":
            return raw + b"\n"  # the line as read (a CRLF line keeps its CR)
        return one_line(raw) + b"\n"

    def records(self) -> Iterator[Record]:
        """The records in input order."""
        if self.csv is not None:
            assert self._source is not None
            for row in self.csv:
                yield self._converted(row.line, row.raw, row.values)
            return
        assert self.json is not None
        ndjson = self.json.layout == "ndjson"
        phones = self._phones
        for item in self.json:
            if self._source is not None:
                yield self._converted(item.line, item.raw, decode_record(item))
                continue
            body = item.raw.strip(b" \t\r") if ndjson else item.raw
            if phones is not None and phones.may_change(body):
                value = decode_record(item)
                warnings: list[dict[str, str]] = []
                if phones.fix(value, warnings):
                    yield Record(item.line, item.raw, _encoder.encode(value), _login_keys(value), warnings)
                    continue
            yield Record(item.line, item.raw, body, _raw_login_keys(item.line, body, normalize=self.with_keys))

    def _converted(self, line: int, raw: bytes, value: Any) -> Record:
        assert self._source is not None
        warnings: list[dict[str, str]] = []
        try:
            assert self._convert is not None
            record = self._convert(value, upsert=self._upsert(), warnings=warnings)
        except ConversionError as exc:
            raise InputError(line, str(exc)) from exc
        kept_id = keep_old_id(self._source, record, warnings)
        if self._phones is not None:
            self._phones.fix(record, warnings)
        return Record(line, raw, _encoder.encode(record), _login_keys(record), warnings or None, kept_id)


def open_input(path: Path | None, age_identities: list[Any] | None = None) -> BinaryIO:
    """The input file (None: standard input), decrypted as read with `age_identities`; `TransferError` if unreadable."""
    if path is None:
        return sys.stdin.buffer
    if age_identities:
        from userio_client.decryption import open_decrypted

        return open_decrypted(path, age_identities)
    try:
        return path.open("rb")
    except OSError as exc:
        raise TransferError(f"cannot read {path}: {exc.strerror}") from exc


@dataclass
class InputSummary:
    """What the first pass over a file found."""

    records: int
    layout: str
    options: RequestOptions
    size: int


def scan_input(
    path: Path, source: Source | None, phone_region: str | None = None, age_identities: list[Any] | None = None
) -> InputSummary:
    """Check every record of a file (and convert it with `--from`) without sending anything; count them."""
    stream = open_input(path, age_identities)
    with stream:
        size = os.fstat(stream.fileno()).st_size
        phones = PhoneFixer(phone_region) if phone_region else None
        reader = InputPass(stream, source, lambda: False, phones=phones)
        if reader.json is not None and source is None and phones is None:
            count = _check_records(reader.json)
        else:
            reader.with_keys = False
            count = sum(1 for _ in reader.records())
        return InputSummary(count, reader.layout, reader.options, size)


def _check_records(records: JSONRecords) -> int:
    """Check records sent as they are, and count them: `InputPass.records` less what only sending needs."""
    strip = records.layout == "ndjson"
    count = 0
    for item in records:
        _raw_login_keys(item.line, item.raw.strip(b" \t\r") if strip else item.raw, normalize=False)
        count += 1
    return count
