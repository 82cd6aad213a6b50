"""The wheels: the server's ships the migrations (a clean venv migrates an empty database from the installed package
alone); the client's (client/pyproject.toml) installs `userio` without any server dependency."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
WITHOUT_SOURCE_TREE = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
"""The venv's Python imports the installed wheel, not a checkout a developer's PYTHONPATH names."""

MIGRATE = """
import asyncio, sys
import litestar_userio
from litestar_userio.db.engine import Database
from litestar_userio.db.migrate import migrate
from litestar_userio.db.piccolo_app import migrations_folder

async def main(url):
    db = Database(url)
    await db.start()
    await migrate(db)
    async with db.reader() as tx:
        rows = await tx.fetch("SELECT COUNT(*) AS n FROM userio_user")
    await db.close()
    print(litestar_userio.__file__)
    print(migrations_folder())
    print(rows[0]["n"])

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("litestar_userio-*.whl")
    return wheel


def _pip(venv: Path, *args: str, **run: Any) -> subprocess.CompletedProcess[str]:
    """The suite's own pip acting on `venv`. A venv with a pip of its own took 7 s more to create, and that pip
    (the one Python bundles) took 25 s to install the server's wheel, where the suite's took 13."""
    command = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "--disable-pip-version-check"]
    return subprocess.run([*command, *args], check=True, capture_output=True, text=True, **run)


def _venv(wheel: Path, tmp_path_factory, extras: str = "") -> Path:
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _pip(venv, "install", "--quiet", "--no-compile", f"{wheel}{extras}", timeout=900)
    return venv


@pytest.fixture(scope="module")
def client_wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("client-dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), "client"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("litestar_userio_client-*.whl")
    return wheel


@pytest.fixture(scope="module")
def client_venv(client_wheel, tmp_path_factory) -> Path:
    """The client alone."""
    return _venv(client_wheel, tmp_path_factory)


@pytest.fixture(scope="module")
def clean_venv(wheel, tmp_path_factory) -> Path:
    """The base install: the embedded default only."""
    return _venv(wheel, tmp_path_factory)


@pytest.fixture(scope="module")
def postgres_venv(wheel, tmp_path_factory) -> Path:
    """The base install with the `postgres` extra."""
    return _venv(wheel, tmp_path_factory, "[postgres]")


SERVE_EMBEDDED = """
import sys
from pathlib import Path
from litestar import Litestar
from litestar.testing import TestClient
from litestar_userio import ExportConfig, LocalStorageConfig, UserIOConfig, UserIOPlugin

home = Path(sys.argv[1])
config = UserIOConfig(
    database_url=f"sqlite:///{home / 'userio.sqlite3'}",
    migrate_on_startup=True,
    exports=ExportConfig(storage=LocalStorageConfig(directory=home / "exports")),
)
with TestClient(Litestar(plugins=[UserIOPlugin(config)])) as client:
    print(client.get("/_api/admin/users/import", headers={"Host": "nowhere.test"}).status_code)
    print(client.get("/.well-known/jwks.json", headers={"Host": "nowhere.test"}).status_code)
print(",".join(m for m in ("asyncpg", "arq", "redis", "aiobotocore") if m in sys.modules) or "none loaded")
"""

MISSING_EXTRA = """
import sys
from litestar_userio import UserIOConfig, UserIOPlugin, QueueConfig
config = {"postgres": UserIOConfig(database_url="postgresql://localhost/x"),
          "redis": UserIOConfig(queue=QueueConfig(redis_url="redis://localhost"))}[sys.argv[1]]
try:
    UserIOPlugin(config)
except ImportError as missing:
    print(missing)
"""


def test_wheel_contains_the_migrations(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n for n in names if n.startswith("litestar_userio/_migrations/") and n.endswith(".py"))
    source = sorted(p.name for p in (ROOT / "migrations").glob("*.py"))

    assert [Path(n).name for n in shipped] == source


def test_wheel_ships_the_hook_workers_javascript(wheel):
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("litestar_userio/hooks/worker_setup.js").decode()

    assert shipped == (ROOT / "litestar_userio" / "hooks" / "worker_setup.js").read_text()


def test_wheel_ships_the_built_console_and_the_hook_types(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    static = ROOT / "litestar_userio" / "console" / "static"
    built = {
        f"litestar_userio/console/static/{p.relative_to(static).as_posix()}" for p in static.rglob("*") if p.is_file()
    }

    assert built and built <= names
    assert "litestar_userio/console/hooks.d.ts" in names
    assert "litestar_userio/py.typed" in names
    assert not any(n.startswith("console/") or "node_modules" in n for n in names)


@pytest.mark.slow
def test_the_base_install_serves_the_embedded_default_without_the_production_clients(clean_venv, tmp_path):
    result = subprocess.run(
        [str(clean_venv / "bin" / "python"), "-c", SERVE_EMBEDDED, str(tmp_path)],
        cwd=tmp_path,
        env=WITHOUT_SOURCE_TREE,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["403", "404", "none", "loaded"]
    assert not {"asyncpg", "arq", "redis", "aiobotocore", "botocore"} & set(_distributions(clean_venv))


@pytest.mark.slow
@pytest.mark.parametrize("extra", ["postgres", "redis"])
def test_a_backend_whose_extra_is_missing_is_named_in_one_line(clean_venv, tmp_path, extra):
    result = subprocess.run(
        [str(clean_venv / "bin" / "python"), "-c", MISSING_EXTRA, extra],
        cwd=tmp_path,
        env=WITHOUT_SOURCE_TREE,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines() == [
        f"{'a PostgreSQL database_url' if extra == 'postgres' else 'QueueConfig.redis_url'} needs the {extra!r} extra:"
        f" pip install 'litestar-userio[{extra}]'"
    ]


@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_clean_venv_migrates_an_empty_database_from_the_wheel(clean_venv, engine, tmp_path, request):
    url = f"sqlite:///{tmp_path / 'empty.sqlite3'}" if engine == "sqlite" else _fresh_postgres(request)
    venv = clean_venv if engine == "sqlite" else request.getfixturevalue("postgres_venv")

    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", MIGRATE, url],
        cwd=tmp_path,
        env=WITHOUT_SOURCE_TREE,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    package_file, folder, count = result.stdout.split()
    assert str(venv) in package_file
    assert folder.startswith(str(venv)) and folder.endswith("_migrations")
    assert count == "0"


def _fresh_postgres(request) -> str:
    import asyncio
    import uuid

    import asyncpg

    from tests.conftest import PG_SERVER

    request.getfixturevalue("postgres_url")  # skips or fails like every PostgreSQL test
    name = f"userio_wheel_{uuid.uuid4().hex[:8]}"

    async def create() -> None:
        conn = await asyncpg.connect(f"{PG_SERVER}/postgres")
        await conn.execute(f"CREATE DATABASE {name}")
        await conn.close()

    async def drop() -> None:
        conn = await asyncpg.connect(f"{PG_SERVER}/postgres")
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await conn.close()

    asyncio.run(create())
    request.addfinalizer(lambda: asyncio.run(drop()))
    return f"{PG_SERVER}/{name}"


SERVER_MODULES = ("litestar", "piccolo", "py_mini_racer", "arq", "aiobotocore", "botocore", "tree_sitter", "asyncpg")
"""The server's dependencies (V8 is `py_mini_racer`): none may be importable where only the client is installed."""

FIND_SERVER_MODULES = f"""
import importlib.util
print(",".join(m for m in {SERVER_MODULES!r} if importlib.util.find_spec(m)) or "none")
"""


def _package_modules_the_client_imports() -> set[str]:
    """Files of `litestar_userio` the client imports, transitively, lazy imports too (with their packages' inits)."""
    found: set[str] = set()
    todo = sorted((ROOT / "litestar_userio" / "transfer").glob("*.py"))
    while todo:
        path = todo.pop()
        found.add(path.relative_to(ROOT).as_posix())
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in (n for n in names if n.startswith("litestar_userio.")):
                parts = name.split(".")
                inits = [ROOT.joinpath(*parts[:i], "__init__.py") for i in range(2, len(parts) + 1)]
                module = ROOT.joinpath(*parts[:-1], parts[-1] + ".py")
                todo += [f for f in [*inits, module] if f.exists() and f.relative_to(ROOT).as_posix() not in found]
    return found


def _installed(venv: Path) -> tuple[float, list[str]]:
    """The venv's size in MB and its installed distributions, pip and setuptools left out."""
    size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())
    return size / 1e6, [n for n in _distributions(venv) if n not in {"pip", "setuptools"}]


def _distributions(venv: Path) -> list[str]:
    """The names of the distributions installed in `venv`, lower case."""
    listed = _pip(venv, "list", "--format=freeze").stdout
    return [line.partition("==")[0].lower() for line in listed.splitlines()]


def test_the_client_wheel_holds_the_client_and_what_it_imports_but_no_server_module(client_wheel):
    names = {n for n in zipfile.ZipFile(client_wheel).namelist() if not n.startswith("litestar_userio_client-")}

    assert names == _package_modules_the_client_imports() | {"litestar_userio/py.typed"}
    assert "litestar_userio/__init__.py" not in names  # the server's imports the plugin
    assert "litestar_userio/transfer/importer.py" in names


def test_the_client_wheel_declares_the_servers_version_and_cli_extra():
    server = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    client = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())["project"]

    assert client["version"] == server["version"]
    assert client["dependencies"] == server["optional-dependencies"]["cli"]
    assert client["scripts"] == server["scripts"]


@pytest.mark.slow
def test_the_client_alone_runs_userio_without_any_server_dependency(client_venv, tmp_path):
    userio = str(client_venv / "bin" / "userio")
    key = tmp_path / "admin.pem"
    key.write_bytes(_private_key_pem())
    key.chmod(0o600)
    (tmp_path / "users.ndjson").write_text('{"user_id": "auth0|1", "email": "ada@example.com"}\n')
    env = {**WITHOUT_SOURCE_TREE, "USERIO_HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    top = run(userio, "--help")
    version = run(userio, "--version")
    import_help = run(userio, "import", "--help")
    refused = run(userio, "import", "--from", "auth0", "users.ndjson", "--url", "http://127.0.0.1:9", "--key", str(key))
    loaded = run(str(client_venv / "bin" / "python"), "-c", FIND_SERVER_MODULES)

    assert {"import", "export", "hooks"} <= {line.split()[0] for line in top.stdout.splitlines() if line[:2] == "  "}
    assert version.stdout == "userio, version 0.1.0\n", version.stderr
    assert "--from" in import_help.stdout
    assert (refused.returncode, refused.stderr.strip()) == (
        2,
        "error: cannot connect to http://127.0.0.1:9: connection refused (is the server running?)",
    )
    assert loaded.stdout.strip() == "none"
    assert "litestar-userio" not in _distributions(client_venv)


@pytest.mark.slow
def test_the_client_alone_is_a_fraction_of_the_server_install(client_venv, clean_venv):
    client_mb, client_packages = _installed(client_venv)
    server_mb, server_packages = _installed(clean_venv)
    print(f"client-only install: {client_mb:.0f} MB, {len(client_packages)} packages")
    print(f"server base install: {server_mb:.0f} MB, {len(server_packages)} packages")

    assert client_mb < server_mb / 2
    assert len(client_packages) < len(server_packages)


def _private_key_pem() -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
