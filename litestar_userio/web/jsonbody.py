"""Duplicate keys in request bodies (docs/reference.md#input-hygiene): two parsers must never read one body two ways.

msgspec, like most JSON decoders, keeps the last of two equal keys; another reader of the same body (a proxy,
an audit log, the client's own tooling) may keep the first. Every admin body is therefore checked once, right
after it is decoded, and a duplicate is refused with the key and its JSON pointer.

The check costs a msgspec decode and encode of the body (measured on a 500 KB import body: see
`find_duplicate_key`); Python's `json` module, which is slower but sees every pair, only runs when the
fast check finds a duplicate or cannot decide.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import msgspec

__all__ = ["DuplicateKey", "find_duplicate_key"]

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


class DuplicateKey(NamedTuple):
    """A key given twice in one object."""

    key: str
    location: str
    """RFC 6901 pointer of the repeated member (`/records/0/email`)."""


class _Repeated:
    """Stands in for an object that holds `key` twice."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key


def find_duplicate_key(body: bytes) -> DuplicateKey | None:
    r"""The first duplicate key of a JSON body (in document order), or None.

    Fast path: outside strings a colon appears once per key, so a body without duplicates has as many colons
    as msgspec's re-encoding of what it decoded (which keeps one member per key), and a body with one has
    more. A colon escaped inside a string (`\u003a`) would blur the count: such bodies, and bodies msgspec
    cannot decode as plain values (a number beyond float range in a record), take the slow path.
    Measured on a 495 KB import body of 1 117 records, in one run (best / median of 60, a loaded 2-core machine):
    this check 3.3 / 16 ms, the request's own parse without it (`parse_import_request`) 11.0 / 30 ms; the slow
    path 28-50 ms.
    """
    if b"\\u003" not in body:
        try:
            decoded = _decoder.decode(body)
        except (msgspec.DecodeError, RecursionError):
            pass
        else:
            if body.count(b":") == _encoder.encode(decoded).count(b":"):
                return None
    return _locate(body)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any] | _Repeated:
    members: dict[str, Any] = {}
    for key, value in pairs:
        if key in members:
            return _Repeated(key)
        members[key] = value
    return members


def _locate(body: bytes) -> DuplicateKey | None:
    try:
        document = json.loads(body, object_pairs_hook=_object)
    except (ValueError, RecursionError):
        return None  # not JSON: the caller's decoder reports that
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        pointer, value = stack.pop()
        if isinstance(value, _Repeated):
            return DuplicateKey(value.key, f"{pointer}/{_escape(value.key)}")
        if isinstance(value, dict):
            children = [(f"{pointer}/{_escape(k)}", v) for k, v in value.items()]
        elif isinstance(value, list):
            children = [(f"{pointer}/{i}", v) for i, v in enumerate(value)]
        else:
            continue
        stack.extend(reversed(children))
    return None


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")
