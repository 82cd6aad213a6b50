"""`--from`: another system's user export as import records, one module per source system.

Each module (`auth0`, `cognito`, `supabase`, `clerk`, `userio`, `firebase`, `keycloak`, `django`, `kratos`) holds
its converter and its `SOURCE`, a `conversion.Source` (the one interface: how its file is read, how one record
becomes ours, where the old id goes); `registry.py` lists them (`SOURCES`, the `--from` choices) and guesses one
from a file's first bytes. The choices every converter makes are in `conversion.py`'s docstring.
"""

from __future__ import annotations

from userio_client.sources.auth0 import auth0_record
from userio_client.sources.clerk import CLERK_HEADER, clerk_record
from userio_client.sources.cognito import COGNITO_HEADER, cognito_record
from userio_client.sources.conversion import ConversionError, Source, SourceName, Warnings, hash_type, keep_old_id
from userio_client.sources.django import django_record
from userio_client.sources.firebase import (
    FIREBASE_CSV_HEADER,
    firebase_csv_record,
    firebase_hash_config,
    firebase_record,
)
from userio_client.sources.keycloak import keycloak_record
from userio_client.sources.kratos import kratos_record
from userio_client.sources.registry import SOURCE_TITLES, SOURCES, guess_source, source_with
from userio_client.sources.supabase import SUPABASE_HEADER, supabase_record
from userio_client.sources.userio import userio_record

__all__ = [
    "CLERK_HEADER",
    "COGNITO_HEADER",
    "FIREBASE_CSV_HEADER",
    "SOURCES",
    "SOURCE_TITLES",
    "SUPABASE_HEADER",
    "ConversionError",
    "Source",
    "SourceName",
    "Warnings",
    "auth0_record",
    "clerk_record",
    "cognito_record",
    "django_record",
    "firebase_csv_record",
    "firebase_hash_config",
    "firebase_record",
    "guess_source",
    "hash_type",
    "keep_old_id",
    "keycloak_record",
    "kratos_record",
    "source_with",
    "supabase_record",
    "userio_record",
]
