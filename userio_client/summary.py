"""The end of an import run: failures grouped by reason and location, warnings by kind, each with one example.

The server's own warnings on records it applied anyway (`password is ignored because the user already exists.`)
are counted by their text, each with the first few records' indexes.

Why from the report: it holds every outcome of the run, including those written before a crash and a
`--resume`, so the summary of a resumed run covers the whole run. Printed on stderr and written as JSON
beside the report (`report.failures.json` for `report.ndjson`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec

from userio_core.files import write_private

__all__ = ["FailureSummary", "failures_path"]

_SHOWN: Final = 10
"""Groups printed on stderr (the JSON has all of them)."""
_MESSAGE_SHOWN: Final = 200
"""Characters of an example's message printed on stderr."""
_INDEXES_KEPT: Final = 5
"""Records named per server warning (the first ones in the file): enough to look a few up in the report."""
_LOGIN_ID_ATTRIBUTES: Final = ("email", "phone_number", "preferred_username")
_E164_SHAPE: Final = re.compile(r"\+[0-9]+")


def failures_path(report: Path) -> Path:
    """`report.ndjson` -> `report.failures.json`."""
    return report.with_name(f"{report.stem}.failures.json")


class _Line(msgspec.Struct):
    index: int | None = None
    line: int | None = None
    outcome: str | None = None
    errors: list[dict[str, Any]] | None = None
    record: Any = None
    client_warnings: list[dict[str, str]] | None = None
    warnings: list[dict[str, Any]] | None = None
    """The server's per-record warnings (`{"message": ...}`: a record applied anyway, with something ignored)."""


_line_decoder = msgspec.json.Decoder(_Line)


def _at(document: Any, pointer: str) -> Any:
    """The value a JSON pointer names in the record's echo, or None."""
    current = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict):
            current = current.get(token)
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return None
    return current


def _national(value: Any) -> bool:
    """A phone number with something besides a leading `+` and digits: spaces, a trunk 0, dashes..."""
    return isinstance(value, str) and _E164_SHAPE.fullmatch(value) is None


def _other_login_id(cause: dict[str, Any], record: Any) -> str | None:
    """The first login id attribute a record refused for lacking the identifier holds instead, if any."""
    details = cause.get("details")
    missing = details.get("missing") if isinstance(details, dict) else None
    if not isinstance(missing, list) or not isinstance(record, dict):
        return None
    return next((a for a in _LOGIN_ID_ATTRIBUTES if a not in missing and isinstance(record.get(a), str)), None)


def _shortened(message: str) -> str:
    """A message cut for a terminal line (one listing 3 000 unknown role keys); the JSON summary has it whole."""
    if len(message) <= _MESSAGE_SHOWN:
        return message
    return f"{message[:_MESSAGE_SHOWN]}... ({len(message) - _MESSAGE_SHOWN:,} more characters in the JSON summary)"


@dataclass
class _Group:
    count: int
    example: dict[str, Any]


@dataclass
class _Warned:
    count: int
    indexes: list[int]
    lines: list[int | None]


@dataclass
class FailureSummary:
    """Failures by (reason, location, kind) and client warnings by kind, counted, each with its first example."""

    failures: dict[tuple[str, str, str], _Group] = field(default_factory=dict)
    warnings: dict[str, _Group] = field(default_factory=dict)
    server_warnings: dict[str, _Warned] = field(default_factory=dict)
    """The server's warnings by message (`password is ignored because the user already exists.`), with the first
    records' indexes and lines."""
    national_phones: int = 0
    """Records refused for a phone number written with more than `+` and digits (`--phone-region` may convert it)."""
    other_identifiers: dict[str, int] = field(default_factory=dict)
    """Records refused for lacking the run's identifier, by another login id they hold (`--identifier` it)."""

    def failed(self, index: int, line: int | None, errors: Any, record: Any) -> None:
        """Count one failed record under each of its causes."""
        seen: set[tuple[str, str, str]] = set()
        for error in errors if isinstance(errors, list) else [{}]:
            error = error if isinstance(error, dict) else {}
            reason = str(error.get("reason") or "Unknown")
            info = error.get("info")
            causes = info.get("causes") if isinstance(info, dict) else None
            for cause in causes if isinstance(causes, list) and causes else [None]:
                cause = cause if isinstance(cause, dict) else {}
                location = str(cause.get("location") or "")
                kind = str(cause.get("kind") or "")
                key = (reason, location, kind)
                if key in seen:
                    continue
                seen.add(key)
                if kind == "format" and location.endswith("/phone_number") and _national(_at(record, location)):
                    self.national_phones += 1
                if kind == "required" and not location and (other := _other_login_id(cause, record)):
                    self.other_identifiers[other] = self.other_identifiers.get(other, 0) + 1
                group = self.failures.get(key)
                if group is not None:
                    group.count += 1
                    continue
                example: dict[str, Any] = {"index": index, "line": line}
                example["message"] = str(cause.get("message") or error.get("message") or "")
                if cause.get("details"):
                    example["details"] = cause["details"]
                if location:
                    value = _at(record, location)
                    if value is not None:
                        example["value"] = value
                self.failures[key] = _Group(1, example)

    def warned(self, index: int, line: int | None, warnings: list[dict[str, str]]) -> None:
        """Count a record's client-side warnings (conversions, what a converter could not carry)."""
        for warning in warnings:
            kind = warning.get("kind", "warning")
            group = self.warnings.get(kind)
            if group is not None:
                group.count += 1
            else:
                self.warnings[kind] = _Group(1, {"index": index, "line": line, "message": warning.get("message", "")})

    def server_warned(self, index: int, line: int | None, warnings: list[dict[str, Any]]) -> None:
        """Count a record's server warnings by their text, keeping the first few records' positions."""
        for message in dict.fromkeys(str(w.get("message", "")) if isinstance(w, dict) else str(w) for w in warnings):
            group = self.server_warnings.get(message)
            if group is None:
                group = self.server_warnings[message] = _Warned(0, [], [])
            group.count += 1
            if len(group.indexes) < _INDEXES_KEPT:
                group.indexes.append(index)
                group.lines.append(line)

    @classmethod
    def from_report(cls, path: Path) -> FailureSummary:
        """The summary of every outcome in a report."""
        summary = cls()
        with path.open("rb") as file:
            for raw in file:
                summary.add(raw)
        return summary

    def add(self, raw: bytes) -> None:
        """Count one line of a report, as written (a new run counts its lines as it writes them)."""
        if not raw.startswith(b'{"index"') or (
            b'"outcome":"failed"' not in raw and b'"client_warnings"' not in raw and b'"warnings"' not in raw
        ):
            return
        try:
            item = _line_decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return
        if item.index is None:
            return
        if item.outcome == "failed":
            self.failed(item.index, item.line, item.errors, item.record)
        if item.client_warnings:
            self.warned(item.index, item.line, item.client_warnings)
        if item.warnings:
            self.server_warned(item.index, item.line, item.warnings)

    def as_json(self, *, records: int, counts: dict[str, int]) -> dict[str, Any]:
        """The summary file's content."""
        failures = sorted(self.failures.items(), key=lambda item: (-item[1].count, item[0]))
        warnings = sorted(self.warnings.items(), key=lambda item: (-item[1].count, item[0]))
        return {
            "records": records,
            "counts": counts,
            "failures": [
                {"reason": r, "location": loc, "kind": k, "count": g.count, "example": g.example}
                for (r, loc, k), g in failures
            ],
            "warnings": [{"kind": k, "count": g.count, "example": g.example} for k, g in warnings],
            "server_warnings": [
                {"message": m, "count": g.count, "indexes": g.indexes, "lines": g.lines}
                for m, g in sorted(self.server_warnings.items(), key=lambda item: (-item[1].count, item[0]))
            ],
        }

    def write(self, path: Path, *, records: int, counts: dict[str, int]) -> None:
        """Write the JSON file (a temporary file renamed into place: never a torn summary)."""
        temp = path.with_name(f".{path.name}.part")
        write_private(
            temp,
            msgspec.json.format(msgspec.json.encode(self.as_json(records=records, counts=counts))),
            exclusive=False,
        )
        os.replace(temp, path)

    def describe(self) -> list[str]:
        """Lines for stderr: the largest groups first."""
        lines: list[str] = []
        if self.failures:
            lines.append("failures by reason and location (count, then the first example):")
            ordered = sorted(self.failures.items(), key=lambda item: (-item[1].count, item[0]))
            for (reason, location, kind), group in ordered[:_SHOWN]:
                where = f" {location}" if location else ""
                what = f" ({kind})" if kind else ""
                example = group.example
                value = f" {msgspec.json.encode(example['value']).decode()}:" if "value" in example else ""
                lines.append(
                    f"  {group.count:>7,}  {reason}{where}{what}; "
                    f"e.g. line {example['line']}:{value} {_shortened(example['message'])}"
                )
            if len(ordered) > _SHOWN:
                lines.append(f"  ... and {len(ordered) - _SHOWN} more groups (in the JSON summary)")
        if self.warnings:
            lines.append("warnings (count, then the first example):")
            for kind, group in sorted(self.warnings.items(), key=lambda item: (-item[1].count, item[0])):
                lines.append(
                    f"  {group.count:>7,}  {kind}; e.g. line {group.example['line']}: "
                    f"{_shortened(group.example['message'])}"
                )
        if self.server_warnings:
            lines.append("server warnings (records applied anyway; count, then the first records):")
            ordered_warnings = sorted(self.server_warnings.items(), key=lambda item: (-item[1].count, item[0]))
            for message, warned in ordered_warnings[:_SHOWN]:
                more = ", ..." if warned.count > len(warned.indexes) else ""
                at = ", ".join(
                    f"{i} (line {n})" if n is not None else str(i)
                    for i, n in zip(warned.indexes, warned.lines, strict=True)
                )
                lines.append(f"  {warned.count:>7,}  {_shortened(message)}; records {at}{more}")
            if len(ordered_warnings) > _SHOWN:
                lines.append(f"  ... and {len(ordered_warnings) - _SHOWN} more warnings (in the JSON summary)")
        return lines
