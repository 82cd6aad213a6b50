"""The suite's own scheduling: the files `make test` hands out first are files that exist."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import _LONGEST_FILES

ROOT = Path(__file__).resolve().parents[1]


def test_each_file_handed_out_first_exists() -> None:
    # A renamed file would silently drop back to its place in the collection, where it may start last.
    assert [name for name in _LONGEST_FILES if not (ROOT / name).is_file()] == []
