"""Checking an export request's columns and naming them.

See docs/reference.md#export-columns and docs/reference.md#export-file-format.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from msgspec import UNSET

from litestar_userio.errors import Cause, UserExportNonUniqueFieldNames, ValidationFailed
from litestar_userio.exports.export_schemas import ExportRequest
from litestar_userio.exports.pointers import (
    PointerError,
    default_pointers,
    derive_field_name,
    parse_pointer,
    unsupported_reason,
)

__all__ = ["Column", "check_request", "columns_for"]


class Column(msgspec.Struct, frozen=True):
    """One CSV column: the pointer's tokens and the header name."""

    tokens: tuple[str, ...]
    name: str


def check_request(request: ExportRequest) -> list[Column] | None:
    """The columns `csv.fields` asks for (None: the default set); raises on a bad pointer or duplicate names.

    Field names must be unique for ndjson requests too, as the reference checks them whatever the format.
    """
    if request.csv is UNSET or request.csv.fields is UNSET:
        return None
    if not request.csv.fields:  # the reference's design: a non-empty array; a CSV needs at least one column
        raise ValidationFailed([Cause("/csv/fields", "minItems", {"expected": 1, "actual": 0})])
    causes: list[Cause] = []
    columns: list[Column] = []
    for index, field in enumerate(request.csv.fields):
        location = f"/csv/fields/{index}"
        try:
            tokens = parse_pointer(field.pointer)
        except PointerError as exc:
            causes.append(
                Cause(
                    f"{location}/pointer",
                    "format",
                    {"format": "json-pointer", "pointer": field.pointer, "error": str(exc)},
                )
            )
            continue
        if reason := unsupported_reason(tokens):
            causes.append(Cause(f"{location}/pointer", "pointer", {"pointer": field.pointer, "error": reason}))
            continue
        if field.field_name == "":
            causes.append(Cause(f"{location}/field_name", "minLength", {"expected": 1, "actual": 0}))
            continue
        name = derive_field_name(tokens) if field.field_name is UNSET else field.field_name
        columns.append(Column(tuple(tokens), name))
    if causes:
        raise ValidationFailed(causes)
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise UserExportNonUniqueFieldNames(names)
    return columns


def columns_for(requested: list[Column] | None, custom_attribute_names: Iterable[str]) -> list[Column]:
    """The requested columns, or the supported pointers then each declared custom attribute."""
    if requested is not None:
        return requested
    columns = []
    for pointer in default_pointers(custom_attribute_names):
        tokens = parse_pointer(pointer)
        columns.append(Column(tuple(tokens), derive_field_name(tokens)))
    return columns
