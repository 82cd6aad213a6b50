"""`userio changes` and `userio export --since` against a live example app (issue 42 item 6, docs/changes.md)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.client.conftest import Deployment, Project
from tests.helpers import until


def write_users(path: Path, emails: list[str]) -> None:
    path.write_text("".join(json.dumps({"email": email}) + "\n" for email in emails))


def import_users(deployment: Deployment, project: Project, folder: Path, name: str, emails: list[str]) -> None:
    write_users(folder / name, emails)
    result = deployment.cli(
        "import", name, *project.args(deployment), "--quiet", "--report", f"{name}.report", cwd=folder
    )
    assert result.returncode == 0, result.stderr


def entries(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


async def follow(deployment: Deployment, project: Project, folder: Path, count: int, *args: str) -> list[dict]:
    """`userio changes --state cursor.txt` until it has printed `count` entries (PostgreSQL shows an entry once the
    transactions before it settled: docs/changes.md#order)."""
    printed: list[dict] = []

    def caught_up() -> bool:
        result = deployment.cli("changes", *project.args(deployment), "--quiet", "--state", "cursor.txt", cwd=folder)
        assert result.returncode == 0, result.stderr
        printed.extend(entries(result.stdout))
        return len(printed) >= count

    await until(caught_up, f"the client printed {count} entries", timeout=30, interval=0.2)
    return printed


@pytest.mark.engine
async def test_changes_prints_ndjson_and_resumes_from_its_state(deployment: Deployment, tmp_path: Path):
    project = await deployment.make_project()
    import_users(deployment, project, tmp_path, "a.ndjson", ["a1@example.com", "a2@example.com"])

    first = await follow(deployment, project, tmp_path, 2)
    import_users(deployment, project, tmp_path, "b.ndjson", ["b1@example.com"])
    second = await follow(deployment, project, tmp_path, 1)

    assert [e["user"]["email"] for e in first] == ["a1@example.com", "a2@example.com"]
    assert [e["user"]["email"] for e in second] == ["b1@example.com"]
    assert all(e["type"] == "user.created" and e["origin"]["kind"] == "import" for e in first + second)
    assert (tmp_path / "cursor.txt").read_text().strip() == second[-1]["cursor"]


async def test_a_foreign_cursor_is_one_line_on_stderr(embedded: Deployment, tmp_path: Path):
    project = await embedded.make_project()
    result = embedded.cli("changes", *project.args(embedded), "--cursor", "forged", cwd=tmp_path)
    assert result.returncode == 2
    assert "InvalidCursor" in result.stderr or "invalid cursor" in result.stderr


@pytest.mark.engine
async def test_export_since_a_watermark_writes_only_what_changed(deployment: Deployment, tmp_path: Path):
    project = await deployment.make_project()
    import_users(deployment, project, tmp_path, "a.ndjson", ["a1@example.com", "a2@example.com"])
    full = deployment.cli("export", "--format", "ndjson", "-o", "full.ndjson", *project.args(deployment), cwd=tmp_path)
    assert full.returncode == 0, full.stderr
    watermark = re.search(r"watermark (\S+)", full.stderr)
    assert watermark is not None, full.stderr
    import_users(deployment, project, tmp_path, "b.ndjson", ["b1@example.com"])

    delta = deployment.cli(
        "export",
        "--format",
        "ndjson",
        "--since",
        watermark[1],
        "-o",
        "delta.ndjson",
        *project.args(deployment),
        cwd=tmp_path,
    )

    assert delta.returncode == 0, delta.stderr
    emails = {json.loads(line)["email"] for line in (tmp_path / "delta.ndjson").read_text().splitlines()}
    assert "b1@example.com" in emails
    assert len((tmp_path / "full.ndjson").read_text().splitlines()) == 2


async def test_changes_follow_prints_new_entries_as_they_commit(embedded: Deployment, tmp_path: Path):
    project = await embedded.make_project()
    log = tmp_path / "follow.log"
    process = embedded.popen(
        "changes", *project.args(embedded), "--follow", "--poll", "0.2", "--state", "cursor.txt", cwd=tmp_path, log=log
    )
    try:
        import_users(embedded, project, tmp_path, "a.ndjson", ["f1@example.com", "f2@example.com"])
        await until(lambda: log.read_text().count('"user.created"') >= 2, "two entries followed", timeout=60)
        assert process.poll() is None  # still following
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:  # pragma: no cover
            process.kill()
    followed = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert [e["user"]["email"] for e in followed] == ["f1@example.com", "f2@example.com"]
