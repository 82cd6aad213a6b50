"""A search over a project's users as data: conditions the users repository compiles to one parameterized query.

A SCIM filter (`scim/filters.py`) becomes these; nothing of a filter's text ever reaches SQL: a field is one of
`FIELDS` (each a fixed column or JSON member), a value is always a bound parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = ["FIELDS", "AllOf", "AnyOf", "Compare", "Condition", "Constant", "Negation", "Operator", "UserSort"]

Operator = Literal["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le", "pr"]

FIELDS = frozenset(
    {
        "id",
        "username",
        "email",
        "phone_number",
        "external_id",
        "created_at",
        "updated_at",
        "disabled",
        "given_name",
        "family_name",
        "middle_name",
        "name",
        "nickname",
        "locale",
        "zoneinfo",
        "group_id",
    }
)
"""What a condition may compare: login ids (their normalized values), columns, standard attributes, a group's id."""


@dataclass(frozen=True, slots=True)
class Compare:
    """`field op value`; `pr` has no value. Strings compare case-insensitively unless `case_exact`."""

    field: str
    op: Operator
    value: str | bool | datetime | None = None
    case_exact: bool = False


@dataclass(frozen=True, slots=True)
class AllOf:
    """Every part holds."""

    parts: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """Some part holds."""

    parts: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Negation:
    """The part does not hold."""

    part: Condition


@dataclass(frozen=True, slots=True)
class Constant:
    """Always or never (a comparison the data answers without a query, as `emails.type eq "work"`)."""

    value: bool


Condition = Compare | AllOf | AnyOf | Negation | Constant


@dataclass(frozen=True, slots=True)
class UserSort:
    """Order of a search's results: a field of `FIELDS` (not `group_id`), ascending unless `descending`; ties by id."""

    field: str = "id"
    descending: bool = False
