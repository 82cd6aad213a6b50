"""The suite's own scheduling: what each tier runs (`tests/tiers.py`), and the files `make test` hands out first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tiers import LONGEST_FILES

ROOT = Path(__file__).resolve().parents[1]

FILES = (
    "tests/imports/test_update_rules.py",  # marked `engine` as a whole
    "tests/test_cli.py",  # one test marked, over `cli_env`
    "tests/imports/test_api.py",  # some tests marked, over `backend`
    "tests/imports/test_turns.py",  # one test on the production deployment alone
)


def test_each_file_handed_out_first_exists() -> None:
    # A renamed file would silently drop back to its place in the collection, where it may start last.
    assert [name for name in LONGEST_FILES if not (ROOT / name).is_file()] == []


def run_pytest(tier: str | None, *files: str) -> subprocess.CompletedProcess[str]:
    """`pytest --collect-only` on the files in a process of its own, under the tier (None: none set)."""
    env = {key: value for key, value in os.environ.items() if key != "USERIO_TEST_TIER"}
    if tier is not None:
        env["USERIO_TEST_TIER"] = tier
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files]
    return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


def collect(tier: str | None) -> tuple[set[str], str]:
    """The node ids `pytest` collects under the tier, and what it prints."""
    result = run_pytest(tier, *FILES)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return {line for line in result.stdout.splitlines() if "::" in line}, result.stdout


@pytest.mark.slow
def test_make_test_and_make_test_engines_together_run_every_test_once() -> None:
    everything, _ = collect(None)
    main, printed = collect("main")
    engines, _ = collect("engines")

    assert main | engines == everything
    assert main & engines == set()
    assert f"tier main: {len(engines)} tests left out; their production side runs in `make test-engines`" in printed
    # What the deployment is about runs on both in `make test`.
    for side in ("sqlite-inprocess", "postgres-arq"):
        assert f"tests/imports/test_update_rules.py::test_identifier_itself_is_not_changed[{side}]" in main
    for side in ("sqlite", "postgres"):
        assert f"tests/test_cli.py::test_a_taken_domain_is_refused_with_one_line[{side}]" in main
    # What it does not change runs on the embedded default there, and on production in `make test-engines`.
    assert "tests/imports/test_api.py::test_unknown_task_id_is_404[sqlite-inprocess]" in main
    assert "tests/imports/test_api.py::test_unknown_task_id_is_404[postgres-arq]" in engines
    assert "tests/test_cli.py::test_token_ttl_is_bounded[postgres]" in engines
    # A test with no embedded twin keeps its production run in `make test`.
    turn = "tests/imports/test_turns.py::test_a_chunk_waits_for_the_turn_without_counting_a_run_then_completes"
    assert f"{turn}[postgres-arq]" in main


@pytest.mark.slow
def test_an_unknown_tier_is_refused_naming_the_tiers() -> None:
    result = run_pytest("fast", FILES[3])
    assert result.returncode != 0
    assert "USERIO_TEST_TIER='fast': the tiers are main, engines, embedded, quick" in result.stdout + result.stderr
