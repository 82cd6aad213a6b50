"""The streaming reader: layouts, exact bytes, line numbers, read-buffer boundaries, flat memory."""

from __future__ import annotations

import io
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from userio_client import reader
from userio_client.reader import CSVRows, InputError, JSONRecords, decode_record, one_line

RECORDS = [
    {"email": f"u{i}@example.com", "name": 'Zoë "quoted" \\ [not] {structure}', "roles": ["a", {"x": "}"}]}
    for i in range(40)
]


class Trickle(io.BytesIO):
    """Hands out at most `size` bytes a read, as a pipe may."""

    def __init__(self, data: bytes, size: int) -> None:
        super().__init__(data)
        self.size = size

    def read(self, n: int | None = -1) -> bytes:
        return super().read(self.size if n is None or n < 0 else min(n, self.size))


@pytest.fixture(params=[1, 3, 17, 65536], ids=lambda n: f"read{n}")
def stream(request) -> Callable[[bytes], io.BytesIO]:
    """Every test below also runs with tiny reads, so every value straddles buffer boundaries."""
    return lambda data: Trickle(data, request.param)


def read(
    data: bytes, stream: Callable[[bytes], io.BytesIO] = io.BytesIO, **options
) -> tuple[JSONRecords, list[reader.RawRecord]]:
    records = JSONRecords(stream(data), **options)
    return records, list(records)


def test_ndjson_keeps_each_line_byte_for_byte(stream):
    lines = [json.dumps(r, ensure_ascii=False).encode() for r in RECORDS]
    lines[5] += b"\r"  # a CRLF line
    lines[6] = b"  " + lines[6]
    data = b"\xef\xbb\xbf\n" + b"\n".join(lines) + b"\n\n"
    records, out = read(data, stream)
    assert records.layout == "ndjson"
    assert [r.raw for r in out] == lines
    assert [r.line for r in out] == list(range(2, 2 + len(lines)))
    assert [decode_record(r) for r in out] == RECORDS


def test_ndjson_without_final_newline(stream):
    _, out = read(b'{"email":"a@x.com"}\n{"email":"b@x.com"}', stream)
    assert [r.raw for r in out] == [b'{"email":"a@x.com"}', b'{"email":"b@x.com"}']


def test_pretty_json_array_yields_each_element_with_its_first_line(stream):
    data = json.dumps(RECORDS, indent=2, ensure_ascii=False).encode()
    records, out = read(data, stream)
    assert records.layout == "array"
    assert [json.loads(r.raw) for r in out] == RECORDS
    lines = data.split(b"\n")
    assert all(lines[r.line - 1].strip() == b"{" for r in out)
    assert all(r.raw in data for r in out)  # exact slices of the input


def test_request_object_gives_options_and_records(stream):
    data = json.dumps({"identifier": "phone_number", "upsert": True, "records": RECORDS}, indent=1).encode()
    records = JSONRecords(stream(data))
    assert records.layout == "request"
    assert (records.options.identifier, records.options.upsert) == ("phone_number", True)  # known before reading
    assert [json.loads(r.raw) for r in records] == RECORDS


def test_request_options_after_records(stream):
    data = json.dumps({"records": RECORDS[:2], "dry_run": True}).encode()
    records, out = read(data, stream)
    assert len(out) == 2
    assert records.options.dry_run is True
    assert records.options.after_records == ["dry_run"]
    with pytest.raises(InputError, match="comes after `records`"):
        read(data, stream, late_options=False)
    _, out = read(data, stream, late_options=False, ignored=frozenset({"dry_run"}))  # overridden by a flag: fine
    assert len(out) == 2


@pytest.mark.parametrize(
    ("data", "line", "message"),
    [
        (b'{"email":"a@x.com"}\n{"email": tru}\n', 2, "not a valid JSON record"),
        (b'{"email":"a@x.com"}\n[1]\n', 2, "must be a JSON object"),
        (b'{"email":"a@x.com"}\n{"email":\n"b"}\n', 2, "not a valid JSON record"),
        (b'[\n {"a": 1},\n {"a": 2}\n {"a": 3}]', 4, "expected ',' or ']'"),
        (b'[\n {"a": 1},\n 2\n]', 3, "must be a JSON object"),
        (b'[\n {"a": 1},\n {"a": "open', 3, "end of the file"),
        (b'{"identifier": "name", "records": []}', 1, "`identifier` must be one of"),
        (b'{"identifier": "email",\n "recrods": []}', 2, "unknown key 'recrods'"),
        (b'[{"a": 1}]\n\nnot json', 3, "unexpected data after the end"),
    ],
)
def test_errors_name_the_line(data, line, message, stream):
    def read_all() -> None:
        _, out = read(data, stream)
        for record in out:
            decode_record(record)

    with pytest.raises(InputError, match=message) as caught:
        read_all()
    assert caught.value.line == line


def test_empty_input_is_an_error():
    with pytest.raises(InputError, match="empty"):
        read(b" \n\t ")


def test_invalid_utf8_is_an_input_error():
    _, out = read(b'{"name": "\xff"}\n')
    with pytest.raises(InputError, match="not a valid JSON record"):
        decode_record(out[0])


def test_one_line_turns_line_breaks_into_spaces():
    raw = b'{\r\n  "email": "a@x.com",\n  "name": "A"\n}'
    assert b"\n" not in one_line(raw) and b"\r" not in one_line(raw)
    assert json.loads(one_line(raw)) == json.loads(raw)


def test_csv_rows_keep_their_bytes_even_across_lines(stream):
    data = "".join(
        [
            "name,address,custom:plan\r\n",
            'Ada,"12 St James\'s Square\nLondon",pro\r\n',
            "\r\n",
            'José,"Calle ""Mayor"" 1",\r\n',
        ]
    ).encode()
    rows = CSVRows(stream(data))
    assert rows.header == ["name", "address", "custom:plan"]
    assert rows.header_raw == b"name,address,custom:plan\r\n"
    out = list(rows)
    assert [r.raw for r in out] == [
        b'Ada,"12 St James\'s Square\nLondon",pro\r\n',
        'José,"Calle ""Mayor"" 1",\r\n'.encode(),
    ]
    assert [r.line for r in out] == [2, 5]
    assert out[0].values == {"name": "Ada", "address": "12 St James's Square\nLondon", "custom:plan": "pro"}
    assert out[1].values["address"] == 'Calle "Mayor" 1'


def test_csv_row_with_the_wrong_number_of_cells():
    rows = CSVRows(io.BytesIO(b"a,b\n1,2\n1,2,3\n"))
    with pytest.raises(InputError, match="3 cells, the header 2") as caught:
        list(rows)
    assert caught.value.line == 3


def _big_request_file(path: Path, count: int) -> int:
    """An import request object with `count` records, pretty enough to span lines; its size in bytes."""
    with path.open("wb") as file:
        file.write(b'{"identifier": "email", "upsert": false, "records": [\n')
        for i in range(count):
            record = {"email": f"user{i}@example.com", "name": "Zoë Example", "custom_attributes": {"n": i}}
            file.write(msgspec.json.encode(record) + (b",\n" if i < count - 1 else b"\n"))
        file.write(b"]}\n")
    return path.stat().st_size


@pytest.mark.parametrize("count", [20_000, pytest.param(200_000, marks=pytest.mark.slow)])
def test_reading_a_big_file_keeps_memory_flat(tmp_path, count):
    """Peak memory while reading (and decoding each record, as the importer does) does not grow with the file."""
    path = tmp_path / "big.json"
    size = _big_request_file(path, count)
    tracemalloc.start()
    try:
        seen = 0
        with path.open("rb") as file:
            for record in JSONRecords(file):
                decode_record(record)
                seen += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seen == count
    # 200 000 records are about 15 MB; the reader holds one 64 KiB buffer and one record.
    assert peak < 512 * 1024, f"peak {peak} bytes for a {size}-byte file"
