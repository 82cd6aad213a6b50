"""Wire shapes of the export API (docs/reference.md#export): every answer is `{"result": ...}`."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any, Literal

from jsonschema import Draft202012Validator
from msgspec import UNSET, Struct, UnsetType

from litestar_userio.errors import ErrorObject

__all__ = [
    "EXPORT_REQUEST_SCHEMA",
    "CSVField",
    "CSVOptions",
    "EncryptionOptions",
    "ExportProgress",
    "ExportRequest",
    "ExportResult",
    "ExportTask",
    "ExportTaskList",
    "ExportTaskListResult",
    "export_request_validator",
]


class CSVField(Struct, omit_defaults=True):
    """A column: a JSON pointer and, optionally, its header name; other keys are ignored (ref)."""

    pointer: str
    field_name: str | UnsetType = UNSET


class CSVOptions(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """CSV settings; without `fields`, every supported pointer is a column."""

    fields: list[CSVField] | UnsetType = UNSET
    escape_formulas: bool | UnsetType = UNSET
    """Beyond the reference: prefix text cells that start with `=`, `+`, `-`, `@`, tab or CR with `'` (OWASP's rule
    against formula injection in spreadsheets). Off by default, so values stay exact."""


class EncryptionOptions(Struct, forbid_unknown_fields=True):
    """The lossless export's encryption (docs/reference.md#export-lossless): age X25519 public keys only."""

    age_recipients: list[str]
    """`age1...` public keys; the file is encrypted to each of them (any one's identity decrypts it)."""


class ExportRequest(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The export request (docs/reference.md#export-request, docs/reference.md#export-columns)."""

    format: Literal["csv", "ndjson", "userio"]
    csv: CSVOptions | UnsetType = UNSET
    encryption: EncryptionOptions | UnsetType = UNSET
    """`format: "userio"` only, and required there (docs/reference.md#export-lossless)."""
    since: str | UnsetType = UNSET
    """Beyond the reference (docs/changes.md): a watermark or change-log cursor; the file then holds only the users
    changed after it, and a tombstone for each one deleted (a delta export)."""


class ExportProgress(Struct):
    """While pending (beyond the reference): users written so far."""

    processed: int


class ExportTask(Struct, omit_defaults=True):
    """The task (docs/reference.md#export-task-lifecycle), with `record_count`, `size` and `sha256` once completed."""

    id: str
    created_at: datetime
    status: Literal["pending", "completed"]
    request: Any
    completed_at: datetime | UnsetType = UNSET
    download_url: str | UnsetType = UNSET
    record_count: int | UnsetType = UNSET
    size: int | UnsetType = UNSET
    sha256: str | UnsetType = UNSET
    watermark: str | UnsetType = UNSET
    """Beyond the reference: the change-log cursor of the snapshot the file holds (pass it as the next `since`)."""
    failed_at: datetime | UnsetType = UNSET
    error: ErrorObject | UnsetType = UNSET
    progress: ExportProgress | UnsetType = UNSET


class ExportResult(Struct):
    """The envelope of every export answer."""

    result: ExportTask


EXPORT_REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["format"],
    "properties": {
        "format": {"type": "string", "enum": ["csv", "ndjson", "userio"]},
        "encryption": {
            "type": "object",
            "additionalProperties": False,
            "required": ["age_recipients"],
            "properties": {"age_recipients": {"type": "array", "items": {"type": "string"}}},
        },
        "csv": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "fields": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["pointer"],
                        "properties": {"pointer": {"type": "string"}, "field_name": {"type": "string"}},
                    },
                },
                "escape_formulas": {"type": "boolean"},
            },
        },
        "since": {"type": "string", "minLength": 1, "maxLength": 200},
    },
}
"""`ExportRequest` as the reference's JSON schema (`userexport/service.go`), used to report every cause of a
request msgspec refused. A field object may carry other keys (ignored); `csv` may not (beyond: a typo such as
`"field"` would otherwise export every column)."""


@cache
def export_request_validator() -> Draft202012Validator:
    """The validator of `EXPORT_REQUEST_SCHEMA`."""
    return Draft202012Validator(EXPORT_REQUEST_SCHEMA)


class ExportTaskList(Struct):
    """`GET /users/export`: newest first, without download URLs; `next_cursor` is null on the last page."""

    items: list[ExportTask]
    next_cursor: str | None


class ExportTaskListResult(Struct):
    """The envelope of the export list."""

    result: ExportTaskList
