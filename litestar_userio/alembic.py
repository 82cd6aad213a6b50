"""Alembic beside the plugin: a host's autogenerate proposes nothing on the plugin's tables.

The plugin's tables and its migration bookkeeping live in their own PostgreSQL schema (`UserIOConfig.database_schema`,
default `userio`), migrated by `litestar userio migrate`, never by the host's Alembic. An Alembic environment that
compares only its default schema never sees them; one that sets `include_schemas=True` passes `include_object`:

    context.configure(connection=connection, target_metadata=metadata, include_schemas=True,
                      include_object=include_object)

or, with a schema of its own name, `include_object=userio_objects_excluded("auth_users")`. The helpers need no
Alembic or SQLAlchemy import here: they only read the arguments Alembic passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["DEFAULT_SCHEMA", "include_object", "userio_objects_excluded"]

DEFAULT_SCHEMA = "userio"
"""`UserIOConfig.database_schema`'s default."""

_TABLE_PREFIX = "userio_"
_PICCOLO_MIGRATION_COLUMNS = frozenset({"id", "name", "app_name", "ran_on"})
"""Piccolo's `migration` table, which an older deployment kept in `public`."""


def _schema_of(obj: Any, type_: str) -> str | None:
    """The schema of a table, or of the table an index, column or constraint belongs to."""
    table = obj if type_ == "table" else getattr(obj, "table", None)
    return getattr(table, "schema", None)


def userio_objects_excluded(schema: str = DEFAULT_SCHEMA) -> Callable[[Any, str | None, str, bool, Any], bool]:
    """An Alembic `include_object` hook that leaves out every object in the plugin's `schema`.

    Also left out, wherever they are, when the host's models do not declare them: reflected `userio_*` tables and
    Piccolo's `migration` table (a deployment not yet moved into its schema by `migrate`), so autogenerate never
    proposes to drop them.
    """

    def include(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
        if _schema_of(obj, type_) == schema:
            return False
        if not reflected or compare_to is not None:
            return True
        table = obj if type_ == "table" else getattr(obj, "table", None)
        table_name = str(getattr(table, "name", "") or "")
        if table_name.startswith(_TABLE_PREFIX):
            return False
        columns = {str(column.name) for column in getattr(table, "columns", ())}
        return not (table_name == "migration" and columns == _PICCOLO_MIGRATION_COLUMNS)

    return include


include_object = userio_objects_excluded()
"""The `include_object` hook for the default schema, `userio`."""
