"""Cutting a task into chunks that workers may run in any order with the result of an index-order run.

Two records interact only through a user: the one a login id names (existing, or created by an earlier
record), or the one holding a login id the record wants. So records are joined when they share a
normalized login id, or when their login ids already belong to the same existing user; each connected
group goes whole into one chunk, in index order (docs/reference.md#import-order-and-atomicity: "this holds however many
workers share the job").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from litestar_userio.users.login_id_rules import CASE_INSENSITIVE, LoginIDRules
from userio_core.attribute_formats import LOGIN_ID_ATTRIBUTES
from userio_core.login_ids import login_key

__all__ = ["OAUTH_KEY", "LoginKey", "login_keys", "oauth_keys", "plan_chunks", "record_login_keys"]

LoginKey = tuple[str, str]
"""(attribute, normalized value)."""


OAUTH_KEY = "oauth"
"""The attribute of a planning key that is a linked identity's `provider_alias` NUL `subject`
(docs/reference.md#import-linked-identities): records linking the same identity interact as records naming the same
login id do."""


class _Identity(msgspec.Struct):
    provider_alias: object = None
    subject: object = None


class _Identities(msgspec.Struct):
    identities: list[_Identity] | None = None


def oauth_keys(raw: bytes) -> list[LoginKey]:
    """The linked identities a raw record names, as planning keys (the record is not validated yet)."""
    try:
        identities = msgspec.json.decode(raw, type=_Identities).identities or []
    except msgspec.ValidationError:
        return []
    return [
        (OAUTH_KEY, f"{i.provider_alias}\0{i.subject}")
        for i in identities
        if isinstance(i.provider_alias, str) and isinstance(i.subject, str)
    ]


class _LoginIDs(msgspec.Struct):
    preferred_username: object = None
    email: object = None
    phone_number: object = None


def login_keys(raw: bytes, rules: LoginIDRules = CASE_INSENSITIVE) -> list[LoginKey]:
    """The login ids a raw record names, normalized leniently (the record is not validated yet)."""
    try:
        ids = msgspec.json.decode(raw, type=_LoginIDs)
    except msgspec.ValidationError:
        return []
    return record_login_keys(ids, rules)


def record_login_keys(record: object, rules: LoginIDRules = CASE_INSENSITIVE) -> list[LoginKey]:
    """`login_keys` of a record already decoded (its string login id attributes): no second decode of its bytes."""
    return [
        (attribute, rules.normalize(attribute, value))
        for attribute in LOGIN_ID_ATTRIBUTES
        if isinstance(value := getattr(record, attribute), str)
    ]


def plan_chunks(keys: Sequence[Sequence[LoginKey]], owners: Mapping[LoginKey, str], chunk_size: int) -> list[list[int]]:
    """Record indices grouped into chunks of about `chunk_size`; interacting records share a chunk."""
    parent = list(range(len(keys)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[object, int] = {}
    for index, record_keys in enumerate(keys):
        for key in record_keys:
            # A username spelled like another record's email names the same login key: the same chunk.
            unique = ("unique", login_key(key[1])) if key[0] != OAUTH_KEY else None
            for token in (key, ("user", owners[key]) if key in owners else None, unique):
                if token is None:
                    continue
                other = first_with.setdefault(token, index)
                if other != index:
                    a, b = find(other), find(index)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for index in range(len(keys)):
        groups.setdefault(find(index), []).append(index)

    chunks: list[list[int]] = []
    current: list[int] = []
    for group in groups.values():
        if current and len(current) + len(group) > chunk_size:
            chunks.append(sorted(current))
            current = []
        current.extend(group)
    if current:
        chunks.append(sorted(current))
    return chunks
