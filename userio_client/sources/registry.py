"""The `--from` choices: each source module's `Source`, their titles, and a guess from a file's first bytes."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from userio_client.sources import auth0, clerk, cognito, django, firebase, keycloak, kratos, supabase, userio
from userio_client.sources.clerk import CLERK_HEADER
from userio_client.sources.cognito import COGNITO_HEADER
from userio_client.sources.conversion import Source
from userio_client.sources.firebase import FIREBASE_CSV_HEADER
from userio_client.sources.supabase import SUPABASE_HEADER

__all__ = ["SOURCES", "SOURCE_TITLES", "guess_source", "source_with"]


SOURCES: Final[dict[str, Source]] = {
    source.name: source
    for source in (
        auth0.SOURCE,
        cognito.SOURCE,
        supabase.SOURCE,
        clerk.SOURCE,
        userio.SOURCE,
        firebase.SOURCE,
        keycloak.SOURCE,
        django.SOURCE,
        kratos.SOURCE,
    )
}
"""The `--from` choices."""


def source_with(name: str, *, firebase_hash_config: Mapping[str, Any] | None = None, new_ids: bool = False) -> Source:
    """The `--from` source `name` as a run uses it.

    The run's Firebase hash config goes into every password it converts; with `new_ids` (`--new-ids`) the old ids
    are not kept as `sub`.
    """
    source = SOURCES[name]
    if new_ids:
        source = replace(source, keep_ids=False)
    if firebase_hash_config is None or source.name != "firebase":
        return source
    convert, convert_csv = source.convert, source.convert_csv
    assert convert_csv is not None
    return replace(
        source,
        convert=lambda user, **kw: convert(user, hash_config=firebase_hash_config, **kw),
        convert_csv=lambda row, **kw: convert_csv(row, hash_config=firebase_hash_config, **kw),
    )


SOURCE_TITLES: Final = {
    "auth0": "an Auth0 user export",
    "cognito-csv": "a Cognito user CSV",
    "supabase": "a Supabase auth.users CSV",
    "clerk": "a Clerk user export",
    "userio": "our own ndjson export",
    "firebase": "a Firebase auth:export file",
    "keycloak": "a Keycloak realm export",
    "django": "a Django dumpdata auth.user file",
    "kratos": "an Ory Kratos identities export",
}

_JSON_MARKS: Final = (
    ("django", (b'"model": "auth.user"', b'"model":"auth.user"')),
    ("firebase", (b'"localId"',)),
    ("kratos", (b'"schema_id"',)),
    ("keycloak", (b'"createdTimestamp"', b'"federatedIdentities"', b'"realmRoles"', b'"realm"')),
    ("userio", (b'"biometric_count"', b'"passkey_count"')),
    ("auth0", (b'"auth0|', b'"logins_count"', b'"user_metadata"', b'"app_metadata"')),
)
_CSV_HEADERS: Final = (
    ("cognito-csv", COGNITO_HEADER[:3]),
    ("supabase", SUPABASE_HEADER[:3]),
    ("clerk", CLERK_HEADER[:3]),
)


def guess_source(head: bytes) -> str | None:
    """The `--from` source whose export a file starting with `head` looks like, if any (a hint, not a decision)."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text:
        return None
    if text[:1] in (b"{", b"["):
        return next((name for name, marks in _JSON_MARKS if any(mark in head for mark in marks)), None)
    first = text.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
    cells = tuple(next(csv.reader([first]), []))
    for name, header in _CSV_HEADERS:
        if cells[: len(header)] == header:
            return name
    return "firebase" if len(cells) == len(FIREBASE_CSV_HEADER) else None
