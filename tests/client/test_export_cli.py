"""`litestar userio export` against a live example app, on both deployments.

Download URLs point at the test's storage host (another origin, plain HTTP, see conftest.DownloadProxy), which
records what reaches it and can refuse or corrupt a download.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import signal
import stat
import subprocess
import sys

import pytest

from litestar_userio.projects.settings import ProjectSettings
from tests.client.conftest import Deployment, Project, make_workload

_PROJECTS: dict[str, tuple[Project, int]] = {}


@pytest.fixture
async def populated(deployment: Deployment, tmp_path_factory) -> tuple[Project, int]:
    """A project with 300 imported users, made once per deployment."""
    if deployment.name not in _PROJECTS:
        folder = tmp_path_factory.mktemp("export-users")
        workload = make_workload(folder / "users.ndjson", 300, tag="exp.")
        project = await deployment.make_project()
        result = deployment.cli("import", "users.ndjson", *project.args(deployment), "--quiet", cwd=folder)
        assert result.returncode == 1, result.stderr
        _PROJECTS[deployment.name] = (project, workload.inserted)
    return _PROJECTS[deployment.name]


def export(deployment: Deployment, project: Project, tmp_path, *args: str):
    return deployment.cli("export", *args, *project.args(deployment), "--quiet", cwd=tmp_path)


def assert_verified(result, path) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"sha256 {digest[:16]}... verified" in result.stderr
    assert not list(path.parent.glob(".*.part"))


@pytest.mark.engine
async def test_export_csv_with_every_field(deployment: Deployment, populated, tmp_path):
    project, count = populated
    seen_before = len(deployment.proxy.seen)

    result = export(deployment, project, tmp_path, "--format", "csv", "-o", "out/users.csv")

    assert result.returncode == 0, result.stderr
    path = tmp_path / "out" / "users.csv"
    rows = list(csv.reader(io.StringIO(path.read_text())))
    assert rows[0][:4] == ["sub", "preferred_username", "email", "phone_number"]
    assert len(rows) == count + 1
    assert f"{count} users" in result.stderr
    assert_verified(result, path)
    # The file came from the storage host, and the admin token never went there.
    downloads = deployment.proxy.seen[seen_before:]
    assert downloads and not any("authorization" in headers for headers in downloads)


async def test_export_csv_with_chosen_fields(deployment: Deployment, populated, tmp_path):
    project, count = populated

    result = export(
        deployment,
        project,
        tmp_path,
        "--format",
        "csv",
        "--field",
        "/email",
        "--field",
        "/custom_attributes/plan=plan",
        "--field",
        "/name=display name",
        "-o",
        "users.csv",
    )

    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "users.csv").read_text())))
    assert list(rows[0]) == ["email", "plan", "display name"]
    assert len(rows) == count
    assert {row["plan"] for row in rows} <= {"free", "pro", "team"}
    assert all(row["email"].endswith("@example.com") and row["display name"] for row in rows)
    assert_verified(result, tmp_path / "users.csv")


async def test_export_ndjson(deployment: Deployment, populated, tmp_path):
    project, count = populated

    result = export(deployment, project, tmp_path, "--format", "ndjson", "-o", "users.ndjson")

    assert result.returncode == 0, result.stderr
    users = [json.loads(line) for line in (tmp_path / "users.ndjson").read_text().splitlines()]
    assert len(users) == count
    rows = await deployment.fetch("SELECT id FROM userio_user WHERE project_id = $1", project.id)
    assert {u["sub"] for u in users} == {str(r["id"]) for r in rows}
    assert_verified(result, tmp_path / "users.ndjson")


async def test_a_refused_download_url_is_replaced_by_a_fresh_one(deployment: Deployment, populated, tmp_path):
    project, _ = populated
    deployment.proxy.actions.append("refuse")  # as an expired URL would be

    result = export(deployment, project, tmp_path, "--format", "ndjson", "-o", "users.ndjson")

    assert result.returncode == 0, result.stderr
    assert "asking the server for a fresh one" in result.stderr
    assert_verified(result, tmp_path / "users.ndjson")


async def test_a_download_that_does_not_match_is_deleted(deployment: Deployment, populated, tmp_path):
    project, _ = populated
    deployment.proxy.actions.append("corrupt")

    result = export(deployment, project, tmp_path, "--format", "csv", "-o", "users.csv")

    assert result.returncode == 1
    assert "is not the server's" in result.stderr and "deleted it" in result.stderr
    assert list(tmp_path.iterdir()) == []  # neither the file nor a partial one


async def test_dash_writes_the_verified_file_to_stdout_and_nothing_else(deployment: Deployment, populated, tmp_path):
    project, count = populated
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {"TMPDIR": str(temp)}

    to_file = export(deployment, project, tmp_path, "--format", "ndjson", "-o", "users.ndjson")
    to_stdout = deployment.cli(
        "export", "--format", "ndjson", "-o", "-", *project.args(deployment), "-q", cwd=tmp_path, env=env, process=True
    )  # a real process: the copy to stdout writes to its file descriptor, which click's runner has not got

    assert (to_file.returncode, to_stdout.returncode) == (0, 0), to_stdout.stderr
    assert to_stdout.stdout == (tmp_path / "users.ndjson").read_text()
    assert len(to_stdout.stdout.splitlines()) == count
    digest = hashlib.sha256(to_stdout.stdout.encode()).hexdigest()
    assert f"export done: stdout ({count} users, " in to_stdout.stderr
    assert f"sha256 {digest[:16]}... verified" in to_stdout.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["temp", "users.ndjson"]  # no file named "-"
    assert list(temp.iterdir()) == []


async def test_the_download_for_stdout_waits_in_a_file_only_its_owner_can_read(
    deployment: Deployment, populated, tmp_path
):
    """The system's temporary folder is shared, and an export holds every user's TOTP secrets."""
    project, count = populated
    deployment.proxy.stalled.clear()
    deployment.proxy.resume.clear()
    deployment.proxy.actions.append("stall")
    process = subprocess.Popen(
        deployment.command("export", "--format", "ndjson", "-o", "-", *project.args(deployment), "-q"),
        cwd=tmp_path, env={**deployment.env, "TMPDIR": str(tmp_path)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert await asyncio.to_thread(deployment.proxy.stalled.wait, 120)
        (waiting,) = tmp_path.glob(".userio-export.*.part")
        mode = stat.S_IMODE(waiting.stat().st_mode)
    finally:
        deployment.proxy.resume.set()
    stdout, stderr = process.communicate(timeout=120)

    assert mode == 0o600
    assert process.returncode == 0, stderr
    assert len(stdout.splitlines()) == count
    assert list(tmp_path.iterdir()) == []


_WITH_CTRL_C = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
)
"""Runs a command with Ctrl-C's default meaning, as from a terminal: a process started in the background (`make test
&`) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt, as `nohup` intends."""


@pytest.mark.parametrize(
    ("output", "said"), [("-", "stdout did not get the whole file"), ("users.ndjson", "nothing was written")]
)
async def test_ctrl_c_during_the_download_says_what_the_output_got(
    deployment: Deployment, populated, tmp_path, output: str, said: str
):
    project, _ = populated
    deployment.proxy.stalled.clear()
    deployment.proxy.resume.clear()
    deployment.proxy.actions.append("stall")
    command = deployment.command("export", "--format", "ndjson", "-o", output, *project.args(deployment), "-q")
    process = subprocess.Popen(
        [sys.executable, "-c", _WITH_CTRL_C, *command],
        cwd=tmp_path, env={**deployment.env, "TMPDIR": str(tmp_path)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert await asyncio.to_thread(deployment.proxy.stalled.wait, 120)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        deployment.proxy.resume.set()

    assert process.returncode == 130, stderr
    assert f"interrupted: {said}" in stderr.decode()
    assert stdout == b""
    assert list(tmp_path.iterdir()) == []


async def test_stdout_gets_nothing_from_a_download_that_does_not_match(deployment: Deployment, populated, tmp_path):
    project, _ = populated
    deployment.proxy.actions.append("corrupt")

    result = deployment.cli("export", "--format", "csv", "-o", "-", *project.args(deployment), "-q", cwd=tmp_path,
                          env={"TMPDIR": str(tmp_path)}, process=True)  # fmt: skip

    assert result.returncode == 1
    assert "is not the server's" in result.stderr
    assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("unbuffered", ["1", ""], ids=["PYTHONUNBUFFERED", "buffered"])
async def test_a_reader_that_stops_early_ends_the_run_with_one_line(
    deployment: Deployment, populated, tmp_path, unbuffered: str
):
    """Under PYTHONUNBUFFERED, stdout's raw `write` took the first 64 KiB, dropped the rest and said done."""
    project, _ = populated
    process = subprocess.Popen(
        deployment.command("export", "--format", "ndjson", "-o", "-", *project.args(deployment), "-q"),
        cwd=tmp_path, env={**deployment.env, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": unbuffered},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.read(100)
    process.stdout.close()
    stderr = process.stderr.read().decode()
    code = process.wait(timeout=120)

    assert first.startswith(b'{"sub":')
    assert code == 1, stderr
    assert "error: stdout was closed before the whole file was written" in stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr
    assert list(tmp_path.iterdir()) == []


async def test_escape_formulas_prefixes_cells_a_spreadsheet_would_run(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    formula = '=HYPERLINK("https://evil.example","click")'
    users = tmp_path / "users.ndjson"
    users.write_text(json.dumps({"email": "f@example.com", "name": formula}) + "\n")
    imported = embedded.cli("import", "users.ndjson", *project.args(embedded), "-q", cwd=tmp_path)
    columns = ("--format", "csv", "--field", "/email", "--field", "/name")

    escaped = export(embedded, project, tmp_path, *columns, "--escape-formulas", "-o", "escaped.csv")
    exact = export(embedded, project, tmp_path, *columns, "-o", "exact.csv")
    ndjson = export(embedded, project, tmp_path, "--format", "ndjson", "--escape-formulas", "-o", "x.ndjson")

    assert (imported.returncode, escaped.returncode, exact.returncode) == (0, 0, 0), escaped.stderr
    assert list(csv.reader(io.StringIO((tmp_path / "escaped.csv").read_text()))) == [
        ["email", "name"],
        ["f@example.com", "'" + formula],
    ]
    assert list(csv.reader(io.StringIO((tmp_path / "exact.csv").read_text())))[1] == ["f@example.com", formula]
    assert ndjson.returncode == 2
    assert "--escape-formulas applies to --format csv" in ndjson.stderr
    assert not (tmp_path / "x.ndjson").exists()


async def test_a_project_with_exports_off_is_told_so_not_as_a_server_error(embedded: Deployment, tmp_path):
    project = await embedded.make_project(ProjectSettings(export_enabled=False))

    result = export(embedded, project, tmp_path, "--format", "csv", "-o", "users.csv")

    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "error: exports are disabled for this project (500 UserExportDisabled): an operator turns them on with "
        "`litestar userio project configure --project ID --set export_enabled=true` (and a storage configured)"
    )
    assert list(tmp_path.iterdir()) == []


async def test_export_usage_and_server_errors(embedded: Deployment, tmp_path):
    project = await embedded.make_project()

    def fails(*args: str, message: str) -> None:
        result = export(embedded, project, tmp_path, *args)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr
        assert not (tmp_path / "x").exists()

    fails("--format", "ndjson", "--field", "/email", "-o", "x", message="--field applies to --format csv")
    fails("--format", "csv", "--field", "email", "-o", "x", message="expected a JSON pointer")
    fails(
        "--format",
        "csv",
        "--field",
        "/email",
        "--field",
        "/name=email",
        "-o",
        "x",
        message="the server refused to start an export (400): field names are not unique: email",
    )
    fails("--format", "csv", "--field", "/nope", "-o", "x", message="(400)")
    fails("--format", "csv", "-o", "x", "--token", "bad", message="the server refused the admin token (403)")
