"""The wheels: the server's ships the migrations (a clean venv migrates an empty database from the installed package
alone); the client's (client/pyproject.toml) installs `userio` without any server dependency; what both share is the
core's (core/pyproject.toml), so no file is in two wheels and uninstalling either side leaves the other working."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
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


def _build(tmp_path_factory, project: str, distribution: str) -> Path:
    out = tmp_path_factory.mktemp(f"{distribution}-dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), project],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (built,) = out.glob(f"{distribution}-*.whl")
    return built


@pytest.fixture(scope="module")
def core_wheel(tmp_path_factory) -> Path:
    """The pure rules both sides depend on (`litestar-userio-core`): on no index, so each install names the wheel."""
    return _build(tmp_path_factory, "core", "litestar_userio_core")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return _build(tmp_path_factory, ".", "litestar_userio")


def _pip(venv: Path, *args: str, **run: Any) -> subprocess.CompletedProcess[str]:
    """The suite's own pip acting on `venv`. A venv with a pip of its own took 7 s more to create, and that pip
    (the one Python bundles) took 25 s to install the server's wheel, where the suite's took 13."""
    command = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "--disable-pip-version-check"]
    return subprocess.run([*command, *args], check=True, capture_output=True, text=True, **run)


def _venv(wheel: Path, tmp_path_factory, extras: str = "", *beside: Path) -> Path:
    """A venv with `wheel` (and its `extras`) installed, the local wheels `beside` it satisfying its dependencies."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _pip(venv, "install", "--quiet", "--no-compile", f"{wheel}{extras}", *map(str, beside), timeout=900)
    return venv


@pytest.fixture(scope="module")
def client_wheel(tmp_path_factory) -> Path:
    return _build(tmp_path_factory, "client", "litestar_userio_client")


@pytest.fixture(scope="module")
def client_venv(client_wheel, core_wheel, tmp_path_factory) -> Path:
    """The client alone."""
    return _venv(client_wheel, tmp_path_factory, "", core_wheel)


@pytest.fixture(scope="module")
def clean_venv(wheel, core_wheel, tmp_path_factory) -> Path:
    """The base install: the embedded default only."""
    return _venv(wheel, tmp_path_factory, "", core_wheel)


@pytest.fixture(scope="module")
def full_venv(wheel, client_wheel, core_wheel, tmp_path_factory) -> Path:
    """The server with its `postgres` and `cli` extras, so the client beside it: one install for the PostgreSQL
    migration and for installing both sides then uninstalling either (which puts it back as it found it). A server
    install of its own each took 10-25 s of the file's 60-130."""
    return _venv(wheel, tmp_path_factory, "[postgres,cli]", client_wheel, core_wheel)


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
    venv = clean_venv if engine == "sqlite" else request.getfixturevalue("full_venv")

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


def _installed(venv: Path) -> tuple[float, list[str]]:
    """The venv's size in MB and its installed distributions, pip and setuptools left out."""
    size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())
    return size / 1e6, [n for n in _distributions(venv) if n not in {"pip", "setuptools"}]


def _distributions(venv: Path) -> list[str]:
    """The names of the distributions installed in `venv`, lower case."""
    listed = _pip(venv, "list", "--format=freeze").stdout
    return [line.partition("==")[0].lower() for line in listed.splitlines()]


def _files(wheel: Path) -> set[str]:
    """The files a wheel installs, its own metadata left out."""
    return {n for n in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in n}


def test_the_client_wheel_holds_the_client_package_and_nothing_else(client_wheel):
    names = _files(client_wheel)
    package = {
        p.relative_to(ROOT).as_posix() for p in (ROOT / "userio_client").rglob("*") if p.suffix in {".py", ".typed"}
    }

    assert names == package
    assert "userio_client/importer.py" in names


def test_no_file_is_in_two_wheels(wheel, client_wheel, core_wheel):
    server, client, core = _files(wheel), _files(client_wheel), _files(core_wheel)

    assert "userio_core/login_ids.py" in core  # the one login-id normalization, in one wheel
    assert {n.split("/")[0] for n in server} == {"litestar_userio"}
    assert {n.split("/")[0] for n in client} == {"userio_client"}
    assert {n.split("/")[0] for n in core} == {"userio_core"}
    assert (server & client, server & core, client & core) == (set(), set(), set())


def test_the_core_wheel_holds_the_core_package_and_nothing_else(core_wheel):
    package = {
        p.relative_to(ROOT).as_posix() for p in (ROOT / "userio_core").rglob("*") if p.suffix in {".py", ".typed"}
    }

    assert _files(core_wheel) == package
    assert "userio_core/admin_keys.py" in package


EDITABLE_TREE = ("hatch_build.py", "pyproject.toml", "README.md", "core", "client", "plugins", "migrations")
EDITABLE_TREE_PACKAGES = ("litestar_userio", "userio_client", "userio_core")
"""What `pip install -e ./core -e ./client -e .` (the Makefile) builds from, copied so the test can edit it."""

SEE_THE_TREE = """
import userio_core, userio_client, litestar_userio
from litestar_userio.db.migrations import migration_ids, migrations_folder
print(userio_core.__file__, userio_client.__file__, litestar_userio.__file__, migrations_folder())
print(userio_core.EDITED, userio_client.EDITED, "2099-01-01T00:00:00:000000" in migration_ids())
"""


@pytest.mark.slow
def test_an_editable_install_is_the_source_tree_so_an_edit_is_seen_from_any_folder(tmp_path_factory, tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in EDITABLE_TREE + EDITABLE_TREE_PACKAGES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
        else:
            shutil.copy2(source, tree / name)
    out = tmp_path / "editable"
    build = "import sys; from hatchling.build import build_editable; print(build_editable(sys.argv[1]))"
    wheels = [
        out
        / subprocess.run(
            [sys.executable, "-c", build, str(out)], cwd=tree / project, check=True, capture_output=True, text=True
        ).stdout.split()[-1]
        for project in ("core", "client", ".")
    ]
    venv = tmp_path_factory.mktemp("editable-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _pip(venv, "install", "--quiet", "--no-deps", *map(str, wheels), timeout=300)
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    installed = {
        line.split(",")[0]
        for record in site.glob("*.dist-info/RECORD")
        for line in record.read_text().splitlines()
        if ".dist-info/" not in line.split(",")[0] and not line.startswith("../")  # the `userio` script is in bin/
    }
    # The dependencies: the suite's, after the tree's `.pth` entries on the path (a .pth line is appended to it).
    (site / "zz_suite_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # Edits after the install: a module of each shared package, a new migration.
    for package in ("userio_core", "userio_client"):
        with (tree / package / "__init__.py").open("a") as module:
            module.write(f'\nEDITED = "{package} edited"\n')
    (tree / "migrations" / "userio_2099_01_01t00_00_00_000000.py").write_text('ID = "2099-01-01T00:00:00:000000"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**WITHOUT_SOURCE_TREE, "USERIO_HOME": str(tmp_path / "home")}
        return subprocess.run(args, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)

    seen = run(str(venv / "bin" / "python"), "-c", SEE_THE_TREE)
    userio = run(str(venv / "bin" / "userio"), "--version")

    # Each editable wheel installs one .pth file naming the tree, and no copy of a module or of a migration.
    assert installed == {"_litestar_userio_core.pth", "_litestar_userio_client.pth", "_litestar_userio.pth"}
    assert {(site / name).read_text().strip() for name in installed} == {str(tree)}
    assert seen.returncode == 0, seen.stderr
    assert seen.stdout.splitlines() == [
        " ".join(str(tree / p) for p in ("userio_core/__init__.py", "userio_client/__init__.py"))
        + f" {tree / 'litestar_userio' / '__init__.py'} {tree / 'migrations'}",
        "userio_core edited userio_client edited True",
    ]
    assert userio.stdout == "userio, version 0.1.0\n", userio.stderr


def test_the_three_distributions_share_one_version_and_depend_on_each_other_by_it():
    server = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    client = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())["project"]
    core = tomllib.loads((ROOT / "core" / "pyproject.toml").read_text())["project"]
    pinned = f"=={server['version']}"

    assert client["version"] == core["version"] == server["version"]
    assert server["optional-dependencies"]["cli"] == [f"litestar-userio-client{pinned}"]
    assert f"litestar-userio-core{pinned}" in server["dependencies"]
    assert f"litestar-userio-core{pinned}" in client["dependencies"]
    assert client["scripts"] == {"userio": "userio_client.main:main"}
    assert "scripts" not in server  # one distribution installs `userio`


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


USE_BOTH_SIDES = """
import sys
for side in ("userio_client.main", "litestar_userio"):
    try:
        __import__(side)
    except ImportError as missing:
        print(side, "missing:", missing.name)
    else:
        print(side, "imported from", "venv" if sys.argv[1] in sys.modules[side].__file__ else "elsewhere")
"""


@pytest.mark.slow
def test_installing_both_then_uninstalling_either_leaves_the_other_working(full_venv, wheel, client_wheel, tmp_path):
    venv = full_venv
    python, userio = str(venv / "bin" / "python"), venv / "bin" / "userio"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**WITHOUT_SOURCE_TREE, "USERIO_HOME": str(tmp_path / "home")}
        return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    try:
        both = run(python, "-c", USE_BOTH_SIDES, str(venv))
        _pip(venv, "uninstall", "--yes", "litestar-userio")
        client_left = (run(python, "-c", USE_BOTH_SIDES, str(venv)), run(str(userio), "--version"))
        _pip(venv, "install", "--quiet", "--no-compile", "--no-deps", str(wheel), timeout=900)
        _pip(venv, "uninstall", "--yes", "litestar-userio-client")
        server_left = (run(python, "-c", USE_BOTH_SIDES, str(venv)), run(python, "-c", SERVE_EMBEDDED, str(tmp_path)))
        userio_left = userio.exists()
    finally:  # the module's venv as it was: both sides installed (pip skips one already there)
        _pip(venv, "install", "--quiet", "--no-compile", "--no-deps", str(wheel), str(client_wheel), timeout=900)

    assert both.stdout.splitlines() == ["userio_client.main imported from venv", "litestar_userio imported from venv"]
    assert client_left[0].stdout.splitlines() == [
        "userio_client.main imported from venv",
        "litestar_userio missing: litestar_userio",
    ]
    assert client_left[1].stdout == "userio, version 0.1.0\n", client_left[1].stderr
    assert server_left[0].stdout.splitlines() == [
        "userio_client.main missing: userio_client",
        "litestar_userio imported from venv",
    ]
    assert server_left[1].returncode == 0, server_left[1].stderr
    assert server_left[1].stdout.split()[:2] == ["403", "404"]
    assert not userio_left


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
