"""`userio`: the console script of `litestar-userio-client`, for everything that talks to a server.

Server-side administration (migrations, projects, keys, clients, workers) stays `litestar userio ...`, which
runs next to the app's configuration; this command needs only a URL and an admin key or token.
"""

from __future__ import annotations

import click

from userio_client.commands import changes_command, export_command, import_command
from userio_client.hook_commands import hooks_group
from userio_client.rehash_status import password_migration_command

__all__ = ["main"]


@click.group("userio", context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="litestar-userio-client", prog_name="userio")
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
