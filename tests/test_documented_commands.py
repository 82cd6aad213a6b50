"""Every `userio ...` and `litestar userio ...` command the docs name exists: each answers `--help` (issue 28).

In-process through click's runner: the `userio` client is `userio_client.main:main`, the host's
commands are the `userio` group the plugin adds to `litestar`.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from litestar_userio.cli import userio_group
from userio_client.main import main as client

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`([^`\n]+)`")
_COMMAND = re.compile(r"(?:^|[\s$(/])(litestar(?: \.\.\.| --app \S+)? userio|userio)((?: [a-z][a-z0-9-]*)+)")


def documented() -> dict[tuple[str, ...], str]:
    """(program, words...) -> where the docs name it first; `program` is `userio` or `litestar`."""
    found: dict[tuple[str, ...], str] = {}
    for path in DOCS:
        text = path.read_text("utf-8")
        snippets = _FENCED.findall(text) + _INLINE.findall(_FENCED.sub("", text))
        for snippet in snippets:
            for line in snippet.splitlines():
                for program, words in _COMMAND.findall(line):
                    key = ("litestar" if program.startswith("litestar") else "userio", *words.split())
                    found.setdefault(key, path.name)
    return found


def resolve(program: str, words: tuple[str, ...]) -> list[str]:
    """The command path the words name: groups are followed; the words after a command are its arguments."""
    command: click.Command = userio_group if program == "litestar" else client
    path: list[str] = []
    for word in words:
        if not isinstance(command, click.Group):
            break
        sub = command.commands.get(word)
        assert sub is not None, f"`{program} {' '.join([*(['userio'] if program == 'litestar' else []), *path, word])}`"
        command = sub
        path.append(word)
    return path


COMMANDS = documented()


def test_the_docs_name_commands_of_both_programs():
    programs = {key[0] for key in COMMANDS}
    assert programs == {"userio", "litestar"}
    assert len(COMMANDS) > 20


@pytest.mark.parametrize("key", sorted(COMMANDS), ids=lambda key: " ".join(key))
def test_a_documented_command_exists_and_answers_help(key):
    program, *words = key
    path = resolve(program, tuple(words))
    root = userio_group if program == "litestar" else client

    result = CliRunner().invoke(root, [*path, "--help"])

    assert result.exit_code == 0, f"{COMMANDS[key]}: {result.output}"
    assert "Usage:" in result.output
