"""The `userio` client is its own package (`userio_client`): its distribution declares what it imports, and it and the
server never import each other; what both need comes from `userio_core`."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from importlib.metadata import requires, version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "userio_client"
CORE = ROOT / "userio_core"
DISTRIBUTIONS = {
    "jwt": "pyjwt",
    "email_validator": "email-validator",
    "yaml": "pyyaml",
    "userio_core": "litestar-userio-core",
}


def _loaded_after(code: str, home: Path) -> list[str]:
    """The package's modules loaded after `code`, run in a fresh interpreter (the example app's state in `home`)."""
    script = (
        code
        + "\nimport sys\nprint('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] in ('litestar_userio', 'userio_client'))))"
    )
    env = {**os.environ, "USERIO_HOME": str(home)}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout.split()


def test_the_server_the_worker_and_the_plugin_never_import_the_client(tmp_path: Path):
    loaded = _loaded_after(
        "from example_app.app import app\n"
        "import litestar_userio.plugin, litestar_userio.cli, litestar_userio.worker\n"
        "app.openapi_schema\n",
        tmp_path,
    )

    assert "litestar_userio.plugin" in loaded
    assert not [m for m in loaded if m.startswith("userio_client")]


def test_the_server_cli_and_the_client_do_not_import_each_other(tmp_path: Path):
    server_cli = _loaded_after("import litestar_userio.cli", tmp_path)
    client = _loaded_after("import userio_client.main", tmp_path)

    assert "litestar_userio.cli" in server_cli
    assert not [m for m in server_cli if m.startswith("userio_client")]
    assert "userio_client.main" in client
    assert not [m for m in client if m.startswith("litestar_userio")]  # so Litestar never loads at its start-up


def _third_party_imports(package: Path) -> set[str]:
    """The top-level names of what the package's modules import (lazy imports too), the standard library left out."""
    imported: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            imported.update(name.split(".")[0] for name in names)
    return {name for name in imported if name not in sys.stdlib_module_names and name != package.name}


def _declared(distribution: str) -> set[str]:
    return {Requirement(text).name.lower() for text in requires(distribution) or []}


def test_the_client_distribution_declares_every_third_party_module_the_client_imports():
    third_party = _third_party_imports(CLIENT)

    assert "certifi" in third_party
    assert "litestar_userio" not in third_party
    assert {DISTRIBUTIONS.get(name, name) for name in third_party} <= _declared("litestar-userio-client")


def test_the_core_distribution_declares_what_it_imports_and_imports_neither_side():
    third_party = _third_party_imports(CORE)

    assert "jwt" in third_party
    assert not {"litestar_userio", "userio_client", "litestar", "piccolo"} & third_party
    assert {DISTRIBUTIONS.get(name, name) for name in third_party} <= _declared("litestar-userio-core")


def test_userio_is_a_console_script():
    result = subprocess.run(
        [str(Path(sys.executable).parent / "userio"), "--help"], capture_output=True, text=True, check=True
    )

    assert {"import", "export", "hooks"} <= {line.split()[0] for line in result.stdout.splitlines() if line[:2] == "  "}


def test_userio_version_names_the_installed_distribution():
    from click.testing import CliRunner

    from userio_client.main import main

    result = CliRunner().invoke(main, ["--version"])

    assert (result.exit_code, result.output) == (0, f"userio, version {version('litestar-userio-client')}\n")
