"""`userio import` and `userio export`: the client side of the bulk APIs, from a terminal.

Registered on the `userio` console script (`main.py`). Kept light at import time: the HTTP client, rich and
the readers load only when a command runs.

Exit codes: 0 all good; 1 some records failed (import) or the download did not match the server's checksum
(export); 2 a usage, input, connection or server error (one line on stderr); 130 interrupted.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shlex
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from userio_client.profiles import DEFAULT_PROJECT, DEFAULT_URL

if TYPE_CHECKING:
    from userio_client.client import Connection
    from userio_client.plan import ImportPlan
    from userio_client.profiles import ConnectionSettings
    from userio_client.progress import ImportProgress

__all__ = ["changes_command", "connection_options", "export_command", "import_command", "resume_command"]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_INTERRUPTED = 130


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    raise click.exceptions.Exit(code)


def connection_options(command: F) -> F:
    """The options every command that talks to a server shares (each also from USERIO_* or a profile)."""
    options = [
        click.option("--profile", help="A table of ~/.config/userio/profiles.toml (env USERIO_PROFILE) [default]."),
        click.option("--url", help=f"The server (env USERIO_URL) [default: {DEFAULT_URL}]."),
        click.option(
            "--project", help=f"Project id, the admin token's aud (env USERIO_PROJECT) [default: {DEFAULT_PROJECT}]."
        ),
        click.option("--host", help="Host header that selects the project (env USERIO_HOST; default: the URL's host)."),
        click.option(
            "--token",
            envvar=["USERIO_TOKEN", "USERIO_ADMIN_TOKEN"],
            help="An Admin API JWT (env USERIO_TOKEN); else --key.",
        ),
        click.option(
            "--key",
            "key_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Admin private key (PEM) to sign tokens with (env USERIO_KEY) [default: "
            "$USERIO_HOME/<project>-admin-key.pem].",
        ),
        click.option(
            "--cacert",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Extra CA certificate to trust; default $USERIO_HOME/tls/localhost.crt when it exists.",
        ),
        click.option("--insecure", is_flag=True, help="Do not verify the server's TLS certificate."),
        click.option("--quiet", "-q", is_flag=True, help="Plain progress lines instead of a live bar."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def build_connection(settings: ConnectionSettings, token: str | None) -> Connection:
    """The connection the settings describe; exits 2 with a message if the key or certificate is unusable."""
    from userio_client.client import Connection, TokenSource, TransferError, ssl_context
    from userio_core.paths import default_key_path, userio_home

    url, project = settings.url, settings.project
    if not url.startswith(("https://", "http://")):
        _fail(f"--url {url!r} must start with https://")
    key_path: Path | None = None
    if token:
        tokens = TokenSource(token=token.strip(), project=project)
    else:
        key_path = settings.key or default_key_path(project)
        try:
            pem = key_path.read_text()
            mode = stat.S_IMODE(key_path.stat().st_mode)
        except OSError as exc:
            _fail(f"cannot read the admin key {key_path}: {exc.strerror} (pass --key FILE or --token TOKEN)")
        if os.name == "posix" and mode & 0o077:  # ssh refuses such a key; a warning here, since the key works
            click.echo(
                f"warning: the admin key {key_path} can be read by other users (mode {mode:04o}): "
                f"chmod 600 {shlex.quote(str(key_path))}",
                err=True,
            )
        tokens = TokenSource(private_pem=pem, project=project)
        try:
            tokens.current()
        except (ValueError, TypeError) as exc:
            _fail(f"{key_path} is not a usable admin private key (PEM): {exc}")
    cacert = settings.cacert
    if cacert is None and not settings.insecure:
        default = userio_home() / "tls" / "localhost.crt"
        cacert = default if default.exists() else None
    try:
        verify = ssl_context(cacert, settings.insecure)
    except TransferError as exc:
        _fail(exc.message)
    return Connection(
        url=url,
        project=project,
        tokens=tokens,
        verify=verify,
        host=settings.host,
        key_path=key_path.resolve() if key_path is not None and settings.key is not None else None,
        cacert=cacert.resolve() if cacert is not None and settings.cacert is not None else None,
        insecure=settings.insecure,
        token=token.strip() if token and not _token_from_env(token) else None,
    )


def _token_from_env(token: str) -> bool:
    return any(os.environ.get(name) == token for name in ("USERIO_TOKEN", "USERIO_ADMIN_TOKEN"))


def _quiet_http_logs() -> None:
    """Httpx logs every request at INFO: keep stderr for progress."""
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _recorded_run(resume: Path | None) -> dict[str, Any] | None:
    """The header of the run a `--resume REPORT` continues (its connection settings come from there)."""
    if resume is None:
        return None
    from userio_client.report import ReportError, read_header

    try:
        return read_header(resume)
    except ReportError as exc:
        _fail(str(exc))


def _with_connection(command: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(command)
    def wrapper(
        profile: str | None,
        url: str | None,
        project: str | None,
        host: str | None,
        token: str | None,
        key_path: Path | None,
        cacert: Path | None,
        insecure: bool,
        quiet: bool,
        **kwargs: Any,
    ) -> None:
        from userio_client.profiles import ProfileError, resolve

        _quiet_http_logs()
        recorded = _recorded_run(kwargs.get("resume"))
        if recorded is not None and project is not None and recorded.get("project") not in (None, project):
            _fail(f"{kwargs['resume']} was written for project {recorded['project']!r}: resume it there")
        flags = {"url": url, "project": project, "host": host, "key": key_path, "cacert": cacert, "insecure": insecure}
        try:
            settings = resolve(flags, profile=profile, recorded=recorded)
        except ProfileError as exc:
            _fail(str(exc))
        connection = build_connection(settings, token)
        command(connection=connection, quiet=quiet, **kwargs)

    return wrapper


@click.command("import")
@click.argument("file", metavar="FILE")
@connection_options
@click.option(
    "--identifier",
    type=click.Choice(["email", "phone_number", "preferred_username"]),
    help="Attribute that finds an existing user [default: email, or the request file's].",
)
@click.option("--upsert/--no-upsert", default=None, help="Update users that exist [default: no, or the file's].")
@click.option("--dry-run/--no-dry-run", "dry_run", default=None, help="Check everything, write nothing.")
@click.option(
    "--from",
    "source",
    type=click.Choice(
        ["auth0", "cognito-csv", "supabase", "clerk", "firebase", "keycloak", "django", "kratos", "userio"]
    ),
    help="Convert another system's export (or our own ndjson export).",
)
@click.option(
    "--firebase-hash-config",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="With --from firebase: the project's password hash parameters (console: Authentication > Users > "
    "Password hash parameters), as shown or as JSON.",
)
@click.option(
    "--new-ids",
    is_flag=True,
    default=None,
    help="With --from: give every user a new id [default: keep the old system's user id as sub where it is a valid"
    " user id].",
)
@click.option(
    "--age-identity",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    metavar="KEYFILE",
    help="With --from userio: the age identity (AGE-SECRET-KEY-1...) that decrypts a lossless export as it is read.",
)
@click.option(
    "--phone-region",
    metavar="REGION",
    help="Turn national and spaced phone numbers into E.164 for this region (e.g. GB) before sending.",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Every record's outcome, with its index in FILE [default: report.ndjson].",
)
@click.option(
    "--failed",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Failed records exactly as read [default: failed.ndjson; failed.csv with --from cognito-csv/clerk].",
)
@click.option(
    "--resume",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="REPORT",
    help="Continue the run that wrote REPORT (after a crash or Ctrl-C) with its settings; nothing is sent twice.",
)
@click.option("--in-flight", type=click.IntRange(1, 64), help="Tasks in flight at once [default: 24].")
@click.option(
    "--max-request-bytes", type=click.IntRange(256), help="Request body limit of the server [default: 500000]."
)
@click.option(
    "--check-passwords",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="PAIRS",
    help='Import nothing: dry-run the records PAIRS names ({"index": N, "password": "..."} a line) and print'
    " whether each record's password hash verifies its known plaintext, per record and per format.",
)
@_with_connection
def import_command(
    connection: Connection,
    quiet: bool,
    file: str,
    identifier: str | None,
    upsert: bool | None,
    dry_run: bool | None,
    source: str | None,
    firebase_hash_config: Path | None,
    new_ids: bool | None,
    age_identity: Path | None,
    phone_region: str | None,
    report: Path | None,
    failed: Path | None,
    resume: Path | None,
    in_flight: int | None,
    max_request_bytes: int | None,
    check_passwords: Path | None,
) -> None:
    """Import the users of FILE (ndjson, a JSON array, or an import request; `-` reads stdin).

    Sends requests just under the body limit, several at once, follows each task to the end and writes
    REPORT (every outcome), the failed file (failed records exactly as read, ready to fix and resubmit) and
    REPORT's failure summary (`<report>.failures.json`).
    """
    from userio_client.client import TransferError
    from userio_client.plan import ImportSettings, plan_import
    from userio_client.reader import InputError
    from userio_client.report import ReportError

    if resume is not None and report is not None and report != resume:
        _fail("--resume REPORT continues REPORT itself: leave out --report")
    path = None if file == "-" else Path(file)
    settings = ImportSettings(
        path=path,
        source=source,
        identifier=identifier,
        upsert=upsert,
        dry_run=dry_run,
        report=resume or report or Path("report.ndjson"),
        failed=failed,
        resume=resume is not None,
        in_flight=in_flight,
        max_request_bytes=max_request_bytes,
        phone_region=phone_region,
        firebase_hash_config=firebase_hash_config,
        new_ids=new_ids,
        age_identity=age_identity,
    )
    if check_passwords is not None:
        from userio_client.password_checks import check_passwords as run_checks

        try:
            code = run_checks(connection, settings, check_passwords)
        except TransferError as exc:
            _fail(exc.message, exc.exit_code)
        except InputError as exc:
            _fail(f"{file}:{exc.line}: {exc.message}" if exc.line is not None else f"{file}: {exc.message}")
        raise click.exceptions.Exit(code)
    if path is None and sys.stdin.isatty():  # else the run would wait for input without a word
        click.echo("reading records from the terminal, one JSON object a line; end with Ctrl-D", err=True)
    try:
        plan = plan_import(settings, connection=connection)
    except InputError as exc:
        _fail(f"{file}:{exc.line}: {exc.message}" if exc.line is not None else f"{file}: {exc.message}")
    except (TransferError, ReportError) as exc:
        _fail(str(exc))
    from userio_client.progress import import_progress

    progress = import_progress(quiet=quiet)
    try:
        code = asyncio.run(_import(plan, connection, progress, file))
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        code = EXIT_INTERRUPTED
    raise click.exceptions.Exit(code)


def resume_command(file: str, report: Path) -> str:
    """The command that continues a run: everything else comes from the report's header."""
    return shlex.join(["userio", "import", file, "--resume", str(report)])


async def _import(plan: ImportPlan, connection: Connection, progress: ImportProgress, file: str) -> int:
    from userio_client.client import AdminClient, TransferError
    from userio_client.importer import Importer, Interrupted
    from userio_client.progress import format_count
    from userio_client.reader import InputError
    from userio_client.report import ReportError
    from userio_client.result import describe_result

    settings = plan.settings
    resume_hint = f"continue with: {resume_command(file, settings.report)}"
    importer: Importer | None = None
    try:
        async with AdminClient.open(connection, notify=progress.note, max_connections=plan.in_flight + 2) as client:
            await client.check_access()
            total = "the records" if plan.total is None else f"{format_count(plan.total)} record"
            total += "" if plan.total is None or plan.total == 1 else "s"
            progress.note(
                f"importing {total} of {file} into project {connection.project} at {connection.url}"
                f" (identifier {plan.identifier}, upsert {str(plan.upsert).lower()}"
                f"{', dry run' if plan.dry_run else ''})"
            )
            importer = Importer(plan, client, progress)
            try:
                result = await importer.run()
            finally:
                progress.close(importer.snapshot)
    except TransferError as exc:
        click.echo(f"error: {exc.message}", err=True)
        if importer is not None:
            click.echo(resume_hint, err=True)
        return exc.exit_code
    except InputError as exc:
        where = f"{file}:{exc.line}" if exc.line is not None else file
        click.echo(f"error: {where}: {exc.message}", err=True)
        if importer is not None:
            click.echo(resume_hint, err=True)
        return 2
    except ReportError as exc:
        click.echo(f"error: {exc}", err=True)
        return 2
    except Interrupted:
        click.echo(f"interrupted: every request sent has its task journaled in {settings.report}", err=True)
        click.echo(resume_hint, err=True)
        return EXIT_INTERRUPTED
    for line in describe_result(result, plan, connection):
        click.echo(line, err=True)
    return result.exit_code


@click.command("export")
@click.option(
    "--format",
    "format_",
    type=click.Choice(["csv", "ndjson", "userio"]),
    required=True,
    help="File format; userio: the lossless export (every hash and secret), age-encrypted to --age-recipient.",
)
@click.option(
    "--age-recipient",
    "age_recipients",
    multiple=True,
    metavar="AGE1...",
    help="With --format userio: an age X25519 public key to encrypt to (repeat for more; any one decrypts).",
)
@click.option(
    "--field",
    "fields",
    multiple=True,
    metavar="POINTER[=NAME]",
    help="A CSV column, e.g. /email or /custom_attributes/plan=plan (repeat; default: every attribute).",
)
@click.option(
    "--escape-formulas",
    is_flag=True,
    help="CSV: start text cells a spreadsheet would run as a formula (=, +, -, @, tab, CR) with '.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the file (`-`: stdout, once verified).",
)
@click.option(
    "--since",
    metavar="WATERMARK",
    help="A delta: only the users changed after this watermark (a previous export's), a tombstone per deleted one.",
)
@connection_options
@_with_connection
def export_command(
    connection: Connection,
    quiet: bool,
    format_: str,
    age_recipients: tuple[str, ...],
    fields: tuple[str, ...],
    escape_formulas: bool,
    output: Path,
    since: str | None,
) -> None:
    """Export the project's users to a CSV, ndjson or lossless (userio) file, verified against the server's SHA-256.

    The closing line names the file's watermark: pass it as --since to the next export for a delta.
    """
    from userio_client.exporter import STDOUT, ExportSettings, describe_export, parse_field, run_export

    if fields and format_ != "csv":
        _fail("--field applies to --format csv (an ndjson export has every attribute)")
    if escape_formulas and format_ != "csv":
        _fail("--escape-formulas applies to --format csv (ndjson values are JSON strings, never formulas)")
    if format_ == "userio" and not age_recipients:
        _fail("--format userio needs --age-recipient age1... (the lossless export is always encrypted)")
    if age_recipients and format_ != "userio":
        _fail("--age-recipient applies to --format userio")
    try:
        parsed = [parse_field(text) for text in fields]
    except ValueError as exc:
        _fail(str(exc))
    settings = ExportSettings(
        format="csv" if format_ == "csv" else "userio" if format_ == "userio" else "ndjson",
        output=output,
        fields=parsed,
        escape_formulas=escape_formulas,
        since=since,
        age_recipients=list(age_recipients),
    )

    async def run() -> int:
        from userio_client.client import AdminClient, TransferError
        from userio_client.progress import export_progress

        progress = export_progress(quiet=quiet)
        try:
            async with AdminClient.open(connection, notify=progress.note) as client:
                result = await run_export(settings, client, progress, verify=connection.verify)
        except TransferError as exc:
            progress.close()
            click.echo(f"error: {exc.message}", err=True)
            return exc.exit_code
        progress.close()
        click.echo(describe_export(result), err=True)
        return 0

    try:
        code = asyncio.run(run())
    except KeyboardInterrupt:
        # The copy to stdout may have begun; a file is renamed into place only once whole.
        lost = "stdout did not get the whole file" if str(output) == STDOUT else "nothing was written"
        click.echo(f"interrupted: {lost}", err=True)
        code = EXIT_INTERRUPTED
    raise click.exceptions.Exit(code)


@click.command("changes")
@click.option("--cursor", metavar="CURSOR", help="Start after this cursor or watermark (`latest`: from now).")
@click.option(
    "--state",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep the cursor in this file: read at start, replaced after each page printed.",
)
@click.option("--follow", is_flag=True, help="Keep following once caught up (Ctrl-C stops).")
@click.option("--poll", type=click.FloatRange(0.1, 3600), default=2.0, show_default=True, help="Seconds between asks.")
@click.option("--limit", type=click.IntRange(1, 1000), default=500, show_default=True, help="Entries per page.")
@connection_options
@_with_connection
def changes_command(
    connection: Connection,
    quiet: bool,
    cursor: str | None,
    state: Path | None,
    follow: bool,
    poll: float,
    limit: int,
) -> None:
    """Print the project's change log as ndjson (one entry a line), from the saved cursor or the oldest kept entry.

    See docs/changes.md: a warehouse takes a full export, then follows from its watermark.
    """
    from userio_client.follower import FollowSettings, follow_changes

    settings = FollowSettings(cursor=cursor, state=state, follow=follow, poll=poll, limit=limit)

    async def run() -> int:
        from userio_client.client import AdminClient, TransferError

        try:
            async with AdminClient.open(
                connection, notify=lambda note: None if quiet else click.echo(note, err=True)
            ) as client:
                printed = await follow_changes(settings, client)
        except TransferError as exc:
            click.echo(f"error: {exc.message}", err=True)
            return exc.exit_code
        if not quiet:
            click.echo(f"{printed} entries", err=True)
        return 0

    try:
        code = asyncio.run(run())
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    raise click.exceptions.Exit(code)
