"""The package reads like its architecture: no import cycles, and the layers point one way (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "litestar_userio"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _runtime_imports(name: str, *, type_only_too: bool = False) -> set[str]:
    """Every module `name` imports at run time, anywhere in it (lazy imports in functions too; type-only left out
    unless `type_only_too`).

    `from a import b` counts as `a.b` where that is a module of the package, else as `a`.
    """
    tree = ast.parse(MODULES[name].read_text())
    type_only = (
        set()
        if type_only_too
        else {
            id(node)
            for branch in ast.walk(tree)
            if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
            for node in ast.walk(branch)
        }
    )
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.update(
                f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES else node.module
                for alias in node.names
            )
    return found


def _imports(name: str) -> set[str]:
    """Modules of the package that `name` imports at run time."""
    return {module for module in _runtime_imports(name) if module in MODULES and module != name}


GRAPH = {name: _imports(name) for name in MODULES}


def _reachable(start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(GRAPH[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(GRAPH[module])
    return seen


def test_the_graph_is_read_from_the_sources():
    assert "litestar_userio.services" in GRAPH["litestar_userio.plugin"]
    assert "litestar_userio.queue.arq" in GRAPH["litestar_userio.worker"]


def test_no_module_imports_itself_through_others():
    cycles = sorted(name for name in MODULES if name in _reachable(name))

    assert cycles == []


@pytest.mark.parametrize("layer", ["litestar_userio.queue", "litestar_userio.db", "litestar_userio.storage"])
def test_lower_layers_know_nothing_of_the_domain(layer):
    domain = ("imports", "exports", "users", "projects", "hooks", "tokens", "console", "auth")
    above = {"services", "plugin", "worker", "jobs", "web", "cli"}
    modules = [name for name in MODULES if name == layer or name.startswith(layer + ".")]

    upward = {
        (name, target)
        for name in modules
        for target in GRAPH[name]
        if target.split(".")[1] in domain or target.split(".")[1] in above
    }

    assert modules
    assert upward == set()


def test_services_hold_no_sql():
    services = [name for name in MODULES if name.endswith("_service")]
    statements = ("SELECT ", "INSERT INTO", "UPDATE ", "DELETE FROM")

    with_sql = [name for name in services if any(s in MODULES[name].read_text() for s in statements)]

    assert len(services) >= 6
    assert with_sql == []


def test_hand_written_sql_lives_only_on_the_measured_paths():
    """Ordinary queries are built with Piccolo's query builder (`Tx.run`); hand-written SQL sent through
    `Tx.fetch`/`execute` is left where a measurement kept it (docs/architecture.md): the users' bulk load and
    write-back, the refresh-token statements, the project lookups of every request, the database layer itself, and the
    change log (its append rides the writers' COPY; its feed is bounded by the snapshot's xmin, which the builder does
    not express: docs/changes.md)."""
    sends_sql = ("tx.fetch(", "tx.fetchrow(", "tx.execute(", "tx.executemany(")
    measured = {
        "litestar_userio.db.engine",
        "litestar_userio.db.migrate",
        "litestar_userio.users.user_repository",
        "litestar_userio.tokens.token_repository",
        "litestar_userio.projects.project_repository",
        "litestar_userio.webhooks.webhook_repository",  # the delivery job's claim and outcomes (bench/webhooks.py)
        "litestar_userio.changes.change_repository",
    }

    with_sql = {name for name, path in MODULES.items() if any(call in path.read_text() for call in sends_sql)}
    with_builder = {name for name, path in MODULES.items() if "tx.run(" in path.read_text()}

    assert with_sql - measured == set()
    assert "litestar_userio.users.user_repository" in with_sql  # the check sees what it looks for
    assert {"litestar_userio.projects.project_repository", "litestar_userio.imports.import_repository"} <= with_builder


def _folder(module: str) -> str:
    """The top-level module or folder of `module` (`litestar_userio.web.hooks` -> `web`)."""
    return module.split(".")[1] if "." in module else ""


def _folder_graph() -> dict[str, set[str]]:
    """Every import counts here, type-only ones too: a loop of annotations is still a loop to a reader."""
    graph: dict[str, set[str]] = {}
    for name in MODULES:
        source = _folder(name)
        targets = {module for module in _runtime_imports(name, type_only_too=True) if module in MODULES}
        graph.setdefault(source, set()).update(_folder(t) for t in targets if _folder(t) not in ("", source))
    return graph


def _folders_reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        folder = todo.pop()
        if folder not in seen:
            seen.add(folder)
            todo.extend(graph.get(folder, ()))
    return seen


def test_the_web_layer_sits_on_the_services_and_nothing_below_imports_it():
    """web -> services -> repositories: only the plugin (the wiring) imports the web layer."""
    importers = {_folder(name) for name, targets in GRAPH.items() for t in targets if _folder(t) == "web"}

    assert "litestar_userio.web.router" in GRAPH["litestar_userio.plugin"]
    assert importers - {"web"} == {"plugin"}


def test_the_web_layer_does_not_import_the_composition_root():
    """Providers read the started services from `app.state` (`web.providers.Services` is a protocol)."""
    web = [name for name in MODULES if _folder(name) == "web"]

    assert "litestar_userio.web.providers" in web
    assert {name for name in web if "litestar_userio.services" in _reachable(name)} == set()


def test_no_folder_is_in_an_import_loop():
    """Each top-level module or folder is a node, every import (lazy and type-only ones included) an arrow: no
    loop, so a folder can be read, and tested, with only what it imports. The domain folders used to import each
    other in one loop through `users/`, which held both the user aggregate and the operations built on all of them
    (now `accounts/`)."""
    graph = _folder_graph()

    in_loops = {folder for folder in graph if folder in _folders_reachable(graph, folder)}

    assert "services" in graph["plugin"]  # the check sees what it looks for
    assert {"users", "imports", "projects"} <= graph["accounts"]
    assert in_loops == set()


def _third_party(name: str) -> set[str]:
    """Top-level packages outside ours that `name` imports at run time (type-only imports left out)."""
    return {module.split(".")[0] for module in _runtime_imports(name)}


def test_the_error_hierarchy_knows_nothing_of_http():
    """`errors.py` is the errors every layer raises; their HTTP statuses and handlers live in `web/error_responses.py`."""
    hierarchy = {"litestar_userio.errors"} | _reachable("litestar_userio.errors")
    with_litestar = sorted(name for name in hierarchy if "litestar" in _third_party(name))

    assert "msgspec" in _third_party("litestar_userio.errors")  # the check sees what it looks for
    assert "litestar" in _third_party("litestar_userio.web.error_responses")
    assert with_litestar == []


def _base_names(node: ast.ClassDef) -> set[str]:
    return {base.attr if isinstance(base, ast.Attribute) else ast.unparse(base).split("[")[0] for base in node.bases}


def test_the_controllers_are_module_level_classes():
    """A controller is one class per module, mounted by `web/router.py` with what depends on the config (issue 31);
    one built inside a function per config would close over it again."""
    trees = {
        name: ast.parse(path.read_text()) for name, path in MODULES.items() if name.startswith("litestar_userio.web")
    }
    classes = [node for tree in trees.values() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    controllers = {"Controller"}
    while grown := {c.name for c in classes if _base_names(c) & controllers} - controllers:
        controllers |= grown
    nested = sorted(
        f"{name}.{function.name}.{node.name}"
        for name, tree in trees.items()
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.ClassDef) and _base_names(node) & controllers
    )

    assert {"ImportController", "HooksController", "DownloadController"} <= controllers  # the check sees them
    assert nested == []


def _private_litestar_imports(name: str) -> set[str]:
    return {
        module
        for module in _runtime_imports(name, type_only_too=True)
        if module.split(".")[0] == "litestar" and any(part.startswith("_") for part in module.split(".")[1:])
    }


def _dto_subclasses(source: str) -> set[str]:
    return {
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef) and any("AbstractDTO" in ast.unparse(base) for base in node.bases)
    }


def test_the_checks_below_see_what_they_look_for():
    assert _dto_subclasses("class BodyDTO(AbstractDTO[T]):\n    pass\nclass Other(dto.AbstractDTO): ...") == {
        "BodyDTO",
        "Other",
    }


def test_no_module_subclasses_a_litestar_dto_or_imports_a_private_litestar_module():
    """Litestar's DTO internals and `litestar._*` change between versions; the strict bodies use public hooks
    (`web/bodies.py`: a `request_class` and an OpenAPI schema plugin)."""
    private = {name: found for name in MODULES if (found := _private_litestar_imports(name))}
    dtos = {name: found for name, path in MODULES.items() if (found := _dto_subclasses(path.read_text()))}

    assert private == {}
    assert dtos == {}


_SERVICE_FIELDS = {
    "users",
    "imports",
    "exports",
    "hooks",
    "tokens",
    "user_admin",
    "changes",
    "scim",
    "projects",
    "admin",
    "webhooks",
}
"""The `Services` attributes: a service is built whole in `services.py`, never given a field afterwards."""

_HANDING_METHODS = ("register", "attach", "subscribe")
"""Methods that hand a built service a collaborator (`changes.register(consumer)`): a field set by a call (a domain
operation such as `user_admin.set_password` is not one)."""


def _owner_name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _fields_set_on_services(tree: ast.AST) -> list[str]:
    """`x.users.migrator = ...`, `users.migrator = ...`, `changes.register(c)`: a service given a field from outside."""
    found = []
    for node in ast.walk(tree):
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in targets:
            if isinstance(target, ast.Attribute) and _owner_name(target.value) in _SERVICE_FIELDS:
                found.append(f"{_owner_name(target.value)}.{target.attr} (line {node.lineno})")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr.startswith(_HANDING_METHODS)
            and _owner_name(node.func.value) in _SERVICE_FIELDS
        ):
            found.append(f"{_owner_name(node.func.value)}.{node.func.attr}() (line {node.lineno})")
    return found


def test_the_check_for_fields_set_after_construction_sees_one():
    source = "users.migrator = m\nself.imports.emit: E = e\nchanges.register(WebhookConsumer(w, h))\nx.register(y)"
    assert _fields_set_on_services(ast.parse(source)) == [
        "users.migrator (line 1)",
        "imports.emit (line 2)",
        "changes.register() (line 3)",
    ]


def test_no_service_gets_a_field_after_it_is_built():
    """STYLE "Wired through constructors": collaborators come in through `__init__`, in the composition root."""
    offenders = {
        str(path.relative_to(PACKAGE)): found
        for path in PACKAGE.rglob("*.py")
        if (found := _fields_set_on_services(ast.parse(path.read_text())))
    }
    assert offenders == {}
