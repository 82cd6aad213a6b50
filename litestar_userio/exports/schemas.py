"""Wire shapes of the export API (SPEC 2.5, 2.6, 4.3, 4.4): every answer is `{"result": ...}`."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from msgspec import UNSET, Struct, UnsetType

from litestar_userio.errors import ErrorObject

__all__ = [
    "CSVField",
    "CSVOptions",
    "ExportProgress",
    "ExportRequest",
    "ExportResult",
    "ExportTask",
]


class CSVField(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A column: a JSON pointer and, optionally, its header name."""

    pointer: str
    field_name: str | UnsetType = UNSET


class CSVOptions(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """CSV settings; without `fields`, every supported pointer is a column."""

    fields: list[CSVField] | UnsetType = UNSET
    escape_formulas: bool | UnsetType = UNSET
    """Beyond SPEC: prefix text cells that start with `=`, `+`, `-`, `@`, tab or CR with `'` (OWASP's rule
    against formula injection in spreadsheets). Off by default, so values stay exact."""


class ExportRequest(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """SPEC 2.6."""

    format: Literal["csv", "ndjson"]
    csv: CSVOptions | UnsetType = UNSET


class ExportProgress(Struct):
    """While pending (beyond SPEC): users written so far."""

    processed: int


class ExportTask(Struct, omit_defaults=True):
    """SPEC 2.5, plus `record_count`, `size` and `sha256` of the file once completed (beyond SPEC)."""

    id: str
    created_at: datetime
    status: Literal["pending", "completed"]
    request: Any
    completed_at: datetime | UnsetType = UNSET
    download_url: str | UnsetType = UNSET
    record_count: int | UnsetType = UNSET
    size: int | UnsetType = UNSET
    sha256: str | UnsetType = UNSET
    failed_at: datetime | UnsetType = UNSET
    error: ErrorObject | UnsetType = UNSET
    progress: ExportProgress | UnsetType = UNSET


class ExportResult(Struct):
    """The envelope of every export answer."""

    result: ExportTask
