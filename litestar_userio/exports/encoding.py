"""Bytes of the export file: CSV (header row, LF line ends, minimal quoting) or ndjson (DECISIONS 4)."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from litestar_userio.exports.columns import Column
from litestar_userio.exports.document import FORMULA_STARTS, LEADING_SPACE, csv_cell, csv_quote, csv_text
from litestar_userio.exports.pointers import resolve

__all__ = ["CONTENT_TYPES", "csv_header", "csv_rows", "ndjson_lines"]

CONTENT_TYPES = {"csv": "text/csv", "ndjson": "application/x-ndjson"}

_encoder = msgspec.json.Encoder()


def csv_header(columns: list[Column]) -> bytes:
    """The header row: the field names in request order."""
    return (",".join(csv_cell(c.name) for c in columns) + "\n").encode()


def _values(documents: list[dict[str, Any]], tokens: tuple[str, ...]) -> list[Any]:
    """One column's values: plain lookups for one or two object keys, the general walk otherwise."""
    if len(tokens) == 1:
        (key,) = tokens
        return [document.get(key) for document in documents]
    if len(tokens) == 2 and not tokens[1].isdigit():
        outer, inner = tokens
        return [
            value.get(inner) if isinstance(value, dict) else None
            for value in [document.get(outer) for document in documents]
        ]
    path = list(tokens)
    return [resolve(document, path) for document in documents]


_SEPARATOR = "\x00"
_COLUMN_NEEDS_QUOTES = re.compile(rf'[",\r\n]|(?:^|\x00)(?:[{LEADING_SPACE}]|\\\.(?=\x00|$))')
"""Whether any cell of a column, joined with U+0000, needs quotes (`csv_quote`'s rule for each cell). U+0000 never
reaches a stored string (imports/screening.py); one that did would only make this say yes for nothing."""


def csv_rows(documents: list[dict[str, Any]], columns: list[Column], *, escape_formulas: bool = False) -> bytes:
    """One row per user, built a column at a time.

    Most columns need no quoting anywhere: one regex over the whole column decides that, instead of one per cell,
    and the rows are joined from the columns. Measured on 20 000 generated users with the 33 default columns,
    three rounds in one process on the busy 2-core machine: 15.6-22.2 us per user cell by cell, 12.4-15.2 column by
    column.
    """
    texts_by_column = []
    for column in columns:
        values = _values(documents, column.tokens)
        if escape_formulas:
            texts = [
                ("'" + v if v.startswith(FORMULA_STARTS) else v)
                if v.__class__ is str
                else ("" if v is None else csv_text(v))
                for v in values
            ]
        else:
            texts = [v if v.__class__ is str else ("" if v is None else csv_text(v)) for v in values]
        if _COLUMN_NEEDS_QUOTES.search(_SEPARATOR.join(texts)):
            texts = [csv_quote(text) for text in texts]
        texts_by_column.append(texts)
    lines = [",".join(row) for row in zip(*texts_by_column, strict=True)] if columns else [""] * len(documents)
    lines.append("")
    return "\n".join(lines).encode()


def ndjson_lines(documents: list[dict[str, Any]]) -> bytes:
    """One JSON object per line, one line per user."""
    buffer = bytearray()
    for document in documents:
        buffer += _encoder.encode(document)
        buffer += b"\n"
    return bytes(buffer)
