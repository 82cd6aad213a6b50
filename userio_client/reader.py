"""Streaming input of the import CLI: one record at a time, each with its exact original bytes.

Why streaming: a migration file can be larger than memory, so nothing here holds more than the record being
read (plus one read buffer). Why original bytes: records the server fails are written back to the failed file
exactly as read (secrets intact, not the server's redacted echo), so it can be fixed and resubmitted as is.

Three JSON layouts are recognised from the first bytes: ndjson (one record per line), a JSON array of
records, and an import request object (`{"identifier", "upsert", "records": [...]}`,
docs/reference.md#import-request).
The two JSON forms are read by a small incremental scanner that finds each element's end without decoding it; each
record is then decoded once by msgspec to check it. Cognito's CSV is read row by row with `csv`.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Final, Literal

import msgspec

__all__ = [
    "REQUEST_KEYS",
    "CSVRow",
    "CSVRows",
    "InputError",
    "JSONRecords",
    "RawRecord",
    "RequestOptions",
    "decode_record",
    "looks_like_csv",
    "one_line",
]

JSONLayout = Literal["ndjson", "array", "request", "members"]
REQUEST_KEYS: Final = frozenset({"identifier", "upsert", "dry_run", "records"})
"""Top-level keys of an import request; a user record never has any of them (the server refuses them)."""
_IDENTIFIERS: Final = ("email", "phone_number", "preferred_username")

_READ_SIZE: Final = 1 << 16
_BOM: Final = b"\xef\xbb\xbf"
_WHITESPACE = re.compile(rb"[ \t\r\n]*+")
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_INSIDE = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
"""Everything up to the next bracket, skipping whole strings: one C-level match per structural character."""
_SCALAR = re.compile(rb"[^ \t\r\n,\]}]*+")
_OPEN, _CLOSE, _QUOTE = frozenset(b"{["), frozenset(b"}]"), ord('"')


class InputError(Exception):
    """The input file is not what the CLI can read; carries the line where it went wrong."""

    def __init__(self, line: int | None, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}" if line is not None else message)


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One record as read: where it starts and its exact bytes."""

    line: int
    """1-based line of the input where the record starts."""
    raw: bytes
    """ndjson: the line without its newline; array/request forms: the element from `{` to `}`."""


@dataclass
class RequestOptions:
    """The defaults an import request object carries; command-line flags override them.

    See docs/reference.md#import-request.
    """

    identifier: str | None = None
    upsert: bool | None = None
    dry_run: bool | None = None
    after_records: list[str] = field(default_factory=list)
    """Keys that came after `records`: only known once the whole file was read."""


def decode_record(record: RawRecord) -> dict[str, Any]:
    """The record as a dict; an `InputError` naming its line when it is not one JSON object."""
    try:
        value = msgspec.json.decode(record.raw)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise InputError(record.line, f"not a valid JSON record: {exc}") from exc
    if not isinstance(value, dict):
        raise InputError(record.line, f"a record must be a JSON object, not {type(value).__name__}")
    return value


def looks_like_csv(stream: BinaryIO) -> bool:
    """Whether a stream's first bytes (peeked, not read) start something other than JSON: a CSV file."""
    peek = getattr(stream, "peek", None)
    head = peek(64)[:64] if peek is not None else b""
    head = head.removeprefix(_BOM).lstrip(b" \t\r\n")
    return bool(head) and head[:1] not in (b"{", b"[")


def one_line(raw: bytes) -> bytes:
    """The record's bytes on one line: line breaks (JSON whitespace between tokens here) become spaces."""
    return raw.replace(b"\r", b" ").replace(b"\n", b" ") if b"\n" in raw or b"\r" in raw else raw


class _Buffer:
    """A read buffer over a binary stream with a position and the line number at that position."""

    def __init__(self, stream: BinaryIO) -> None:
        self._read = getattr(stream, "read1", stream.read)
        """One read of the source at most: a terminal's Ctrl-D ends one read, and a second read waits for more."""
        self.data = b""
        self.pos = 0
        self.line = 1
        self.eof = False

    def more(self) -> int | None:
        """Read more input, dropping what lies before `pos`; the shift of offsets, or None at the end."""
        if self.eof:
            return None
        # Grow geometrically while one value keeps going, so a huge record is not copied once per 64 KiB.
        chunk = self._read(max(_READ_SIZE, len(self.data) - self.pos))
        if not chunk:
            self.eof = True
            return None
        shift = self.pos
        self.data = self.data[self.pos :] + chunk
        self.pos = 0
        return shift

    def advance(self, to: int) -> None:
        self.line += self.data.count(b"\n", self.pos, to)
        self.pos = to

    def skip_bom(self) -> None:
        while len(self.data) - self.pos < len(_BOM) and self.more() is not None:
            pass
        if self.data.startswith(_BOM, self.pos):
            self.pos += len(_BOM)

    def skip_whitespace(self) -> None:
        while True:
            end = _WHITESPACE.match(self.data, self.pos)
            assert end is not None
            self.advance(end.end())
            if self.pos < len(self.data) or self.more() is None:
                return

    def peek(self) -> int | None:
        """The byte at `pos` (reading more if needed), or None at the end of the input."""
        while self.pos >= len(self.data):
            if self.more() is None:
                return None
        return self.data[self.pos]

    def expect(self, char: bytes, what: str) -> None:
        self.skip_whitespace()
        byte = self.peek()
        if byte != char[0]:
            found = "the end of the file" if byte is None else repr(chr(byte))
            raise InputError(self.line, f"expected {what}, found {found}")
        self.advance(self.pos + 1)

    def value_end(self) -> int:
        """The offset just past the JSON value starting at `pos` (which does not move)."""
        first = self.peek()
        if first is None:
            raise InputError(self.line, "unexpected end of the file")
        start_line = self.line
        offset = self.pos
        if first == _QUOTE:
            while (match := _STRING.match(self.data, offset)) is None:
                shift = self.more()
                if shift is None:
                    raise InputError(start_line, "unterminated string")
                offset -= shift
            return match.end()
        if first not in _OPEN:
            while (end := _SCALAR.match(self.data, offset).end()) == len(self.data):  # type: ignore[union-attr]
                shift = self.more()
                if shift is None:
                    break
                offset -= shift
            if end == offset:
                raise InputError(start_line, f"unexpected {chr(first)!r}")
            return end
        depth = 0
        index = offset
        while True:
            index = _INSIDE.match(self.data, index).end()  # type: ignore[union-attr]
            if index < len(self.data) and self.data[index] != _QUOTE:
                byte = self.data[index]
                index += 1
                if byte in _OPEN:
                    depth += 1
                elif byte in _CLOSE:
                    depth -= 1
                    if depth == 0:
                        return index
                continue
            # The buffer ends inside the value (or inside a string): read on.
            shift = self.more()
            if shift is None:
                raise InputError(start_line, "unexpected end of the file inside this value")
            index -= shift

    def read_value(self) -> tuple[int, bytes]:
        """The line and exact bytes of the JSON value at `pos`; moves past it."""
        self.skip_whitespace()
        line = self.line
        end = self.value_end()
        raw = self.data[self.pos : end]
        self.advance(end)
        return line, raw

    def peek_first_key(self, offset: int) -> str | None:
        """The first key of the object whose `{` is at `offset` (None if it has none), without moving `pos`."""
        offset += 1
        while True:
            end = _WHITESPACE.match(self.data, offset).end()  # type: ignore[union-attr]
            if end < len(self.data):
                break
            shift = self.more()
            if shift is None:
                return None
            offset = end - shift
        if self.data[end] != _QUOTE:
            return None
        while (match := _STRING.match(self.data, end)) is None:
            shift = self.more()
            if shift is None:
                return None
            end -= shift
        try:
            key = msgspec.json.decode(match.group())
        except (msgspec.DecodeError, UnicodeDecodeError):
            return None
        return key if isinstance(key, str) else None

    def read_line(self) -> bytes | None:
        """The next line without its newline (a last line may lack one), or None at the end."""
        search = self.pos
        while (newline := self.data.find(b"\n", search)) < 0:
            search = len(self.data)
            shift = self.more()
            if shift is None:
                if self.pos >= len(self.data):
                    return None
                line = self.data[self.pos :]
                self.pos = len(self.data)
                return line
            search -= shift
        line = self.data[self.pos : newline]
        self.pos = newline + 1
        self.line += 1
        return line


class JSONRecords:
    """The records of an ndjson file, a JSON array, or an import request object, read incrementally.

    `layout` is known after construction; `options` fills in as the request object's keys are read (all of
    them once iteration ends).
    """

    def __init__(
        self,
        stream: BinaryIO,
        *,
        late_options: bool = True,
        ignored: frozenset[str] = frozenset(),
        members: str | None = None,
    ) -> None:
        """Open the input and recognise its layout.

        Args:
            stream: The input.
            late_options: Whether request options may follow `records`. A stream read once (stdin) must say
                False: its records are sent before such an option is seen.
            ignored: Options the caller overrides anyway (their position does not matter).
            members: A source's export holds its records in this member of one object (`{"users": [...]}`).
        """
        self._buffer = _Buffer(stream)
        self._members = members
        self._late_options = late_options
        self._ignored = ignored
        self._seen: set[str] = set()
        self.options = RequestOptions()
        self.layout: JSONLayout = self._detect()
        if self.layout == "request":
            self._open_request()

    def _detect(self) -> JSONLayout:
        buffer = self._buffer
        buffer.skip_bom()
        # Look past leading whitespace without consuming it: ndjson keeps every line as read.
        offset = buffer.pos
        while True:
            end = _WHITESPACE.match(buffer.data, offset).end()  # type: ignore[union-attr]
            if end < len(buffer.data):
                break
            shift = buffer.more()
            if shift is None:
                raise InputError(None, "the file is empty")
            offset = end - shift
        first = buffer.data[end]
        if first == ord("["):
            return "array"
        if first != ord("{"):
            buffer.advance(end)
            raise InputError(buffer.line, "expected a JSON object (ndjson or an import request) or a JSON array")
        key = buffer.peek_first_key(end)
        if key in REQUEST_KEYS:
            return "request"
        if self._members is not None and (key == self._members or not self._first_line_is_a_record(end)):
            buffer.advance(end)
            return "members"
        return "ndjson"

    def _first_line_is_a_record(self, start: int) -> bool:
        """Whether the line at `start` (in the buffer already) is a whole object without the members: ndjson.

        An export document is pretty-printed (its first line is `{`) or one line holding the members.
        """
        buffer = self._buffer
        newline = buffer.data.find(b"\n", start)
        if newline < 0 and not buffer.eof:
            return False
        try:
            value = msgspec.json.decode(buffer.data[start : newline if newline >= 0 else None])
        except (msgspec.DecodeError, UnicodeDecodeError):
            return False
        return isinstance(value, dict) and self._members not in value

    def __iter__(self) -> Iterator[RawRecord]:
        if self.layout == "ndjson":
            return self._ndjson()
        if self.layout == "array":
            return self._array()
        if self.layout == "members":
            return self._members_array()
        return self._request()

    def _members_array(self) -> Iterator[RawRecord]:
        """The elements of the members array of the export's one object; its other members are skipped."""
        buffer = self._buffer
        buffer.expect(b"{", "'{'")
        found = False
        while True:
            buffer.skip_whitespace()
            if buffer.peek() == ord("}"):
                buffer.advance(buffer.pos + 1)
                break
            if buffer.peek() != _QUOTE:
                raise InputError(buffer.line, "expected a key of the export's object")
            _, raw_key = buffer.read_value()
            buffer.expect(b":", "':'")
            if msgspec.json.decode(raw_key) == self._members and not found:
                found = True
                buffer.expect(b"[", f"'[' ({self._members} must be an array)")
                yield from self._elements()
            else:
                buffer.read_value()
            buffer.skip_whitespace()
            byte = buffer.peek()
            if byte == ord(","):
                buffer.advance(buffer.pos + 1)
            elif byte != ord("}"):
                raise InputError(buffer.line, "expected ',' or '}' in the export's object")
        self._end_of_input()
        if not found:
            raise InputError(None, f"the file has no `{self._members}` array of records")

    def _ndjson(self) -> Iterator[RawRecord]:
        buffer = self._buffer
        while True:
            line_number = buffer.line
            line = buffer.read_line()
            if line is None:
                return
            if line.strip(b" \t\r"):
                yield RawRecord(line_number, line)

    def _elements(self) -> Iterator[RawRecord]:
        """After `[`: each element up to the matching `]`."""
        buffer = self._buffer
        buffer.skip_whitespace()
        if buffer.peek() == ord("]"):
            buffer.advance(buffer.pos + 1)
            return
        while True:
            buffer.skip_whitespace()
            if buffer.peek() != ord("{"):
                found = buffer.peek()
                raise InputError(
                    buffer.line,
                    "a record must be a JSON object"
                    if found is not None
                    else "unexpected end of the file in the records array",
                )
            line, raw = buffer.read_value()
            yield RawRecord(line, raw)
            buffer.skip_whitespace()
            byte = buffer.peek()
            if byte == ord(","):
                buffer.advance(buffer.pos + 1)
            elif byte == ord("]"):
                buffer.advance(buffer.pos + 1)
                return
            else:
                raise InputError(buffer.line, "expected ',' or ']' after a record")

    def _end_of_input(self) -> None:
        buffer = self._buffer
        buffer.skip_whitespace()
        if buffer.peek() is not None:
            raise InputError(buffer.line, "unexpected data after the end of the JSON document")

    def _array(self) -> Iterator[RawRecord]:
        self._buffer.expect(b"[", "'['")
        yield from self._elements()
        self._end_of_input()

    def _read_key(self) -> tuple[int, str]:
        buffer = self._buffer
        buffer.skip_whitespace()
        if buffer.peek() != _QUOTE:
            raise InputError(buffer.line, "expected a key of the import request")
        line, raw_key = buffer.read_value()
        key = msgspec.json.decode(raw_key)
        if key in self._seen:
            raise InputError(line, f"duplicate key {key!r} in the import request")
        if key not in REQUEST_KEYS:
            raise InputError(line, f"unknown key {key!r} in the import request (allowed: {sorted(REQUEST_KEYS)})")
        self._seen.add(key)
        buffer.expect(b":", "':'")
        return line, key

    def _open_request(self) -> None:
        """Read the request object up to its records array, so the options before it are known at once."""
        buffer = self._buffer
        buffer.expect(b"{", "'{'")
        while True:
            line, key = self._read_key()
            if key == "records":
                buffer.expect(b"[", "'[' (records must be an array)")
                return
            line, raw = buffer.read_value()
            self._set_option(key, raw, line, records_read=False)
            buffer.skip_whitespace()
            if buffer.peek() != ord(","):
                raise InputError(buffer.line, "the import request has no `records`")
            buffer.advance(buffer.pos + 1)

    def _request(self) -> Iterator[RawRecord]:
        buffer = self._buffer
        yield from self._elements()
        while True:
            buffer.skip_whitespace()
            byte = buffer.peek()
            if byte == ord("}"):
                buffer.advance(buffer.pos + 1)
                break
            if byte != ord(","):
                raise InputError(buffer.line, "expected ',' or '}' in the import request")
            buffer.advance(buffer.pos + 1)
            line, key = self._read_key()
            if key == "records":
                raise InputError(line, "duplicate key 'records' in the import request")
            line, raw = buffer.read_value()
            self._set_option(key, raw, line, records_read=True)
        self._end_of_input()

    def _set_option(self, key: str, raw: bytes, line: int, *, records_read: bool) -> None:
        try:
            value = msgspec.json.decode(raw)
        except msgspec.DecodeError as exc:
            raise InputError(line, f"invalid value of {key!r}: {exc}") from exc
        if key == "identifier":
            if value not in _IDENTIFIERS:
                raise InputError(line, f"`identifier` must be one of {', '.join(_IDENTIFIERS)}")
            self.options.identifier = value
        elif not isinstance(value, bool):
            raise InputError(line, f"`{key}` must be true or false")
        elif key == "upsert":
            self.options.upsert = value
        else:
            self.options.dry_run = value
        if records_read and key not in self._ignored:
            if not self._late_options:
                raise InputError(line, f"`{key}` comes after `records`: put it first, or give it as a command option")
            self.options.after_records.append(key)


@dataclass(frozen=True, slots=True)
class CSVRow:
    """One CSV row: where it starts, its exact bytes (line ends included) and its cells by column."""

    line: int
    raw: bytes
    values: dict[str, str]


class CSVRows:
    """Rows of a CSV file with a header, each with its exact bytes (a quoted cell may span lines)."""

    def __init__(self, stream: BinaryIO, header: tuple[str, ...] | None = None) -> None:
        """`header`: the columns of a CSV written without a header row (Firebase's)."""
        self._text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")
        self._captured: list[str] = []
        self._line = 0
        self._reader = csv.reader(self._capture())
        if header is not None:
            self.header = list(header)
            self.header_raw = b""
            return
        try:
            self.header = next(self._reader)
        except StopIteration:
            raise InputError(None, "the CSV file is empty") from None
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(1, f"invalid CSV: {exc}") from exc
        self.header_raw = self._take()
        if len(set(self.header)) != len(self.header):
            raise InputError(1, "the CSV header repeats a column name")

    def _capture(self) -> Iterator[str]:
        for line in self._text:
            self._captured.append(line)
            self._line += 1
            yield line

    def _take(self) -> bytes:
        raw = "".join(self._captured).encode()
        self._captured.clear()
        return raw

    def __iter__(self) -> Iterator[CSVRow]:
        while True:
            start = self._line + 1
            try:
                cells = next(self._reader)
            except StopIteration:
                return
            except (csv.Error, UnicodeDecodeError) as exc:
                raise InputError(start, f"invalid CSV: {exc}") from exc
            raw = self._take()
            if not cells or cells == [""]:
                continue
            if len(cells) != len(self.header):
                raise InputError(start, f"the row has {len(cells)} cells, the header {len(self.header)}")
            yield CSVRow(start, raw, dict(zip(self.header, cells, strict=True)))
