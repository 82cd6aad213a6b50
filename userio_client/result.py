"""How an import run ended: its result, and the closing lines on stderr that say so and what to run next."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from userio_client.plan import from_hint
from userio_client.progress import format_count
from userio_client.report import OUTCOMES
from userio_client.summary import failures_path

if TYPE_CHECKING:
    from pathlib import Path

    from userio_client.client import Connection
    from userio_client.plan import ImportPlan
    from userio_client.summary import FailureSummary

__all__ = ["ImportResult", "describe_result", "fix_command"]


@dataclass
class ImportResult:
    """How a run ended."""

    total: int
    counts: dict[str, int]
    elapsed: float
    sent: int
    """Records sent (and completed) in this run."""
    report: Path
    failed: Path
    dry_run: bool
    failures: FailureSummary
    summary_path: Path
    done_before: int = 0
    """A resumed run: records the earlier run(s) had an outcome for (in `counts` too, not sent again)."""
    kept_ids: int = 0
    """Records this run sent with the old system's id as `sub` (`--from` without `--new-ids`)."""

    @property
    def exit_code(self) -> int:
        """0 when nothing failed, 1 when some records failed."""
        return 1 if self.counts["failed"] else 0


def _next_free(path: Path) -> Path:
    """`report.ndjson` -> `report-2.ndjson` (or -3, ...): a name no earlier run wrote."""
    stem, suffix = path.stem, path.suffix
    base = stem.rsplit("-", 1)[0] if stem.rsplit("-", 1)[-1].isdigit() and "-" in stem else stem
    number = 2
    while True:
        candidate = path.with_name(f"{base}-{number}{suffix}")
        if not candidate.exists() and not failures_path(candidate).exists():
            return candidate
        number += 1


def fix_command(result: ImportResult, plan: ImportPlan, connection: Connection) -> str:
    """The command that imports the fixed failed file with this run's settings, into fresh output files."""
    report = _next_free(result.report)
    failed = _next_free(result.failed)
    args = ["userio", "import", str(result.failed), *connection.args()]
    if plan.source:
        args += ["--from", plan.source]
    args += ["--identifier", plan.identifier, "--upsert" if plan.upsert else "--no-upsert"]
    if plan.dry_run:
        args.append("--dry-run")
    if plan.phone_region:
        args += ["--phone-region", plan.phone_region]
    if plan.header.get("firebase_hash_config"):
        args += ["--firebase-hash-config", str(plan.header["firebase_hash_config"])]
    if plan.header.get("new_ids"):
        args.append("--new-ids")
    args += ["--report", str(report), "--failed", str(failed)]
    return shlex.join(args)


def _id_hints(failures: FailureSummary) -> list[str]:
    """Where the old ids the converter kept as `sub` made records fail: `--new-ids` is the way round."""
    hints = []
    groups = failures.failures.items()
    taken = sum(g.count for (reason, _, _), g in groups if reason == "DuplicatedUserID")
    other = sum(g.count for (_, location, kind), g in groups if (location, kind) == ("/sub", "const"))
    if taken:
        hints.append(
            f"hint: {format_count(taken)} record{'' if taken == 1 else 's'} failed because the old id is taken as a"
            " user id in this deployment; the printed command with --new-ids gives them new ids"
        )
    if other:
        hints.append(
            f"hint: {format_count(other)} record{'' if other == 1 else 's'} update a user whose id is not the old"
            " system's (ids never change); the printed command with --new-ids updates them by login id alone"
        )
    return hints


def describe_result(result: ImportResult, plan: ImportPlan, connection: Connection) -> list[str]:
    """The closing lines on stderr: totals, failures and warnings grouped, where the files are, what next."""
    counts = result.counts
    rate = result.sent / result.elapsed if result.elapsed > 0 else 0.0
    verb = "dry run (nothing was written):" if result.dry_run else "import done:"
    outcome = ", ".join(f"{format_count(counts[name])} {name}" for name in OUTCOMES)
    lines = [
        f"{verb} {format_count(result.total)} record{'' if result.total == 1 else 's'}, {outcome}; "
        f"{format_count(result.sent)} sent in {result.elapsed:.1f} s ({format_count(rate)} records/s)",
    ]
    if plan.resume is not None:
        lines.append(
            f"resumed: the counts cover the whole file; {format_count(result.done_before)} record"
            f"{'' if result.done_before == 1 else 's'} had their outcome from the earlier run (read from its report,"
            f" not sent again), {format_count(result.sent)} were sent by this run"
        )
    if kept := result.kept_ids:
        lines.append(
            f"ids: {format_count(kept)} record{'' if kept == 1 else 's'} sent with the old system's id as sub (the"
            " user's id here: the host's rows that point at it still do); --new-ids gives every user a new id"
        )
    lines += result.failures.describe()
    if plan.looks_like is not None and counts["failed"]:
        lines.append(from_hint(plan.settings.path or "the input", plan.looks_like))
    if not plan.phone_region and (phones := result.failures.national_phones):
        lines.append(
            f"hint: {format_count(phones)} record{'' if phones == 1 else 's'} failed on a phone number in national "
            "or spaced form; --phone-region REGION (e.g. GB) turns such numbers into E.164 before sending"
        )
    for attribute, count in sorted(result.failures.other_identifiers.items(), key=lambda item: -item[1]):
        lines.append(
            f"hint: {format_count(count)} record{'' if count == 1 else 's'} without {plan.identifier} "
            f"{'has' if count == 1 else 'have'} {attribute}: import {'it' if count == 1 else 'them'} with "
            f"--identifier {attribute}"
        )
    if plan.source and not plan.header.get("new_ids"):
        lines += _id_hints(result.failures)
    lines.append(f"report: {result.report}; failures and warnings grouped: {result.summary_path}")
    if counts["failed"]:
        lines.append(f"failed records, as read: {result.failed}; fix them, then:")
        lines.append(f"  {fix_command(result, plan, connection)}")
    return lines
