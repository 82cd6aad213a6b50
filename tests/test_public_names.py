"""The public namespace (docs/reference.md#python-api): every name documented there imports from `litestar_userio`,
the list is `litestar_userio.__all__`, and the types a host's sign-in hands from one call to the next are in it.

Pure and fast: reads files and imports the package, no database.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

import litestar_userio

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")
PACKAGE_IMPORT = re.compile(r"^from litestar_userio import \(?([^)\n]*(?:\n[^)\n]*)*?)\)?$", re.MULTILINE)


def documented_names() -> list[str]:
    """The names in the Names column of docs/reference.md's "Python API" table."""
    text = (ROOT / "docs" / "reference.md").read_text()
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| What ")]
    return [name for row in rows for name in NAME.findall(row.rstrip(" |").rsplit(" | ", 1)[1])]


def imported_in_docs() -> set[str]:
    """Every name a page (README, docs/) or an example host app imports from the package."""
    names: set[str] = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for match in PACKAGE_IMPORT.finditer(page.read_text()):
            names.update(n.split(" as ")[0].strip() for n in match.group(1).replace("\n", ",").split(","))
    for example in sorted([*(ROOT / "example_app").rglob("*.py"), *(ROOT / "example_fullstack").rglob("*.py")]):
        for node in ast.walk(ast.parse(example.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "litestar_userio":
                names.update(alias.name for alias in node.names)
    return names - {""}


def test_the_table_is_read():
    names = documented_names()

    assert {"UserIOPlugin", "UserService", "SignedIn", "SignInRefused"} <= set(names)
    assert "UserIOConfig.dependency_keys" not in names and "litestar_userio" not in names


@pytest.mark.parametrize("name", documented_names())
def test_every_documented_name_imports_from_the_package(name):
    namespace: dict[str, Any] = {}

    exec(f"from litestar_userio import {name}", namespace)  # the statement a host writes

    assert namespace[name] is getattr(importlib.import_module("litestar_userio"), name)


def test_the_documented_names_are_the_public_namespace():
    names = documented_names()

    assert len(names) == len(set(names)), "a name listed twice"
    assert sorted(names) == sorted(litestar_userio.__all__)


def test_every_name_the_docs_import_from_the_package_is_public():
    imported = imported_in_docs()

    assert {"UserIOPlugin", "ProjectService", "TokenService", "EventContext", "RefreshGrant"} <= imported
    assert sorted(imported - set(litestar_userio.__all__)) == []


def _our_types(annotation: Any) -> set[type]:
    found = (
        {annotation} if inspect.isclass(annotation) and annotation.__module__.startswith("litestar_userio") else set()
    )
    for argument in typing.get_args(annotation):
        found |= _our_types(argument)
    return found


@pytest.mark.parametrize(
    ("service", "method"),
    [
        ("UserService", "password_grant"),
        ("UserService", "refresh_grant_user"),
        ("UserService", "sign_in"),
        ("TokenService", "token_response"),
        ("RefreshTokenService", "check"),
        ("UserAdminService", "list_users"),
    ],
)
def test_the_types_a_host_passes_between_calls_are_public(service, method):
    """README's token endpoint: `password_grant` answers a `SignedIn` whose user and client `token_response` takes."""
    function = getattr(getattr(litestar_userio, service), method)
    hints = typing.get_type_hints(function, vars(sys.modules[function.__module__]))

    ours = set().union(*(_our_types(hint) for hint in hints.values()))

    assert sorted(t.__name__ for t in ours if t.__name__ not in litestar_userio.__all__) == []
