"""Bytes of the export file: CSV (header row, LF line ends, minimal quoting) or ndjson (DECISIONS 4)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from litestar_userio.exports.columns import Column
from litestar_userio.exports.document import csv_cell
from litestar_userio.exports.pointers import resolve

__all__ = ["CONTENT_TYPES", "csv_header", "csv_rows", "ndjson_lines"]

CONTENT_TYPES = {"csv": "text/csv", "ndjson": "application/x-ndjson"}

_encoder = msgspec.json.Encoder()


def csv_header(columns: list[Column]) -> bytes:
    """The header row: the field names in request order."""
    return (",".join(csv_cell(c.name) for c in columns) + "\n").encode()


def _getter(tokens: tuple[str, ...]) -> Callable[[dict[str, Any]], Any]:
    """A fast reader of one column: plain lookups for one or two object keys, the general walk otherwise."""
    if len(tokens) == 1:
        (key,) = tokens
        return lambda document: document.get(key)
    if len(tokens) == 2 and not tokens[1].isdigit():
        outer, inner = tokens

        def two(document: dict[str, Any]) -> Any:
            value = document.get(outer)
            return value.get(inner) if isinstance(value, dict) else None

        return two
    path = list(tokens)
    return lambda document: resolve(document, path)


def csv_rows(documents: list[dict[str, Any]], columns: list[Column], *, escape_formulas: bool = False) -> bytes:
    """One row per user."""
    getters = [_getter(column.tokens) for column in columns]
    cell = csv_cell
    lines = [
        ",".join([cell(get(document), escape_formulas=escape_formulas) for get in getters]) for document in documents
    ]
    lines.append("")
    return "\n".join(lines).encode()


def ndjson_lines(documents: list[dict[str, Any]]) -> bytes:
    """One JSON object per line, one line per user."""
    buffer = bytearray()
    for document in documents:
        buffer += _encoder.encode(document)
        buffer += b"\n"
    return bytes(buffer)
