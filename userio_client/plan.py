"""An import's options resolved (flags, the resumed report, the request object), its files checked before sending."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from userio_client.client import TransferError
from userio_client.phones import PhoneFixer
from userio_client.reader import InputError
from userio_client.records import InputPass, open_input, scan_input
from userio_client.report import ResumeState, read_report
from userio_client.sources import (
    SOURCE_TITLES,
    ConversionError,
    Source,
    firebase_hash_config,
    guess_source,
    source_with,
)
from userio_client.summary import failures_path

if TYPE_CHECKING:
    from userio_client.client import Connection

__all__ = [
    "DEFAULT_IN_FLIGHT",
    "DEFAULT_MAX_REQUEST_BYTES",
    "ImportPlan",
    "ImportSettings",
    "from_hint",
    "input_pass",
    "plan_import",
    "source_for",
]

DEFAULT_MAX_REQUEST_BYTES: Final = 500_000
"""500 KB, decimal; the server answers 413 above it (docs/reference.md#limits)."""
DEFAULT_IN_FLIGHT: Final = 24
"""Tasks outstanding at once: enough queued work that every worker stays busy while earlier tasks finish
(bench/cli_import.py: with 4 the two workers waited for the client between tasks; the server queues them)."""


@dataclass
class ImportSettings:
    """What one `litestar userio import` run was asked to do (None: not given on the command line)."""

    path: Path | None
    """The input file; None reads standard input."""
    source: str | None = None
    """`--from`: a key of `sources.SOURCES`."""
    identifier: str | None = None
    upsert: bool | None = None
    dry_run: bool | None = None
    report: Path = Path("report.ndjson")
    failed: Path | None = None
    resume: bool = False
    """Continue the run recorded in `report`."""
    in_flight: int | None = None
    max_request_bytes: int | None = None
    phone_region: str | None = None
    """`--phone-region`: national and spaced numbers become E.164 for this region before sending."""
    firebase_hash_config: Path | None = None
    """`--firebase-hash-config`: the project's scrypt parameters, put into every converted Firebase password."""
    new_ids: bool | None = None
    """`--new-ids`: converted users get new ids instead of keeping the old system's as `sub`."""
    age_identity: Path | None = None
    """`--age-identity`: the age key file that decrypts a lossless export (`--from userio`) as it is read."""


@dataclass
class ImportPlan:
    """A run with every option resolved (flags, then the resumed report, then the request object, then defaults)."""

    settings: ImportSettings
    identifier: str
    upsert: bool
    dry_run: bool
    source: str | None
    failed: Path
    total: int | None
    header: dict[str, Any]
    resume: ResumeState | None
    stdin: InputPass | None = None
    """Standard input, already opened (its request options had to be read before the header)."""
    in_flight: int = DEFAULT_IN_FLIGHT
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    phone_region: str | None = None
    summary_path: Path = Path("report.failures.json")
    looks_like: str | None = None
    """Without `--from`: the source whose export the input looks like (`sources.guess_source`), for a hint."""
    age_identities: list[Any] | None = None
    """The identities that decrypt the input (a lossless export), from `--age-identity`; None: plain input."""


def source_for(source: str | None, hash_config_path: str | None, new_ids: bool = False) -> Source | None:
    """The `--from` source of a run, with the Firebase hash config file's parameters when one is given.

    With `new_ids` (`--new-ids`) the converter does not keep the old system's ids as `sub`.

    The one place that turns the two flags into a converter: the import and `--check-passwords` both take it,
    so a check verifies exactly the password objects the import sends.
    """
    if hash_config_path is not None and source != "firebase":
        raise TransferError("--firebase-hash-config goes with --from firebase")
    if new_ids and source is None:
        raise TransferError("--new-ids goes with --from (records of your own carry their sub, or none)")
    if source is None:
        return None
    if hash_config_path is None:
        return source_with(source, new_ids=new_ids)
    try:
        text = Path(hash_config_path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TransferError(f"cannot read the Firebase hash config {hash_config_path}: {exc}") from exc
    try:
        return source_with(source, firebase_hash_config=firebase_hash_config(text), new_ids=new_ids)
    except ConversionError as exc:
        raise TransferError(f"{hash_config_path}: {exc}") from exc


def input_pass(
    path: Path,
    source: Source | None,
    upsert: Callable[[], bool],
    phone_region: str | None,
    age_identities: list[Any] | None = None,
) -> InputPass:
    """The pass over a file that yields the records as the import sends them (decrypted, converted, phones fixed)."""
    phones = PhoneFixer(phone_region) if phone_region else None
    return InputPass(open_input(path, age_identities), source, upsert, phones=phones)


def _looks_like(path: Path) -> str | None:
    try:
        with path.open("rb") as stream:
            return guess_source(stream.read(1 << 16))
    except OSError:
        return None


def from_hint(path: Path | str, source: str) -> str:
    """The hint for a file sent without `--from` that looks like `source`'s export."""
    return f"hint: {path} looks like {SOURCE_TITLES[source]}: import it with --from {source}"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError as exc:
        raise TransferError(f"cannot read {path}: {exc.strerror}") from exc


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def _taken(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def plan_import(settings: ImportSettings, *, connection: Connection) -> ImportPlan:
    """Check the input, the report and the options before anything is sent; raise on any problem.

    A resumed run takes every setting from its report's header (the report, failed and summary files, the
    source, identifier, upsert, dry run, phone region, request size); a new run never writes into a file
    that has content, so nothing one run wrote is overwritten or appended to by another.
    """
    from userio_client.phones import check_region

    resume: ResumeState | None = None
    previous: dict[str, Any] = {}
    if settings.resume:
        resume = read_report(settings.report)
        previous = resume.header
    elif _taken(settings.report):
        raise TransferError(
            f"{settings.report} exists from an earlier run: pass --resume {settings.report} to continue that run, "
            "or --report with a new file name"
        )

    def resolved(name: str, given: Any, default: Any) -> Any:
        if resume is None:
            return given if given is not None else default
        recorded = previous.get(name, default)
        if given is not None and given != recorded:
            flag = {"from": "--from", "dry_run": "--dry-run"}.get(name, "--" + name.replace("_", "-"))
            raise TransferError(f"{settings.report} was written with {flag} {recorded!r}: resume with the same options")
        return recorded

    source = resolved("from", settings.source, None)
    given_config = str(settings.firebase_hash_config) if settings.firebase_hash_config is not None else None
    hash_config_path = resolved("firebase_hash_config", given_config, None)
    new_ids = bool(resolved("new_ids", True if settings.new_ids else None, False))
    given_identity = str(settings.age_identity) if settings.age_identity is not None else None
    identity_path = resolved("age_identity", given_identity, None)
    age_identities = None
    if identity_path is not None:
        from userio_client.decryption import load_identities

        if source != "userio":
            raise TransferError("--age-identity goes with --from userio (a lossless export)")
        if settings.path is None:
            raise TransferError("an encrypted export is read from a file, not standard input")
        age_identities = load_identities(Path(identity_path))
    elif settings.path is not None:
        from userio_client.decryption import is_age_file

        if is_age_file(settings.path):
            raise TransferError(
                f"{settings.path} is an age-encrypted file (a lossless export):"
                " import it with --from userio --age-identity KEYFILE"
            )
    # A lossless export holds import records already: they are sent as they are, not converted.
    converter = None if age_identities is not None else source_for(source, hash_config_path, new_ids)
    phone_region = resolved("phone_region", settings.phone_region, None)
    if phone_region is not None:
        phone_region = check_region(phone_region)
    in_flight = int(resolved("in_flight", settings.in_flight, DEFAULT_IN_FLIGHT))
    max_request_bytes = int(resolved("max_request_bytes", settings.max_request_bytes, DEFAULT_MAX_REQUEST_BYTES))
    total: int | None = None
    stdin: InputPass | None = None
    size: int | None = None
    looks_like: str | None = None
    overridden = frozenset(
        k
        for k, v in (("identifier", settings.identifier), ("upsert", settings.upsert), ("dry_run", settings.dry_run))
        if v is not None or resume is not None
    )
    if settings.path is not None:
        size = _size(settings.path)
        if resume is not None and previous.get("input_size") not in (None, size):
            raise TransferError(
                f"{settings.path} changed since {settings.report} was written "
                f"({previous.get('input_size')} bytes then, {size} now): resuming would misplace records"
            )
        looks_like = _looks_like(settings.path) if source is None else None
        try:
            scanned = scan_input(settings.path, converter, phone_region, age_identities)
        except InputError as exc:
            if looks_like is not None:
                exc.message += f"; {from_hint(settings.path, looks_like)}"
            raise
        total, layout, options = scanned.records, scanned.layout, scanned.options
    else:
        stdin = InputPass(
            sys.stdin.buffer,
            converter,
            lambda: upsert,  # resolved below, before the first record is converted
            late_options=False,
            ignored=overridden,
            phones=PhoneFixer(phone_region) if phone_region else None,
        )
        layout, options = stdin.layout, stdin.options
    identifier = resolved("identifier", settings.identifier, options.identifier or "email")
    upsert: bool = resolved("upsert", settings.upsert, bool(options.upsert))
    dry_run = resolved("dry_run", settings.dry_run, bool(options.dry_run))
    suffix = ".csv" if layout == "csv" else ".ndjson"
    if resume is not None and previous.get("failed"):
        if settings.failed is not None and not _same_file(settings.failed, Path(previous["failed"])):
            raise TransferError(f"{settings.report} was written with --failed {previous['failed']}: leave out --failed")
        failed = Path(previous["failed"])
    else:
        failed = settings.failed or Path(f"failed{suffix}")
    summary_path = Path(previous["failures"]) if resume is not None and previous.get("failures") else None
    summary_path = summary_path or failures_path(settings.report)
    if resume is None:
        for path, flag in ((failed, "--failed"), (summary_path, "--report")):
            if _taken(path):
                raise TransferError(
                    f"{path} exists from an earlier run: pass {flag} with a new file name (a run never overwrites"
                    " another run's files)"
                )
    for other, role in ((settings.report, "report"),) + (((settings.path, "input"),) if settings.path else ()):
        if _same_file(failed, other):
            raise TransferError(f"the failed file {failed} would overwrite the {role}: pass another --failed")
    if settings.path is not None and _same_file(settings.report, settings.path):
        raise TransferError(f"the report {settings.report} would overwrite the input: pass another --report")
    header = {
        "version": 1,
        # Names this migration's requests (Idempotency-Key): a resumed run sends an uncertain request again
        # under the same key, and the server answers the task the lost answer was about.
        "run_id": str(resume.header.get("run_id") or uuid.uuid4().hex) if resume is not None else uuid.uuid4().hex,
        "input": str(settings.path) if settings.path is not None else "-",
        "input_size": size,
        "layout": layout,
        "records": total,
        "from": source,
        "identifier": identifier,
        "upsert": upsert,
        "dry_run": dry_run,
        "phone_region": phone_region,
        "firebase_hash_config": hash_config_path,
        "new_ids": new_ids,
        "age_identity": str(Path(identity_path).resolve()) if identity_path is not None else None,
        "report": str(settings.report),
        "failed": str(failed.resolve()),
        "failures": str(summary_path.resolve()),
        "in_flight": in_flight,
        "max_request_bytes": max_request_bytes,
        "url": connection.url,
        "project": connection.project,
        "host": connection.host,
        "key": str(connection.key_path) if connection.key_path is not None else None,
        "cacert": str(connection.cacert) if connection.cacert is not None else None,
        "insecure": connection.insecure,
        "started_at": datetime.now(UTC).isoformat(),
        "resumed": resume is not None,
    }
    return ImportPlan(
        settings,
        identifier,
        upsert,
        dry_run,
        source,
        failed,
        total,
        header,
        resume,
        stdin,
        in_flight=in_flight,
        max_request_bytes=max_request_bytes,
        phone_region=phone_region,
        summary_path=summary_path,
        looks_like=looks_like,
        age_identities=age_identities,
    )
