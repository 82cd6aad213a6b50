"""`userio`: the migration client's console script (the `cli` extra), for everything that talks to a server.

Server-side administration (migrations, projects, keys, clients, workers) stays `litestar userio ...`, which
runs next to the app's configuration; this command needs only a URL and an admin key or token.
"""

from __future__ import annotations

import click

from litestar_userio.transfer.commands import changes_command, export_command, import_command
from litestar_userio.transfer.hooks import hooks_group
from litestar_userio.transfer.passwords import password_migration_command

__all__ = ["main"]

DISTRIBUTIONS = ("litestar-userio", "litestar-userio-client")
"""The server with its `cli` extra, or the client alone (client/pyproject.toml): whichever is installed."""


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """`--version` from the installed distribution (click's `package_name` would name only one of the two)."""
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import PackageNotFoundError, version

    for name in DISTRIBUTIONS:
        try:
            click.echo(f"userio, version {version(name)}")
        except PackageNotFoundError:
            continue
        ctx.exit()
    raise click.ClickException(f"none of {', '.join(DISTRIBUTIONS)} is installed")


@click.group("userio", context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def main() -> None:
    """Move users in and out of a litestar-userio server and manage its token hooks.

    Connection settings come from flags, USERIO_URL / USERIO_PROJECT / USERIO_HOST / USERIO_TOKEN /
    USERIO_KEY, or a profile in ~/.config/userio/profiles.toml (url, project, host, key).
    """


main.add_command(import_command)
main.add_command(export_command)
main.add_command(changes_command)
main.add_command(hooks_group)
main.add_command(password_migration_command)
