"""A completed import task's details: one per record, in record order, each member's JSON as the server sent it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import msgspec

from userio_client.client import TransferError
from userio_client.report import OUTCOMES

if TYPE_CHECKING:
    from userio_client.batches import Batch

__all__ = ["Detail", "decode_details", "in_order", "outcome_of"]

_encoder = msgspec.json.Encoder()

Detail = dict[str, msgspec.Raw]
"""A task's detail about one record: each member's JSON exactly as the server sent it."""
_details_decoder = msgspec.json.Decoder(list[Detail])
_OUTCOMES_JSON: Final = {_encoder.encode(name): name for name in OUTCOMES}


def decode_details(task_id: str, details: msgspec.Raw) -> list[Detail]:
    """The details of a completed task; their members stay undecoded (they go into the report as they are)."""
    raw = bytes(details)
    if b"\n" in raw or b"\r" in raw:
        raw = msgspec.json.format(raw, indent=-1)  # one report line per record, whatever the server's layout
    try:
        return _details_decoder.decode(raw)
    except msgspec.DecodeError as exc:
        raise TransferError(f"task {task_id} completed without details") from exc


def in_order(batch: Batch, details: list[Detail]) -> list[Detail]:
    """The details by record position; a `TransferError` unless there is exactly one per record."""
    count = len(batch.records)
    wrong = TransferError(f"task {batch.task_id} reported {len(details)} details for {count} records")
    if len(details) != count:
        raise wrong
    ordered: list[Detail | None] = [None] * count
    for detail in details:
        try:
            position = int(bytes(detail["index"]))
        except (KeyError, ValueError):
            raise wrong from None
        if not 0 <= position < count or ordered[position] is not None:
            raise wrong
        ordered[position] = detail
    return ordered  # type: ignore[return-value]  # one detail per position: none is left None


def outcome_of(batch: Batch, detail: Detail) -> str:
    """The record's outcome, one of `report.OUTCOMES`; a `TransferError` for any other."""
    raw = detail.get("outcome")
    outcome = _OUTCOMES_JSON.get(bytes(raw)) if raw is not None else None
    if outcome is None:
        value = msgspec.json.decode(raw) if raw is not None else None
        if value not in OUTCOMES:
            raise TransferError(f"task {batch.task_id} reported an unknown outcome {value!r}")
        outcome = value
    return outcome
