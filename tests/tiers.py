"""Which tests a `make` target runs, and in what order the files start (`tests/conftest.py` calls `select`).

`USERIO_TEST_TIER` picks the tier:

| Tier | Target | What runs |
|---|---|---|
| (unset) | `pytest` | everything, every test over the deployments on each of them |
| `main` | `make test` | every test; one taken over the deployments runs on each of them where the deployment is what it tests (the `engine` marker), on the embedded default alone where it is not |
| `engines` | `make test-engines` (CI) | the production side `main` leaves out: `main` and `engines` together are exactly everything |
| `embedded` | `make test-embedded` | every test once, on the embedded default; no `slow` test, no browser |
| `quick` | `make test-quick` | the rules alone: no database, queue, object storage, served app, process or browser |

The summary ends with how many tests the tier left out, and where they run.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

DEPLOYMENT_ARGUMENTS = frozenset({"backend", "backend_all", "cli_env", "deployment", "engine"})
"""The arguments that pick a deployment: the fixtures parametrized over them, and `engine` in a test's own
`parametrize`."""

PRODUCTION_SIDE = frozenset({"postgres-arq", "postgres-inprocess", "sqlite-arq", "postgres"})
"""The values of those arguments that are not the embedded default (SQLite and the in-process runner)."""

STATE_FIXTURES = frozenset(
    {"postgres_url", "sqlite_url", "redis_url", "backend", "backend_all", "cli_env", "deployment", "database_url"}
    | {"make_env", "env", "env_all", "project", "server", "session", "live_app", "moto_endpoint", "sqlite_deployment"}
)
"""A test that touches a database, the queue, object storage or a served app asks for one of these (directly, or
through its fixtures; `backend` and `cli_env` pick their database at run time)."""

LONGEST_FILES = (
    "tests/host/test_adoption_fullstack.py",
    "tests/test_packaging.py",
    "tests/imports/test_worker_kill.py",
    "tests/webhooks/test_webhooks.py",
    "tests/schema/test_schemathesis.py",
    "tests/console/test_browser.py",
    "tests/client/test_import_cli.py",
    "tests/exports/test_lossless.py",
    "tests/exports/test_encoding.py",
    "tests/queue/test_shared_queue.py",
    "tests/client/test_reader.py",
    "tests/client/test_scim_conformance.py",
    "tests/exports/test_consistency.py",
    "tests/hard/test_import_model.py",
    "tests/client/test_changes_cli.py",
    "tests/test_cli.py",
    "tests/client/test_loop.py",
    "tests/tokens/test_isolation.py",
    "tests/console/test_webhooks_page.py",
    "tests/client/test_export_cli.py",
    "tests/operations/test_prometheus.py",
    "tests/exports/test_storage_backends.py",
    "tests/tokens/test_token_endpoint.py",
)
"""The files that took longest in `make test`, longest first (their slowest tests 30-260 s a file on 2 cores
with the load average at 8-19, 2026-12-02: `--durations=60`). The 260 s file starts at once, so no long file is
left for the end."""

WHERE_THE_REST_RUNS = {
    "main": "their production side runs in `make test-engines` (CI)",
    "engines": "they run in `make test`",
    "embedded": "`make test` and `make test-engines` run them (the production side, `slow` tests, the browser)",
    "quick": "`make test` and `make test-engines` run them",
}

_LEFT_OUT = pytest.StashKey[int]()
_WORKER_OUTPUT_KEY = "userio_tier_left_out"


def select(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the tier's tests, longest files first; remember how many were left out for the summary."""
    _longest_files_first(items)
    tier = os.environ.get("USERIO_TEST_TIER")
    if not tier:
        return
    if tier not in WHERE_THE_REST_RUNS:
        raise pytest.UsageError(f"USERIO_TEST_TIER={tier!r}: the tiers are {', '.join(WHERE_THE_REST_RUNS)}")
    engine_free = _engine_free_production_side(items)
    kept, left = [], []
    for item in items:
        (left if _leave(tier, item, engine_free) else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
    config.stash[_LEFT_OUT] = len(left)
    worker_output = getattr(config, "workeroutput", None)  # an xdist worker sends it to the controller
    if worker_output is not None:
        worker_output[_WORKER_OUTPUT_KEY] = len(left)


def _leave(tier: str, item: pytest.Item, engine_free: set[str]) -> bool:
    if tier == "main":
        return item.nodeid in engine_free
    if tier == "engines":
        return item.nodeid not in engine_free
    leave = production_side(item) or item.get_closest_marker("slow") is not None
    leave = leave or "tests/console/test_browser.py" in item.nodeid
    if tier == "quick":
        leave = leave or bool(STATE_FIXTURES & set(getattr(item, "fixturenames", ())))
    return leave


def production_side(item: pytest.Item) -> bool:
    """Whether the item runs on a deployment other than the embedded default."""
    params = _params(item)
    return any(str(params[name]) in PRODUCTION_SIDE for name in DEPLOYMENT_ARGUMENTS & params.keys())


def _engine_free_production_side(items: list[pytest.Item]) -> set[str]:
    """The node ids of production-side items whose test is not marked `engine` and also runs, with the same other
    arguments, on the embedded default: `make test` runs that twin alone. A test that runs on a production
    deployment only (PostgreSQL's own behaviour, say) keeps it."""
    embedded = {_twin_key(item) for item in items if not production_side(item)}
    return {
        item.nodeid
        for item in items
        if production_side(item) and item.get_closest_marker("engine") is None and _twin_key(item) in embedded
    }


def _twin_key(item: pytest.Item) -> tuple[Any, ...]:
    """The test and its arguments other than the deployment: equal for the runs of one test on each deployment."""
    others = sorted((name, repr(value)) for name, value in _params(item).items() if name not in DEPLOYMENT_ARGUMENTS)
    return (item.path, getattr(item, "cls", None), getattr(item, "originalname", item.name), tuple(others))


def _params(item: pytest.Item) -> dict[str, Any]:
    return dict(getattr(getattr(item, "callspec", None), "params", {}))


def _longest_files_first(items: list[pytest.Item]) -> None:
    """Put the longest files first, the rest in their order. `make test` hands whole files to its workers in this
    order (`--no-loadscope-reorder`), so a long file never starts when the other worker is nearly done."""
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller: each worker collected the same tests, so any worker's count is the run's."""
    left = getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT_KEY)
    if left is not None:
        node.config.stash[_LEFT_OUT] = left


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    tier = os.environ.get("USERIO_TEST_TIER")
    left = config.stash.get(_LEFT_OUT, None)
    if tier in WHERE_THE_REST_RUNS and left is not None:
        terminalreporter.write_line(f"tier {tier}: {left} tests left out; {WHERE_THE_REST_RUNS[tier]}")
