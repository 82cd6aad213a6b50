"""The migration loop through `userio` (real processes, a live example app): settings, resume, files, summaries.

Each test drives the `userio` console script as a person would and checks what they see: exit codes, the
lines on stderr (and that the commands printed there run as printed), the files written, the rows stored.
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import select
import shlex
import signal
import ssl
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.client.conftest import USERIO, Deployment, Project, make_workload
from tests.helpers import HASH_2B
from tests.hooks.test_migration_event import MIGRATION_HOOK, OldSystem
from tests.server_cli import run_userio

ROOT = Path(__file__).resolve().parents[2]


def _lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.endswith(b"}")]


def printed_command(stderr: str, after: str) -> list[str]:
    """The command the CLI printed after `after` (same line or the next one), split as a shell would."""
    lines = stderr.splitlines()
    for position, line in enumerate(lines):
        if after in line:
            rest = line.split(after, 1)[1].strip()
            text = rest or lines[position + 1].strip()
            args = shlex.split(text)
            assert args[0] == "userio", text
            return args
    raise AssertionError(f"no {after!r} in {stderr}")


def run_printed(
    deployment: Deployment, args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A printed `userio ...` command, run as printed (the console script on PATH)."""
    return subprocess.run(
        [USERIO, *args[1:]], cwd=cwd, env={**deployment.env, **(env or {})}, capture_output=True, text=True,
        timeout=240,
    )  # fmt: skip


def jsonl(records: list[dict]) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)


async def names(deployment: Deployment, project: Project) -> dict[str, str]:
    rows = await deployment.fetch(
        "SELECT i.normalized_value AS login, u.standard_attributes AS attrs FROM userio_user u"
        " JOIN userio_identity i ON i.user_id = u.id WHERE u.project_id = $1 AND i.login_id_key = 'email'",
        project.id,
    )
    return {row["login"]: json.loads(row["attrs"]).get("name") for row in rows}


# Where a command connects.


async def test_an_admin_key_others_can_read_is_used_with_a_warning(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    key = tmp_path / "copied key.pem"
    key.write_bytes((embedded.home / f"{project.id}-admin-key.pem").read_bytes())
    key.chmod(0o644)
    (tmp_path / "a.ndjson").write_bytes(jsonl([{"email": "a@example.com"}]))
    (tmp_path / "b.ndjson").write_bytes(jsonl([{"email": "b@example.com"}]))
    args = [*project.args(embedded), "--key", str(key), "-q"]

    exposed = embedded.cli("import", "a.ndjson", *args, "--report", "a.report", "--failed", "a.failed", cwd=tmp_path)
    key.chmod(0o600)
    private = embedded.cli("import", "b.ndjson", *args, "--report", "b.report", "--failed", "b.failed", cwd=tmp_path)

    assert (exposed.returncode, private.returncode) == (0, 0), exposed.stderr + private.stderr
    warning = f"warning: the admin key {key} can be read by other users (mode 0644): chmod 600 '{key}'"
    assert warning in exposed.stderr.splitlines()
    assert "warning: the admin key" not in private.stderr
    assert set(await names(embedded, project)) == {"a@example.com", "b@example.com"}


async def test_connection_settings_from_environment_variables_and_a_profile(embedded: Deployment, tmp_path):
    by_env, by_profile = await embedded.make_project(), await embedded.make_project()
    (tmp_path / "a.ndjson").write_bytes(jsonl([{"email": "env@example.com"}]))
    (tmp_path / "b.ndjson").write_bytes(jsonl([{"email": "profile@example.com"}]))
    key = embedded.home / f"{by_profile.id}-admin-key.pem"
    profiles = tmp_path / "config" / "userio" / "profiles.toml"
    profiles.parent.mkdir(parents=True)
    profiles.write_text(
        f'[staging]\nurl = "{embedded.url}"\nproject = "{by_profile.id}"\nhost = "{by_profile.host}"\nkey = "{key}"\n'
    )
    variables = {"USERIO_URL": embedded.url, "USERIO_PROJECT": by_env.id, "USERIO_HOST": by_env.host}

    from_env = embedded.cli("import", "a.ndjson", "-q", cwd=tmp_path, env=variables, process=True)  # read at start
    from_profile = embedded.cli(
        "import",
        "b.ndjson",
        "--profile",
        "staging",
        "--report",
        "b.report",
        "--failed",
        "b.failed",
        "-q",
        cwd=tmp_path,
        env={"XDG_CONFIG_HOME": str(tmp_path / "config")},
    )
    unknown = embedded.cli(
        "import",
        "b.ndjson",
        "--profile",
        "prod",
        "--report",
        "c.report",
        cwd=tmp_path,
        env={"XDG_CONFIG_HOME": str(tmp_path / "config")},
    )

    assert from_env.returncode == 0, from_env.stderr
    assert from_profile.returncode == 0, from_profile.stderr
    assert await names(embedded, by_env) == {"env@example.com": None}
    assert await names(embedded, by_profile) == {"profile@example.com": None}
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == f"error: no profile [prod] in {profiles} (it has: staging)"


# Nothing lost between runs.


async def test_resume_takes_every_setting_from_the_report_header(embedded: Deployment, tmp_path):
    """The printed "continue with:" line runs as printed, in the run's project, into the run's own files."""
    workload = make_workload(tmp_path / "users.ndjson", 3000, tag="loop.")
    project = await embedded.make_project()
    process = subprocess.Popen(
        [USERIO, "import", "users.ndjson", *project.args(embedded), "--quiet", "--failed", "mine-failed.ndjson",
         "--report", "mine.ndjson", "--upsert", "--max-request-bytes", "40000", "--in-flight", "2"],
        cwd=tmp_path, env=embedded.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while sum("index" in line for line in _lines(tmp_path / "mine.ndjson")) < 300:
        assert time.monotonic() < deadline and process.poll() is None
        await asyncio.sleep(0.02)
    os.kill(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    command = printed_command(stderr.decode(), "continue with:")
    header = _lines(tmp_path / "mine.ndjson")[0]["run"]

    resumed = run_printed(embedded, command, tmp_path, env={"USERIO_PROJECT": "demo", "USERIO_HOST": "localhost"})

    assert command == ["userio", "import", "users.ndjson", "--resume", "mine.ndjson"]
    assert (header["project"], header["host"], header["upsert"], header["failed"]) == (
        project.id, project.host, True, str(tmp_path / "mine-failed.ndjson"),
    )  # fmt: skip
    assert resumed.returncode == 1, resumed.stderr
    failed = workload.failed_lines(upsert=True)
    assert (tmp_path / "mine-failed.ndjson").read_bytes() == b"".join(line + b"\n" for line in failed)
    assert not (tmp_path / "failed.ndjson").exists()
    assert await embedded.user_count(project) == workload.inserted
    outcomes = [line["outcome"] for line in _lines(tmp_path / "mine.ndjson") if "outcome" in line]
    assert len(outcomes) == 3000
    assert outcomes.count("failed") == len(failed)


async def test_no_run_overwrites_or_appends_to_another_runs_files(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    (tmp_path / "a.ndjson").write_bytes(jsonl([{"email": "ok@example.com"}, {"email": "broken"}]))
    (tmp_path / "b.ndjson").write_bytes(jsonl([{"email": "other@example.com"}, {"email": "also broken"}]))
    first = embedded.cli("import", "a.ndjson", *project.args(embedded), "-q", cwd=tmp_path)
    (tmp_path / "r4.failures.json").write_text("{}")
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}

    dry_run = embedded.cli("import", "b.ndjson", *project.args(embedded), "--dry-run", "--report", "r2.ndjson",
                           cwd=tmp_path)  # fmt: skip
    same_report = embedded.cli("import", "b.ndjson", *project.args(embedded), "--failed", "f2.ndjson", cwd=tmp_path)
    summary_taken = embedded.cli("import", "b.ndjson", *project.args(embedded), "--report", "r4.ndjson",
                                 "--failed", "f4.ndjson", cwd=tmp_path)  # fmt: skip
    export_taken = embedded.cli("export", "--format", "ndjson", "-o", "a.ndjson", *project.args(embedded),
                                cwd=tmp_path)  # fmt: skip

    assert first.returncode == 1
    assert {"report.ndjson", "failed.ndjson", "report.failures.json"} <= set(files)
    assert (dry_run.returncode, same_report.returncode, summary_taken.returncode) == (2, 2, 2)
    assert "failed.ndjson exists from an earlier run" in dry_run.stderr
    assert "report.ndjson exists from an earlier run" in same_report.stderr
    assert "r4.failures.json exists from an earlier run" in summary_taken.stderr
    assert export_taken.returncode == 2
    assert "a.ndjson exists" in export_taken.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == files
    assert await names(embedded, project) == {"ok@example.com": None}


async def test_the_printed_fix_command_runs_as_printed_into_the_same_project(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    records = [{"email": "ada@example.com", "name": "Ada"}, {"email": "grace@", "name": "Grace"}]
    (tmp_path / "users.ndjson").write_bytes(jsonl(records))
    first = embedded.cli("import", "users.ndjson", *project.args(embedded), "--upsert", "-q", cwd=tmp_path)
    command = printed_command(first.stderr, "fix them, then:")
    failed = tmp_path / "failed.ndjson"
    failed.write_bytes(failed.read_bytes().replace(b'"grace@"', b'"grace@example.com"'))

    fixed = run_printed(embedded, command, tmp_path, env={"USERIO_PROJECT": "demo", "USERIO_URL": "https://nowhere"})

    assert first.returncode == 1
    assert "--upsert" in command and project.id in command and project.host in command
    assert fixed.returncode == 0, fixed.stderr
    assert await names(embedded, project) == {"ada@example.com": "Ada", "grace@example.com": "Grace"}
    assert (tmp_path / "report-2.ndjson").exists()
    assert (tmp_path / "failed-2.ndjson").read_bytes() == b""


# Errors a person can act on.


async def test_failures_are_grouped_by_reason_and_location_with_counts_and_one_example(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    records = [{"email": f"u{i}@example.com", "zoneinfo": "Mars/Olympus"} for i in range(3)]
    records += [{"email": f"bad{i}"} for i in range(2)]
    records += [{"email": "r@example.com", "roles": ["superuser"]}, {"email": "fine@example.com"}]
    (tmp_path / "users.ndjson").write_bytes(jsonl(records))

    result = embedded.cli("import", "users.ndjson", *project.args(embedded), "-q", cwd=tmp_path)
    summary = json.loads((tmp_path / "report.failures.json").read_text())

    assert result.returncode == 1
    groups = {(g["reason"], g["location"]): (g["count"], g["example"]) for g in summary["failures"]}
    assert {key: count for key, (count, _) in groups.items()} == {
        ("ValidationFailed", "/zoneinfo"): 3,
        ("ValidationFailed", "/email"): 2,
        ("RoleUnknownKeys", ""): 1,
    }
    example = groups[("ValidationFailed", "/zoneinfo")][1]
    assert (example["index"], example["line"], example["value"]) == (0, 1, "Mars/Olympus")
    assert example["details"]["format"] == "timezone"
    assert example["message"] not in ("", "invalid record")  # the cause's own message, from the server
    assert groups[("ValidationFailed", "/email")][1]["line"] == 4
    assert summary["counts"] == {"inserted": 1, "updated": 0, "skipped": 0, "failed": 6}
    lines = result.stderr.splitlines()
    start = lines.index("failures by reason and location (count, then the first example):")
    assert lines[start + 1].split()[:3] == ["3", "ValidationFailed", "/zoneinfo"]
    assert 'e.g. line 1: "Mars/Olympus":' in lines[start + 1]
    assert lines[start + 2].split()[:3] == ["2", "ValidationFailed", "/email"]
    assert "report.failures.json" in result.stderr


async def test_server_warnings_are_counted_by_text_with_the_first_records_in_the_summary(
    embedded: Deployment, tmp_path
):
    project = await embedded.make_project()
    first = [{"email": f"w{i}@example.com"} for i in range(7)]
    (tmp_path / "first.ndjson").write_bytes(jsonl(first))
    assert embedded.cli("import", "first.ndjson", *project.args(embedded), "-q", "--report", "a.ndjson",
                        cwd=tmp_path).returncode == 0  # fmt: skip
    # Again with passwords, as an upsert: the users exist, so each password is ignored with the server's warning.
    again = [{"email": "new@example.com"}] + [
        {"email": f"w{i}@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}} for i in range(7)
    ]
    (tmp_path / "again.ndjson").write_bytes(jsonl(again))

    result = embedded.cli("import", "again.ndjson", "--upsert", *project.args(embedded), "-q", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "report.failures.json").read_text())
    assert summary["server_warnings"] == [
        {
            "message": "password is ignored because the user already exists.",
            "count": 7,
            "indexes": [1, 2, 3, 4, 5],
            "lines": [2, 3, 4, 5, 6],
        }
    ]
    lines = result.stderr.splitlines()
    start = lines.index("server warnings (records applied anyway; count, then the first records):")
    assert lines[start + 1].split("  ")[-1] == (
        "password is ignored because the user already exists.; "
        "records 1 (line 2), 2 (line 3), 3 (line 4), 4 (line 5), 5 (line 6), ..."
    )
    assert lines[start + 1].split()[0] == "7"


async def test_the_files_a_run_writes_are_readable_by_their_owner_only(embedded: Deployment, tmp_path):
    """They hold users' personal data; the failed records and an export also password hashes and TOTP secrets."""
    project = await embedded.make_project()
    hashed = "$2b$04$gfLwerl3GiBpgFfuAmfck.Bxn1y20no2FfB9SHzdpb6loeI/1UMZS"
    records = [
        {"email": "ok@example.com", "password": {"type": "bcrypt", "password_hash": hashed}},
        {"email": "broken", "password": {"type": "bcrypt", "password_hash": hashed}},
    ]
    (tmp_path / "users.ndjson").write_bytes(jsonl(records))

    imported = embedded.cli("import", "users.ndjson", *project.args(embedded), "-q", cwd=tmp_path)
    exported = embedded.cli("export", "--format", "ndjson", "-o", "users-out.ndjson", *project.args(embedded), "-q",
                            cwd=tmp_path)  # fmt: skip

    assert (imported.returncode, exported.returncode) == (1, 0), imported.stderr + exported.stderr
    assert hashed.encode() in (tmp_path / "failed.ndjson").read_bytes()
    written = ["report.ndjson", "failed.ndjson", "report.failures.json", "users-out.ndjson"]
    assert {name: stat.S_IMODE((tmp_path / name).stat().st_mode) for name in written} == dict.fromkeys(written, 0o600)


async def test_records_without_the_identifier_point_to_the_login_id_they_have(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    records = [
        {"email": "ok@example.com"},
        {"phone_number": "+447911123456", "name": "Sms One"},
        {"phone_number": "+447911123457", "preferred_username": "smstwo"},
        {"preferred_username": "handle"},
        {"name": "nothing to find me by"},
    ]
    (tmp_path / "users.ndjson").write_bytes(jsonl(records))

    first = embedded.cli("import", "users.ndjson", *project.args(embedded), "-q", cwd=tmp_path)
    command = printed_command(first.stderr, "fix them, then:")
    command[command.index("--identifier") + 1] = "phone_number"
    rerun = run_printed(embedded, command, tmp_path)

    assert first.returncode == 1
    hints = [line for line in first.stderr.splitlines() if line.startswith("hint:")]
    assert hints == [
        "hint: 2 records without email have phone_number: import them with --identifier phone_number",
        "hint: 1 record without email has preferred_username: import it with --identifier preferred_username",
    ]
    assert rerun.returncode == 1, rerun.stderr  # the username-only record and the one without any login id
    assert "hint: 1 record without phone_number has preferred_username" in rerun.stderr
    rows = await embedded.fetch(
        "SELECT normalized_value FROM userio_identity WHERE project_id = $1 AND login_id_key = 'phone'", project.id
    )
    assert {r["normalized_value"] for r in rows} == {"+447911123456", "+447911123457"}


async def test_a_long_message_is_cut_on_the_terminal_and_whole_in_the_summary(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    roles = [f"role{i:04d}" for i in range(3000)]
    (tmp_path / "users.ndjson").write_bytes(jsonl([{"email": "r@example.com", "roles": roles}]))

    result = embedded.cli("import", "users.ndjson", *project.args(embedded), "-q", cwd=tmp_path)
    summary = json.loads((tmp_path / "report.failures.json").read_text())

    assert result.returncode == 1
    (group,) = summary["failures"]
    assert group["example"]["message"].startswith("unknown role keys: " + ", ".join(roles) + "; define them with")
    (line,) = [line for line in result.stderr.splitlines() if "RoleUnknownKeys" in line]
    assert line.endswith(f"{len(group['example']['message']) - 200:,} more characters in the JSON summary)")
    assert len(line) < 300


async def test_phone_format_failures_point_to_phone_region_whose_rerun_imports_them(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    records = [
        {"email": "a@example.com", "phone_number": "020 7946 0958"},
        {"email": "b@example.com", "phone_number": "+44 7911 123456"},
        {"email": "c@example.com", "mfa": {"phone_number": "07911 123458"}},
        {"email": "d@example.com", "zoneinfo": "Mars/Olympus"},
        {"email": "e@example.com", "phone_number": "+4420794609580000"},  # too long: no region helps, no hint
    ]
    (tmp_path / "users.ndjson").write_bytes(jsonl(records))

    first = embedded.cli("import", "users.ndjson", *project.args(embedded), "-q", cwd=tmp_path)
    command = [*printed_command(first.stderr, "fix them, then:"), "--phone-region", "GB"]
    rerun = run_printed(embedded, command, tmp_path)

    assert first.returncode == 1
    hint = (
        "hint: 3 records failed on a phone number in national or spaced form; --phone-region REGION (e.g. GB) turns "
        "such numbers into E.164 before sending"
    )
    assert hint in first.stderr.splitlines()
    assert rerun.returncode == 1, rerun.stderr  # the zoneinfo and the long number are still wrong
    assert "hint:" not in rerun.stderr
    rows = await embedded.fetch(
        "SELECT normalized_value FROM userio_identity WHERE project_id = $1 AND login_id_key = 'phone'", project.id
    )
    assert {r["normalized_value"] for r in rows} == {"+442079460958", "+447911123456"}
    sms = await embedded.fetch(
        "SELECT oob_target FROM userio_authenticator WHERE project_id = $1 AND type = 'oob_otp_sms'", project.id
    )
    assert [r["oob_target"] for r in sms] == ["+447911123458"]
    assert set(await names(embedded, project)) == {"a@example.com", "b@example.com", "c@example.com"}
    warnings = [w["message"] for line in _lines(tmp_path / "report-2.ndjson") for w in line.get("client_warnings", [])]
    assert "mfa.phone_number '07911 123458' sent as '+447911123458' (--phone-region GB)" in warnings


async def test_phone_region_sends_national_and_spaced_numbers_as_e164(deployment: Deployment, tmp_path):
    project = await deployment.make_project()
    records = [
        {"email": "a@example.com", "phone_number": "020 7946 0958"},
        {"email": "b@example.com", "phone_number": "+44 7911 123456"},
        {"email": "c@example.com", "phone_number": "07911 123458"},
        {"email": "d@example.com", "phone_number": "+447911123457"},
        {"email": "e@example.com", "phone_number": "12"},
    ]
    (tmp_path / "users.ndjson").write_bytes(jsonl(records))

    result = deployment.cli("import", "users.ndjson", *project.args(deployment), "--phone-region", "gb", "-q",
                            cwd=tmp_path)  # fmt: skip
    bad_region = deployment.cli("import", "users.ndjson", *project.args(deployment), "--phone-region", "XX",
                                "--report", "x.ndjson", cwd=tmp_path)  # fmt: skip

    assert result.returncode == 1, result.stderr
    rows = await deployment.fetch(
        "SELECT normalized_value FROM userio_identity WHERE project_id = $1 AND login_id_key = 'phone'", project.id
    )
    assert {r["normalized_value"] for r in rows} == {"+442079460958", "+447911123456", "+447911123458", "+447911123457"}
    report = {line["index"]: line for line in _lines(tmp_path / "report.ndjson") if "index" in line}
    assert [len(report[i].get("client_warnings", [])) for i in range(5)] == [1, 1, 1, 0, 0]
    assert report[0]["client_warnings"][0]["message"] == (
        "phone_number '020 7946 0958' sent as '+442079460958' (--phone-region GB)"
    )
    assert report[4]["outcome"] == "failed"
    summary = json.loads((tmp_path / "report.failures.json").read_text())
    assert [(w["kind"], w["count"]) for w in summary["warnings"]] == [("phone_number_converted", 3)]
    assert bad_region.returncode == 2
    assert "--phone-region 'XX' is not a region code" in bad_region.stderr


async def test_one_user_written_differently_is_one_login_id_on_both_sides(deployment: Deployment, tmp_path):
    """The client orders records by the server's own normalization (NFKC, IDNA, E.164), so they apply in order."""
    project = await deployment.make_project()
    filler = [{"email": f"fill{i}@example.com", "name": "x" * 200} for i in range(400)]
    records = [{"email": "Ada@BÜCHER.de", "name": "first"}, *filler, {"email": "ada@bücher.de", "name": "second"}]
    (tmp_path / "users.ndjson").write_bytes(jsonl(records))

    result = deployment.cli(
        "import", "users.ndjson", *project.args(deployment), "--upsert", "--identifier", "email",
        "--max-request-bytes", "5000", "--in-flight", "16", "-q", cwd=tmp_path,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    report = {line["index"]: line for line in _lines(tmp_path / "report.ndjson") if "index" in line}
    assert (report[0]["outcome"], report[401]["outcome"]) == ("inserted", "updated")
    assert report[0]["task"] != report[401]["task"]
    assert (await names(deployment, project))["ada@xn--bcher-kva.de"] == "second"


# Converters.


async def test_converters_warn_for_what_they_cannot_carry_and_say_it_in_the_summary(embedded: Deployment, tmp_path):
    project = await embedded.make_project()

    result = embedded.cli(
        "import", str(ROOT / "docs" / "samples" / "auth0-users.json"), "--from", "auth0", "--dry-run",
        *project.args(embedded), "-q", cwd=tmp_path,
    )  # fmt: skip
    summary = json.loads((tmp_path / "report.failures.json").read_text())
    report = {line["index"]: line for line in _lines(tmp_path / "report.ndjson") if "index" in line}

    warnings = {w["kind"]: w for w in summary["warnings"]}
    # Every hash and the Google identity are carried now (issue 28); what Auth0 cannot give, and every member
    # dropped, is counted by name.
    assert "password_not_carried" not in warnings and "social_identity_not_carried" not in warnings
    assert warnings["mfa_not_carried"]["count"] == 1
    assert warnings["dropped:created_at"]["count"] == 11
    assert warnings["dropped:last_login"]["count"] == 4
    assert report[6]["record"]["identities"][0]["provider_alias"] == "google"
    assert "dropped:created_at; e.g. line 1:" in result.stderr


async def test_import_from_supabase_and_clerk_exports(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    fixtures = Path(__file__).parent / "fixtures"

    supabase = embedded.cli("import", str(fixtures / "supabase_users.csv"), "--from", "supabase",
                            *project.args(embedded), "-q", "--report", "s.ndjson", cwd=tmp_path)  # fmt: skip
    # Clerk's users update those Supabase brought (by email): they keep Supabase's ids.
    clerk = embedded.cli("import", str(fixtures / "clerk_users.csv"), "--from", "clerk", "--upsert", "--new-ids",
                         *project.args(embedded), "-q", "--report", "c.ndjson", "--failed", "cf.csv", cwd=tmp_path)  # fmt: skip

    assert supabase.returncode == 1  # the phone-only user has no email, the identifier
    fix = printed_command(supabase.stderr, "fix them, then:")
    fix[fix.index("--identifier") + 1] = "phone_number"
    phone_only = run_printed(embedded, fix, tmp_path)
    assert phone_only.returncode == 0, phone_only.stderr
    assert clerk.returncode == 1  # ken signs in by username and phone: no email, the identifier
    rows = await embedded.fetch(
        "SELECT u.is_disabled, u.custom_attributes, a.password_hash, i.normalized_value FROM userio_user u"
        " JOIN userio_identity i ON i.user_id = u.id"
        " LEFT JOIN userio_authenticator a ON a.user_id = u.id AND a.type = 'password'"
        " WHERE u.project_id = $1",
        project.id,
    )
    by_login = {r["normalized_value"]: r for r in rows}
    assert by_login["+447911123456"]["password_hash"] is None
    assert bool(by_login["banned@example.com"]["is_disabled"]) is True
    assert by_login["ada@example.com"]["password_hash"].startswith("$2b$04$")  # Supabase's, then Clerk's: same hash
    assert json.loads(by_login["ada@example.com"]["custom_attributes"])["clerk_user_id"].startswith("user_")
    assert "+14155550104" not in by_login
    s_summary = json.loads((tmp_path / "s.failures.json").read_text())
    c_summary = json.loads((tmp_path / "c.failures.json").read_text())
    assert {w["kind"]: w["count"] for w in s_summary["warnings"]} == {
        "dropped:created_at": 5,
        "dropped:last_sign_in_at": 1,
    }
    assert {w["kind"]: w["count"] for w in c_summary["warnings"]} == {"extra_login_id_not_carried": 1}


async def test_users_move_between_projects_with_from_userio(deployment: Deployment, tmp_path):
    source, target = await deployment.make_project(), await deployment.make_project()
    workload = make_workload(tmp_path / "users.ndjson", 200, tag="move.")
    assert deployment.cli("import", "users.ndjson", *source.args(deployment), "-q", cwd=tmp_path).returncode == 1
    exported = deployment.cli("export", "--format", "ndjson", "-o", "a.ndjson", *source.args(deployment), "-q",
                              cwd=tmp_path)  # fmt: skip
    assert exported.returncode == 0, exported.stderr

    moved = deployment.cli("import", "a.ndjson", "--from", "userio", *target.args(deployment), "-q",
                           "--report", "m.ndjson", "--failed", "m-failed.ndjson", cwd=tmp_path)  # fmt: skip
    again = deployment.cli("export", "--format", "ndjson", "-o", "b.ndjson", *target.args(deployment), "-q",
                           cwd=tmp_path)  # fmt: skip

    assert moved.returncode == 0, moved.stderr
    assert again.returncode == 0, again.stderr

    def comparable(path: Path) -> dict[str, dict]:
        documents = {}
        for line in path.read_text().splitlines():
            document = json.loads(line)
            for key in ("sub", "created_at", "updated_at", "last_login_at", "identities"):
                document.pop(key)
            document["custom_attributes"].pop("userio_user_id", None)
            documents[document["email"]] = document
        return documents

    before, after = comparable(tmp_path / "a.ndjson"), comparable(tmp_path / "b.ndjson")
    assert len(before) == workload.inserted
    assert after == before
    summary = json.loads((tmp_path / "m.failures.json").read_text())
    assert {w["kind"]: w["count"] for w in summary["warnings"]} == {"password_not_carried": len(before)}


def test_the_guide_and_readme_sample_files_exist():
    guide = (ROOT / "docs" / "migration-guide.md").read_text() + (ROOT / "README.md").read_text()
    named = {word.strip("`'\"(),:.") for word in guide.split() if "docs/samples/" in word} - {"docs/samples/"}

    assert named >= {
        "docs/samples/users.ndjson",
        "docs/samples/auth0-users.json",
        "docs/samples/supabase-users.csv",
        "docs/samples/clerk-users.csv",
        "docs/samples/userio-export.ndjson",
    }
    for name in named:
        assert (ROOT / name).is_file(), name


# The server's side of the loop.


async def test_export_through_host_without_a_configured_base_url_keeps_the_port(direct_deployment, tmp_path):
    deployment: Deployment = direct_deployment
    project = await deployment.make_project()
    (tmp_path / "users.ndjson").write_bytes(jsonl([{"email": "a@example.com"}]))
    assert deployment.cli("import", "users.ndjson", *project.args(deployment), "-q", cwd=tmp_path).returncode == 0

    result = deployment.cli("export", "--format", "csv", "--field", "/email", "-o", "users.csv",
                            *project.args(deployment), "-q", cwd=tmp_path)  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert (tmp_path / "users.csv").read_text().splitlines() == ["email", "a@example.com"]
    signed = run_userio(deployment.env, "admin-token", "--project", project.id)
    assert signed.returncode == 0, signed.stderr
    token = signed.stdout.strip()
    context = ssl.create_default_context(cafile=str(deployment.cacert))
    headers = {"Authorization": f"Bearer {token}", "Host": project.host}
    async with httpx.AsyncClient(base_url=deployment.url, verify=context, headers=headers) as client:
        created = await client.post("/_api/admin/users/export", json={"format": "ndjson"})
        task_id = created.json()["result"]["id"]
        deadline = time.monotonic() + 60
        while (status := (await client.get(f"/_api/admin/users/export/{task_id}")).json()["result"])[
            "status"
        ] != "completed":
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
    port = deployment.url.rsplit(":", 1)[1]
    assert status["download_url"].startswith(f"https://{project.host}:{port}/")


async def test_readme_ada_signs_in_with_her_password_and_last_login_at_is_written(deployment: Deployment, tmp_path):
    project = await deployment.make_project()
    client = run_userio(deployment.env, "client", "create", "--project", project.id, "--client-id", "web")
    assert client.returncode == 0, client.stderr
    imported = deployment.cli("import", str(ROOT / "docs" / "samples" / "users.ndjson"), "--phone-region", "GB",
                              *project.args(deployment), "-q", cwd=tmp_path)  # fmt: skip
    assert imported.returncode == 1, imported.stderr  # the sample keeps a few broken records to show the summary

    context = ssl.create_default_context(cafile=str(deployment.cacert))
    async with httpx.AsyncClient(base_url=deployment.url, verify=context, headers={"Host": project.host}) as client:
        signed_in = await client.post(
            "/oauth2/token",
            data={"grant_type": "password", "username": "ada@example.com", "password": "correct horse",
                  "client_id": "web", "scope": "openid"},
        )  # fmt: skip
    exported = deployment.cli("export", "--format", "ndjson", "-o", "users.ndjson", *project.args(deployment), "-q",
                              cwd=tmp_path)  # fmt: skip

    assert signed_in.status_code == 200, signed_in.text
    documents = {d["email"]: d for d in map(json.loads, (tmp_path / "users.ndjson").read_text().splitlines())}
    assert documents["ada@example.com"]["last_login_at"] is not None
    assert documents["grace@example.com"]["last_login_at"] is None
    assert documents["grace@example.com"]["phone_number"] == "+442079460958"
    assert exported.returncode == 0


# Hooks from the client.


async def test_hooks_push_and_test_print_the_claims_added(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    client = run_userio(embedded.env, "client", "create", "--project", project.id, "--client-id", "web")
    assert client.returncode == 0, client.stderr
    (tmp_path / "u.ndjson").write_bytes(jsonl([{"email": "ada@example.com", "custom_attributes": {"plan": "pro"}}]))
    assert embedded.cli("import", "u.ndjson", *project.args(embedded), "-q", cwd=tmp_path).returncode == 0
    user_id = next(line["user_id"] for line in _lines(tmp_path / "report.ndjson") if "user_id" in line)
    hook = ROOT / "plugins" / "add-user-attributes-to-jwt.ts"

    pushed = embedded.cli("hooks", "push", str(hook), *project.args(embedded), cwd=tmp_path)
    tested = embedded.cli("hooks", "test", "--user", user_id, "--client-id", "web", *project.args(embedded),
                          cwd=tmp_path)  # fmt: skip

    assert pushed.returncode == 0, pushed.stderr
    assert "saved 1 oidc.jwt.pre_create hook" in pushed.stderr
    assert tested.returncode == 0, tested.stderr
    claims = json.loads(tested.stdout)
    assert claims["custom_attributes"] == {"plan": "pro"}
    assert claims["standard_attributes"]["email"] == "ada@example.com"


async def test_hooks_push_sets_the_allowlist_and_test_runs_a_password_migration_sample(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    hook = tmp_path / "migrate.ts"
    old = OldSystem()
    try:
        hook.write_text(MIGRATION_HOOK % old.origin)
        secret = embedded.cli("hooks", "secrets", "set", "OLD_KEY", "--value", "old-key-123456",
                              *project.args(embedded), cwd=tmp_path)  # fmt: skip
        assert secret.returncode == 0, secret.stderr
        event = ["--event", "user.password_migration"]
        refused_push = embedded.cli("hooks", "push", str(hook), *event, *project.args(embedded), cwd=tmp_path)
        refused = embedded.cli("hooks", "test", *event, "--login-id", "ann@example.com", "--password",
                               "right-pw-123", *project.args(embedded), cwd=tmp_path)  # fmt: skip
        pushed = embedded.cli("hooks", "push", str(hook), *event, "--allow", old.origin, *project.args(embedded),
                              cwd=tmp_path)  # fmt: skip
        tested = embedded.cli("hooks", "test", *event, "--login-id", "ann@example.com", "--password",
                              "right-pw-123", *project.args(embedded), cwd=tmp_path)  # fmt: skip
    finally:
        old.close()

    assert refused_push.returncode == 0, refused_push.stderr
    assert refused.returncode == 1
    assert f"console.error: fetch refused: {old.origin} is not on the project's fetch allowlist" in refused.stderr
    assert pushed.returncode == 0, pushed.stderr
    assert f"fetch allowlist: {old.origin}" in pushed.stderr
    assert tested.returncode == 0, tested.stderr
    assert json.loads(tested.stdout) == {
        "email": "ann@example.com",
        "name": "Ann",
        "custom_attributes": {"old_id": "old-1"},
    }
    assert [seen["username"] for seen in old.seen] == ["ann@example.com"]
    assert "right-pw-123" not in tested.stdout + tested.stderr
    assert await embedded.user_count(project) == 0  # a test creates nobody


async def test_hooks_test_of_a_token_event_asks_for_a_user_and_a_client(embedded: Deployment, tmp_path):
    project = await embedded.make_project()

    result = embedded.cli("hooks", "test", "--user", "u1", *project.args(embedded), cwd=tmp_path)

    assert result.returncode == 2
    assert "oidc.jwt.pre_create runs against a user and a client: give --user and --client-id" in result.stderr


async def test_records_typed_on_a_terminal_are_asked_for_and_imported(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        embedded.command("import", "-", *project.args(embedded), "-q"), cwd=tmp_path, env=embedded.env,
        stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    os.close(terminal)
    try:
        assert process.stderr is not None
        first = await asyncio.wait_for(asyncio.to_thread(process.stderr.readline), 60)
        os.write(controller, b'{"email": "typed@example.com"}\n\x04')
        _, rest = await asyncio.to_thread(process.communicate, None, 120)
    finally:
        process.kill()
        os.close(controller)

    assert first == b"reading records from the terminal, one JSON object a line; end with Ctrl-D\n"
    assert process.returncode == 0, rest
    assert await names(embedded, project) == {"typed@example.com": None}


async def test_a_secret_is_asked_for_without_echo_on_a_terminal_and_never_empty(embedded: Deployment, tmp_path):
    """A bare read of a terminal waited for Ctrl-D without a word; empty standard input set an empty secret."""
    project = await embedded.make_project()
    args = project.args(embedded)
    controller, terminal = pty.openpty()
    # A new session whose first terminal opened becomes its controlling one (what getpass writes to). Not with a
    # preexec_fn: forking the multi-threaded test process and running Python before exec can deadlock the child.
    owner = (
        "import os, sys; t = os.open(sys.argv[1], os.O_RDWR); [os.dup2(t, i) for i in (0, 1, 2)]; "
        "os.execv(sys.argv[2], sys.argv[2:])"
    )
    command = embedded.command("hooks", "secrets", "set", "TTY_KEY", *args)
    process = subprocess.Popen(
        [sys.executable, "-c", owner, os.ttyname(terminal), *command],
        cwd=tmp_path, env=embedded.env, start_new_session=True,
    )  # fmt: skip
    seen = b""
    try:  # this end stays open throughout: a terminal no process holds answers reads with EIO
        deadline = time.monotonic() + 60
        while b"(not shown)" not in seen:
            assert time.monotonic() < deadline, f"no prompt in 60 s: {seen!r}"
            if select.select([controller], [], [], 0.5)[0]:
                seen += os.read(controller, 4096)
        os.write(controller, b"tty-s3cret\n")
        code = await asyncio.to_thread(process.wait, 120)
        while select.select([controller], [], [], 0.5)[0]:  # what it wrote last
            seen += os.read(controller, 4096)
    finally:
        process.kill()
        os.close(controller)
        os.close(terminal)
    empty = embedded.cli("hooks", "secrets", "set", "EMPTY_KEY", *args, cwd=tmp_path, stdin=b"\n")
    listed = embedded.cli("hooks", "secrets", "list", *args, cwd=tmp_path)

    assert code == 0, seen
    assert b"value of TTY_KEY (not shown)" in seen and b"secret TTY_KEY set" in seen
    assert b"tty-s3cret" not in seen
    assert empty.returncode == 2
    assert "the value of EMPTY_KEY is empty: pipe it on standard input or pass --value" in empty.stderr
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["TTY_KEY"]


async def test_hooks_secrets_versions_and_rollback_from_the_client(embedded: Deployment, tmp_path):
    from userio_core.admin_keys import sign_admin_token

    project = await embedded.make_project()
    args = project.args(embedded)
    first = ROOT / "plugins" / "add-user-attributes-to-jwt.ts"
    second = tmp_path / "second.ts"
    second.write_text("export default async function (e: any): Promise<any> {\n  return { is_allowed: true };\n}\n")

    set_secret = embedded.cli("hooks", "secrets", "set", "CRM_KEY", *args, cwd=tmp_path, stdin=b"s3cret-value\n")
    listed = embedded.cli("hooks", "secrets", "list", *args, cwd=tmp_path)
    deleted = embedded.cli("hooks", "secrets", "delete", "CRM_KEY", *args, cwd=tmp_path)
    after_delete = embedded.cli("hooks", "secrets", "list", *args, cwd=tmp_path)
    assert embedded.cli("hooks", "push", str(first), *args, cwd=tmp_path).returncode == 0
    assert embedded.cli("hooks", "push", str(second), *args, cwd=tmp_path).returncode == 0
    versions = embedded.cli("hooks", "versions", *args, cwd=tmp_path)
    numbers = [int(line.split("\t")[0]) for line in versions.stdout.splitlines()]
    rolled = embedded.cli("hooks", "rollback", str(numbers[1]), *args, cwd=tmp_path)
    again = embedded.cli("hooks", "versions", *args, cwd=tmp_path)
    same = embedded.cli("hooks", "diff", str(numbers[1]), *args, cwd=tmp_path)
    changed = embedded.cli("hooks", "diff", str(numbers[1]), str(numbers[0]), *args, cwd=tmp_path)
    missing = embedded.cli("hooks", "diff", "999", *args, cwd=tmp_path)

    assert (set_secret.returncode, listed.returncode, deleted.returncode) == (0, 0, 0), set_secret.stderr
    assert listed.stdout.split("\t")[0] == "CRM_KEY"
    assert after_delete.stdout == ""
    for result in (set_secret, listed, deleted, after_delete):
        assert "s3cret" not in result.stdout + result.stderr
    assert numbers == sorted(numbers, reverse=True)
    assert rolled.returncode == 0, rolled.stderr
    assert f"rolled back to version {numbers[1]}" in rolled.stderr
    assert len(again.stdout.splitlines()) == len(numbers) + 1
    assert (same.returncode, same.stdout) == (0, ""), same.stderr
    assert changed.returncode == 1, changed.stderr
    diff_lines = changed.stdout.splitlines()
    assert diff_lines[:2] == [f"--- version {numbers[1]}", f"+++ version {numbers[0]}"]
    assert "+  return { is_allowed: true };" in diff_lines
    assert f"-{first.read_text().splitlines()[0]}" in diff_lines
    assert missing.returncode not in (0, 1) and "999" in missing.stderr, (missing.returncode, missing.stderr)
    token = sign_admin_token((embedded.home / f"{project.id}-admin-key.pem").read_text(), project.id)
    context = ssl.create_default_context(cafile=str(embedded.cacert))
    headers = {"Authorization": f"Bearer {token}", "Host": project.host}
    async with httpx.AsyncClient(base_url=embedded.url, verify=context, headers=headers) as client:
        saved = (await client.get("/_api/admin/hooks")).json()["result"]["hooks"]
    assert [hook["source"] for hook in saved] == [first.read_text()]
