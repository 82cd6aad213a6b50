"""`userio`: the migration client's console script (the `cli` extra), for everything that talks to a server.

Server-side administration (migrations, projects, keys, clients, workers) stays `litestar userio ...`, which
runs next to the app's configuration; this command needs only a URL and an admin key or token.
"""

from __future__ import annotations

import click

from litestar_userio.transfer.commands import export_command, import_command
from litestar_userio.transfer.hooks import hooks_group
from litestar_userio.transfer.passwords import password_migration_command

__all__ = ["main"]


@click.group("userio", context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="litestar-userio")
def main() -> None:
    """Move users in and out of a litestar-userio server and manage its token hooks.

    Connection settings come from flags, USERIO_URL / USERIO_PROJECT / USERIO_HOST / USERIO_TOKEN /
    USERIO_KEY, or a profile in ~/.config/userio/profiles.toml (url, project, host, key).
    """


main.add_command(import_command)
main.add_command(export_command)
main.add_command(hooks_group)
main.add_command(password_migration_command)
