"""`litestar userio import` against a live example app, on both deployments."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import time
from pathlib import Path

import pytest

from example_app.bootstrap import ensure_certificate
from tests.client.conftest import Deployment, Report, Workload, free_port, make_workload, read_report


def check_report(workload: Workload, report_path: Path, failed_path: Path) -> Report:
    """Every input line has exactly one outcome, the expected one; failed lines come back byte for byte."""
    report = read_report(report_path)
    assert not report.duplicates, f"indices reported twice: {report.duplicates[:10]}"
    assert sorted(report.details) == list(range(len(workload.lines)))
    outcomes = [report.details[i]["outcome"] for i in range(len(workload.lines))]
    mismatches = [(i, o, e) for i, (o, e) in enumerate(zip(outcomes, workload.expected, strict=True)) if o != e]
    assert not mismatches, mismatches[:5]
    for index, detail in report.details.items():
        if detail["task"] is None:  # failed here, unsent (DuplicateInFile)
            continue
        first, last = report.tasks[detail["task"]]
        assert first <= index <= last
    assert failed_path.read_bytes() == b"".join(line + b"\n" for line in workload.failed_lines())
    return report


def ranges_are_disjoint(report: Report) -> bool:
    ranges = sorted(report.tasks.values())
    return all(a[1] < b[0] for a, b in itertools.pairwise(ranges))


@pytest.mark.slow
async def test_import_of_20000_records(deployment: Deployment, workload_20k: Workload, tmp_path):
    project = await deployment.make_project()
    result = deployment.cli("import", str(workload_20k.path), *project.args(deployment), "--quiet", cwd=tmp_path,
                            process=True)  # fmt: skip  # a real-process smoke test: the console script at full size

    assert result.returncode == 1, result.stderr  # some records failed
    assert "import: " in result.stderr  # progress lines
    assert "import done: 20,000 records" in result.stderr
    report = check_report(workload_20k, tmp_path / "report.ndjson", tmp_path / "failed.ndjson")
    assert len(report.tasks) >= 10 and ranges_are_disjoint(report)
    assert await deployment.user_count(project) == workload_20k.inserted
    print(f"\n{deployment.name}: 20 000 records in {result.elapsed:.1f} s: {20_000 / result.elapsed:,.0f} records/s")


def _lines(path: Path) -> list[dict]:
    """The complete lines of a report being written (the last one may be torn)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


async def kill_midway(process, report_path: Path, total: int) -> list[dict]:
    """SIGKILL the CLI once it has reported a tenth of the records, at a moment no request is being sent and a
    task is in flight (answered, its records not all reported).

    Run with one task in flight, such a moment lasts as long as the server takes over a task. With two, a request
    was on the wire nearly always on the embedded deployment, where the web process also applies the chunks and
    answers a request late: the moment sometimes came only after the last record (CI runs failed so, waiting for a
    third and later for a tenth).

    The check runs with the CLI stopped (SIGSTOP), so what the report says is what the process had done. A kill
    while a request is on the wire is the one case a client cannot settle alone (the server may have created a
    task whose id never arrived); `test_resume_resubmits_a_request_whose_answer_was_lost` covers it.
    """
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert process.poll() is None, "the import finished before it could be killed"
        lines = _lines(report_path)
        if sum("index" in line for line in lines) >= total // 10:
            process.send_signal(signal.SIGSTOP)
            lines = _lines(report_path)
            submitted = {tuple(line["submit"]) for line in lines if "submit" in line}
            answered = {tuple(line["indices"]) for line in lines if "indices" in line}
            if submitted == answered and _in_flight(lines):
                process.send_signal(signal.SIGKILL)
                process.wait()
                return lines
            process.send_signal(signal.SIGCONT)
        await asyncio.sleep(0.01)
    raise AssertionError("the import never got a tenth of the way")


def _in_flight(lines: list[dict]) -> list[tuple[int, int]]:
    """The record ranges of answered requests whose records are not all reported yet."""
    written = {line["index"] for line in lines if "index" in line}
    journaled = [tuple(line["indices"]) for line in lines if "indices" in line]
    return [r for r in journaled if not all(i in written for i in range(r[0], r[1] + 1))]


@pytest.mark.slow
async def test_resume_after_sigkill_applies_nothing_twice(deployment: Deployment, workload_20k: Workload, tmp_path):
    project = await deployment.make_project()
    args = (str(workload_20k.path), *project.args(deployment), "--quiet")
    first = deployment.popen("import", *args, "--in-flight", "1", cwd=tmp_path, log=tmp_path / "first.log")
    try:
        before = await kill_midway(first, tmp_path / "report.ndjson", len(workload_20k.lines))
    finally:
        if first.poll() is None:
            first.kill()
    written = {line["index"] for line in before if "index" in line}
    assert 0 < len(written) < len(workload_20k.lines)
    assert _in_flight(before), "no task was in flight at the kill"

    second = deployment.cli("import", *args, "--resume", "report.ndjson", cwd=tmp_path)

    assert second.returncode == 1, second.stderr
    report = check_report(workload_20k, tmp_path / "report.ndjson", tmp_path / "failed.ndjson")
    assert not any(d.get("resubmitted") for d in report.details.values())
    assert ranges_are_disjoint(report)  # no record was sent in two requests
    # With upsert false a second application would show as "skipped": every valid record is inserted once.
    assert sum(d["outcome"] == "inserted" for d in report.details.values()) == workload_20k.inserted
    assert await deployment.user_count(project) == workload_20k.inserted
    assert "import done: 20,000 records" in second.stderr


async def test_resume_resubmits_a_request_whose_answer_was_lost(embedded: Deployment, tmp_path):
    """A run killed while a request was on the wire: the server may hold it, the id never arrived.

    The resumed run sends the same records under the same Idempotency-Key; the server answers the task the
    first send created, so the outcomes are those of one application.
    """
    workload = make_workload(tmp_path / "users.ndjson", 60, seed=3)
    project = await embedded.make_project()
    first = embedded.cli("import", "users.ndjson", *project.args(embedded), "--report", "first.ndjson", cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    # The lost report: the header and every request sent, none of their answers (a duplicate is failed unsent).
    lines = (tmp_path / "first.ndjson").read_bytes().splitlines(keepends=True)
    kept = [line for line in lines if b'"run"' in line or b'"submit"' in line or b'"task":null' in line]
    (tmp_path / "lost.ndjson").write_bytes(b"".join(kept))

    second = embedded.cli("import", "users.ndjson", *project.args(embedded), "--resume", "lost.ndjson", cwd=tmp_path)

    assert second.returncode == 1, second.stderr
    assert (
        "resumed: the counts cover the whole file; 1 record had their outcome from the earlier run (read from its"
        " report, not sent again), 59 were sent by this run"
    ) in second.stderr
    report = read_report(tmp_path / "lost.ndjson")
    assert sorted(report.details) == list(range(60))
    assert all(d.get("resubmitted") is True for d in report.details.values() if d["task"] is not None)
    outcomes = [report.details[i]["outcome"] for i in range(60)]
    assert outcomes == list(workload.expected)
    first_tasks = {line.get("task") for line in _lines(tmp_path / "first.ndjson") if "indices" in line}
    assert {d["task"] for d in report.details.values()} - {None} <= first_tasks, "the replay answered the first task"
    assert await embedded.user_count(project) == workload.inserted


async def test_exit_codes_and_messages(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    workload = make_workload(tmp_path / "good.ndjson", 3)  # records 0-2: all valid
    args = project.args(embedded)

    ok = embedded.cli("import", "good.ndjson", *args, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "import done: 3 records, 3 inserted" in ok.stderr
    assert not (tmp_path / "failed.ndjson").read_bytes()

    some_failed = make_workload(tmp_path / "some.ndjson", 5, tag="s.")  # record 3 is invalid
    result = embedded.cli(
        "import", "some.ndjson", *args, "--report", "r2.ndjson", "--failed", "f2.ndjson", cwd=tmp_path
    )
    assert result.returncode == 1
    assert (tmp_path / "f2.ndjson").read_bytes() == some_failed.lines[3] + b"\n"

    def fails(*extra: str, message: str) -> None:
        report = tmp_path / "never.ndjson"
        outcome = embedded.cli("import", *extra, "--report", str(report), cwd=tmp_path)
        assert outcome.returncode == 2, outcome.stderr
        errors = [line for line in outcome.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and message in errors[0], outcome.stderr
        assert not report.exists()  # nothing started

    fails("good.ndjson", *args, "--token", "not-a-jwt", message="the server refused the admin token (403): ")
    other = ensure_certificate(tmp_path / "other-tls")[0]
    fails("good.ndjson", *args, "--cacert", str(other), message="TLS verification failed for https://localhost:")
    dead = f"https://localhost:{free_port()}"
    fails(
        "good.ndjson", "--url", dead, "--project", project.id, message=f"cannot connect to {dead}: connection refused"
    )
    fails("missing.ndjson", *args, message="cannot read missing.ndjson: No such file or directory")
    (tmp_path / "bad.ndjson").write_bytes(workload.lines[0] + b'\n{"email": tru}\n')
    fails("bad.ndjson", *args, message="bad.ndjson:2: not a valid JSON record")
    fails("good.ndjson", *args, "--host", "nowhere.test", message="serves no project on this host (403)")
    # An existing report is never overwritten by accident.
    again = embedded.cli("import", "good.ndjson", *args, cwd=tmp_path)
    assert again.returncode == 2 and "pass --resume report.ndjson" in again.stderr


async def test_dry_run_writes_nothing(deployment: Deployment, tmp_path):
    workload = make_workload(tmp_path / "users.ndjson", 120, tag="dry.")
    project = await deployment.make_project()

    result = deployment.cli("import", "users.ndjson", *project.args(deployment), "--dry-run", cwd=tmp_path)

    assert result.returncode == 1, result.stderr
    assert "dry run (nothing was written)" in result.stderr
    report = read_report(tmp_path / "report.ndjson")
    assert report.header["dry_run"] is True
    assert [report.details[i]["outcome"] for i in range(120)] == workload.expected
    assert (tmp_path / "failed.ndjson").read_bytes() == b"".join(line + b"\n" for line in workload.failed_lines())
    assert await deployment.user_count(project) == 0


async def test_json_array_and_request_object_inputs(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    workload = make_workload(tmp_path / "w.ndjson", 20, tag="layout.")
    records = [json.loads(line) for line in workload.lines]
    (tmp_path / "users.json").write_text(json.dumps(records, indent=2, ensure_ascii=False))

    first = embedded.cli("import", "users.json", *project.args(embedded), cwd=tmp_path)

    assert first.returncode == 1, first.stderr
    report = read_report(tmp_path / "report.ndjson")
    assert report.header["layout"] == "array"
    assert [report.details[i]["outcome"] for i in range(20)] == workload.expected
    failed = (tmp_path / "failed.ndjson").read_bytes().splitlines()
    # The pretty elements, on one line: the invalid one and the duplicate of line 8's email.
    assert [json.loads(line) for line in failed] == [
        records[i] for i, e in enumerate(workload.expected) if e == "failed"
    ]

    for record in records:
        record["name"] = "Renamed " + record["name"]
    request = {"identifier": "email", "upsert": True, "records": records}
    (tmp_path / "request.json").write_text(json.dumps(request, indent=1, ensure_ascii=False))

    second = embedded.cli(
        "import",
        "request.json",
        *project.args(embedded),
        "--report",
        "r2.ndjson",
        "--failed",
        "f2.ndjson",
        cwd=tmp_path,
    )

    assert second.returncode == 1, second.stderr
    report = read_report(tmp_path / "r2.ndjson")
    assert report.header["upsert"] is True  # from the file
    assert [report.details[i]["outcome"] for i in range(20)] == [
        "failed" if e == "failed" and i not in workload.duplicates else "updated"
        for i, e in enumerate(workload.expected)
    ]
    names = await embedded.fetch("SELECT standard_attributes FROM userio_user WHERE project_id = $1", project.id)
    assert all(json.loads(row["standard_attributes"])["name"].startswith("Renamed ") for row in names)


async def test_standard_input_and_a_record_too_large_for_any_request(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    workload = make_workload(tmp_path / "w.ndjson", 30, tag="stdin.")
    huge = json.dumps({"email": "huge@example.com", "name": "x" * 5000}).encode()
    data = b"\n".join([*workload.lines[:10], huge, *workload.lines[10:]]) + b"\n"

    result = embedded.cli(
        "import", "-", *project.args(embedded), "--max-request-bytes", "3000", "--quiet", stdin=data, cwd=tmp_path
    )

    assert result.returncode == 1, result.stderr
    report = read_report(tmp_path / "report.ndjson")
    assert report.header["input"] == "-" and report.header["records"] is None
    assert sorted(report.details) == list(range(31))
    assert report.details[10]["task"] is None
    assert report.details[10]["errors"][0]["reason"] == "RecordTooLarge"
    assert len(report.tasks) >= 5  # 3000-byte requests
    assert (tmp_path / "failed.ndjson").read_bytes() == b"".join(
        line + b"\n"
        for line in (workload.lines[3], huge, workload.lines[11])  # line 11: a duplicate of line 8
    )


async def test_records_about_one_user_apply_in_file_order_across_requests(deployment: Deployment, tmp_path):
    """The second version of each user is in a later request that could run at the same time as the first."""
    first = [{"email": f"order{i}@example.com", "name": "first version"} for i in range(60)]
    second = [{"email": f"ORDER{i}@example.com", "name": "second version"} for i in range(60)]
    (tmp_path / "users.ndjson").write_text("".join(json.dumps(r) + "\n" for r in first + second))
    project = await deployment.make_project()

    result = deployment.cli(
        "import",
        "users.ndjson",
        *project.args(deployment),
        "--upsert",
        "--max-request-bytes",
        "700",
        "--in-flight",
        "8",
        cwd=tmp_path,
    )

    assert result.returncode == 0, result.stderr
    report = read_report(tmp_path / "report.ndjson")
    assert len(report.tasks) > 10
    assert [report.details[i]["outcome"] for i in range(120)] == ["inserted"] * 60 + ["updated"] * 60
    rows = await deployment.fetch("SELECT standard_attributes FROM userio_user WHERE project_id = $1", project.id)
    assert len(rows) == 60
    assert {json.loads(row["standard_attributes"])["name"] for row in rows} == {"second version"}


async def test_interrupt_journals_what_was_sent_and_resume_finishes(embedded: Deployment, tmp_path):
    """Ctrl-C (SIGINT): the CLI stops sending, keeps the report consistent, exits 130; --resume completes."""
    workload = make_workload(tmp_path / "users.ndjson", 3000, tag="int.")
    project = await embedded.make_project()
    args = ("users.ndjson", *project.args(embedded), "--quiet")
    process = embedded.popen(
        "import", *args, "--max-request-bytes", "40000", "--in-flight", "2", cwd=tmp_path, log=tmp_path / "run.log"
    )
    report_path = tmp_path / "report.ndjson"
    deadline = time.monotonic() + 60
    while sum("index" in line for line in _lines(report_path)) < 300:
        assert time.monotonic() < deadline and process.poll() is None
        await asyncio.sleep(0.02)
    os.kill(process.pid, signal.SIGINT)
    assert process.wait(timeout=60) == 130
    log = (tmp_path / "run.log").read_text()
    assert "interrupted" in log and "--resume report.ndjson" in log
    lines = _lines(report_path)
    assert {tuple(x["submit"]) for x in lines if "submit" in x} == {
        tuple(x["indices"]) for x in lines if "indices" in x
    }

    resumed = embedded.cli("import", *args, "--resume", "report.ndjson", cwd=tmp_path)

    assert resumed.returncode == 1, resumed.stderr
    check_report(workload, report_path, tmp_path / "failed.ndjson")
    assert await embedded.user_count(project) == workload.inserted


@pytest.mark.parametrize("dry_run", [False, True])
async def test_records_naming_one_user_are_duplicates_of_the_first_line(embedded: Deployment, tmp_path, dry_run):
    """Without upsert, a later record naming the same login id (after normalization) would be `skipped` carrying
    the first record's user id: it fails as a duplicate of that line, in the dry run too."""
    records = [
        {"email": "ada@example.com", "name": "Ada"},
        {"email": "bob@example.com"},
        {"email": "ADA@Example.com", "name": "Ada King"},
        {"email": "cy@example.com"},
        {"email": "ada@example.com", "name": "Ada, once more"},
    ]
    lines = [json.dumps(r).encode() for r in records]
    (tmp_path / "users.ndjson").write_bytes(b"".join(line + b"\n" for line in lines))
    project = await embedded.make_project()

    result = embedded.cli(
        "import", "users.ndjson", *project.args(embedded), *(["--dry-run"] if dry_run else []), cwd=tmp_path
    )

    assert result.returncode == 1, result.stderr
    report = read_report(tmp_path / "report.ndjson")
    outcomes = [report.details[i]["outcome"] for i in range(5)]
    assert outcomes == ["inserted", "inserted", "failed", "inserted", "failed"]
    error = report.details[2]["errors"][0]
    assert error["reason"] == "DuplicateInFile"
    assert error["message"].startswith("duplicate of line 1: email 'ada@example.com'")
    assert error["info"] == {"duplicate_of_line": 1, "email": "ada@example.com"}
    assert (tmp_path / "failed.ndjson").read_bytes() == lines[2] + b"\n" + lines[4] + b"\n"
    summary = json.loads((tmp_path / "report.failures.json").read_text())
    assert [(g["reason"], g["count"]) for g in summary["failures"]] == [("DuplicateInFile", 2)]
    assert await embedded.user_count(project) == (0 if dry_run else 3)
