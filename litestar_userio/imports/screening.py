"""Values that a layer below would refuse, found before they reach it (docs/reference.md#input-hygiene).

A record may hold what msgspec cannot decode into Python (a number out of the float range, an integer of more
than 4300 digits) or what PostgreSQL cannot store (U+0000 in text and JSONB). Such a record fails alone, with a
`ValidationFailed` cause at each such value, instead of crashing its chunk job on every run. `safe_decode` gives
the echo of any record without raising, so no error path decodes the way that failed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from litestar_userio.errors import Cause
from userio_core.attribute_formats import NUL_MESSAGE, storable_text

__all__ = ["may_hold_nul", "safe_decode", "screen_record", "storable_text"]

_NUL = re.compile(rb"\\u0000")
_MAX_CAUSES = 20
_MAX_INT_DIGITS = 4300
"""Python's limit on converting decimal text to int (`sys.get_int_max_str_digits`)."""


class _OutOfRange(str):
    """A number literal no decoder here can hold, kept as its text (so an echo shows what was sent)."""

    __slots__ = ()


def _float(text: str) -> float | _OutOfRange:
    value = float(text)
    return _OutOfRange(text) if value in (float("inf"), float("-inf")) else value


def _int(text: str) -> int | _OutOfRange:
    return _OutOfRange(text) if len(text.lstrip("-")) > _MAX_INT_DIGITS else int(text)


_DECODER = msgspec.json.Decoder(float_hook=_float)


def safe_decode(raw: bytes) -> Any:
    """The record as Python values (the echo of a refused record); a number out of range becomes its literal text.

    Never raises: it is what error paths use, so none of them decodes the way that failed.
    """
    return _plain(_decode_marked(raw))


def _plain(value: Any) -> Any:
    if isinstance(value, _OutOfRange):
        return str.__str__(value)
    if isinstance(value, dict):
        return {key: _plain(member) for key, member in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _decode_marked(raw: bytes) -> Any:
    try:
        return _DECODER.decode(raw)
    except msgspec.ValidationError:  # an integer longer than Python converts: the standard library takes a hook
        try:
            return json.loads(bytes(raw), parse_int=_int, parse_float=_float)
        except Exception:
            return bytes(raw).decode("utf-8", "replace")
    except Exception:
        return bytes(raw).decode("utf-8", "replace")


def _token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _walk(value: Any, location: str, causes: list[Cause]) -> None:
    if len(causes) >= _MAX_CAUSES:
        return
    if isinstance(value, _OutOfRange):
        causes.append(Cause(location, "general", {"message": "Number out of range"}))
    elif isinstance(value, str):
        if not storable_text(value):
            causes.append(Cause(location, "general", {"message": NUL_MESSAGE}))
    elif isinstance(value, dict):
        for key, member in value.items():
            where = f"{location}/{_token(key)}"
            if not storable_text(key):
                causes.append(Cause(where, "general", {"message": "U+0000 (NUL) is not allowed in a member name"}))
            _walk(member, where, causes)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, f"{location}/{index}", causes)


def may_hold_nul(raw: bytes) -> bool:
    """Whether the record's text may hold U+0000, which msgspec decodes and PostgreSQL refuses.

    The one screen a record needs when msgspec decodes it: a number it cannot hold makes it refuse the record.
    """
    return _NUL.search(raw) is not None


def screen_record(raw: bytes) -> list[Cause]:
    """Where a record holds values no layer below can hold, each named; empty when it holds none.

    Decodes and walks the whole record: the import asks only of a record msgspec refused or one that may hold
    U+0000 (`may_hold_nul`), so no look at the bytes comes first.
    """
    causes: list[Cause] = []
    _walk(_decode_marked(raw), "", causes)
    return causes
