# Two commands on a fresh machine: `make demo` and `make test`. Each sets itself up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.demo-installed

.PHONY: console console-shots demo services test test-engines test-hard test-cluster test-litestar-next test-quick test-embedded lint typecheck wheels bench-import bench-export bench-hooks bench-observability bench-passwords bench-load bench-tokens clean

$(STAMP): pyproject.toml client/pyproject.toml core/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ./core -e ./client -e '.[dev]'
	touch $(STAMP)

# The demo needs only the example extra (the server, uvicorn and the `userio` client): no dev toolchain. The client
# (client/) and the rules both share (core/) are distributions of this tree, named beside the server so pip takes
# them from here rather than from an index.
# --no-compile: byte-compiling every installed module (botocore's thousands) took a third of the install; Python
# compiles what the demo imports on first use.
$(DEMO_STAMP): pyproject.toml client/pyproject.toml core/pyproject.toml
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then touch $@; else \
		$(PYTHON) -m venv $(VENV) && \
		$(BIN)/pip install --quiet --no-compile --disable-pip-version-check -e ./core -e ./client -e '.[example]' && touch $@; fi

# axe-core for the console's accessibility checks in the browser tests (Chromium itself comes from apt).
AXE := console/node_modules/axe-core/axe.min.js
$(AXE): console/package-lock.json
	if command -v npm >/dev/null; then npm ci --prefix console --no-audit --no-fund && touch $@; else echo "npm is missing: browser tests will skip"; fi

demo: $(DEMO_STAMP)
	$(BIN)/python -m example_app

# What the suite needs beside the venv (scripts/services): PostgreSQL and Redis started when installed but down,
# Chromium and Prometheus from the distribution's packages when root; otherwise one line says what to install, and
# the tests that need it skip (or fail under USERIO_REQUIRE_SERVICES=1). CI (.ci/run) installs nothing else.
services:
	@scripts/services

# pytest spreads the test files over one worker process per core (pytest-xdist; `USERIO_TEST_WORKERS=0` runs them
# in this process, one at a time). Each worker has its own PostgreSQL database and SQLite file (session fixtures),
# each test its own arq queue name, and each process a fixture keeps for the session its own database, so a worker
# shares nothing with another; a file's tests stay on one worker, so its module fixtures are built once. Files are
# handed out longest first (`LONGEST_FILES` in tests/tiers.py), so no long file starts near the end.
OVER_THE_CORES := -n $${USERIO_TEST_WORKERS:-auto} --dist loadfile --no-loadscope-reorder

# The suite starts Python processes throughout (CLI smoke tests, apps, workers, hook workers, wheel venvs): with
# PYTHONDONTWRITEBYTECODE set, each compiled our modules again (0.5 s of CPU a start), so the test targets write
# bytecode (__pycache__ is ignored by git).
test test-engines test-hard test-cluster test-quick test-embedded: export PYTHONDONTWRITEBYTECODE =

# Every test; one taken over the deployments runs on each where the deployment is what it tests (marked `engine`:
# SQL, locks, constraints, the runners), on the embedded default alone where it is not. `make test-engines` runs
# the production side of the rest; CI runs both, so every such test still runs on PostgreSQL with arq and on SQLite
# with the in-process runner. Plain `pytest` runs both at once. tests/tiers.py has the tiers.
test: $(STAMP) $(AXE) services
	$(BIN)/ruff check litestar_userio userio_client userio_core tests example_app example_fullstack bench hatch_build.py
	$(BIN)/mypy
	USERIO_TEST_TIER=main $(BIN)/pytest $(OVER_THE_CORES)

test-engines: $(STAMP) services
	USERIO_TEST_TIER=engines $(BIN)/pytest $(OVER_THE_CORES)

# The fault suite, and the property tests with many more examples (CI runs it after `make test`). The fault and
# load tests run one at a time, as they kill workers and measure under load; the property tests over the cores.
# PROPERTY_FILES: property tests elsewhere whose examples the hard profile multiplies (`many` in tests/hard).
PROPERTY_FILES := tests/test_formats.py tests/exports/test_encoding.py
test-hard: $(STAMP) services
	$(BIN)/pytest -m hard
	USERIO_HYPOTHESIS_PROFILE=hard USERIO_SCHEMATHESIS_EXAMPLES=100 \
		$(BIN)/pytest $(OVER_THE_CORES) tests/hard tests/schema $(PROPERTY_FILES)

# PostgreSQL + Redis, S3, the app and two workers on their own network namespaces; one worker host cut off
# for 30 s mid-import (root only: it builds namespaces and veth pairs; USERIO_CLUSTER_RECORDS sets the size).
test-cluster: $(STAMP) services
	$(BIN)/pytest -m cluster tests/cluster -s

# Litestar 3 readiness, NON-BLOCKING: the plugin against the newest Litestar pre-release in a venv of its own
# (scripts/litestar-next); it prints what breaks and never fails.
test-litestar-next: $(STAMP)
	@scripts/litestar-next

# The maintainer's loop (about a minute): the rules alone, no database, queue, app process or browser.
test-quick: $(STAMP)
	USERIO_TEST_TIER=quick $(BIN)/pytest -q

# Every test once, on the embedded deployment (SQLite, the in-process runner); no slow tests, no browser.
test-embedded: $(STAMP) services
	USERIO_TEST_TIER=embedded $(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check litestar_userio userio_client userio_core tests example_app example_fullstack bench hatch_build.py
	$(BIN)/ruff format --check litestar_userio userio_client userio_core tests example_app example_fullstack bench

typecheck: $(STAMP)
	$(BIN)/mypy

bench-import: $(STAMP)
	$(BIN)/python bench/import.py

bench-export: $(STAMP)
	$(BIN)/python bench/export.py

bench-hooks: $(STAMP)
	$(BIN)/python bench/hooks.py

# Metrics and traces off and on in the same run: a hook run and a token, then the import (docs/operations.md).
bench-observability: $(STAMP)
	$(BIN)/python bench/hooks.py --only observability
	$(BIN)/python bench/import.py --observability

bench-passwords: $(STAMP)
	$(BIN)/python bench/passwords.py

bench-load: $(STAMP)
	$(BIN)/python bench/load.py

# Refresh and password grants over HTTPS to the example app on PostgreSQL and SQLite, against a bare Litestar handler
# that reads one indexed row and signs an RS256 JWT with the same key (bench/token_baseline.py), in the same run.
bench-tokens: $(STAMP)
	$(BIN)/python bench/tokens.py

# Refresh the screenshots docs/console.md shows (the browser tests otherwise keep theirs in a temporary folder).
console-shots: $(STAMP) $(AXE) services
	USERIO_CONSOLE_SHOTS=$(CURDIR)/docs USERIO_REQUIRE_SERVICES=1 $(BIN)/pytest tests/console/test_browser.py -q
	cp docs/userio-console-shots/*.png docs/console/ && rm -r docs/userio-console-shots

# The three wheels into dist/: the server (`litestar-userio`; its `cli` extra pulls the client), the client
# (`litestar-userio-client`, client/pyproject.toml: no server dependency) and the pure rules both depend on
# (`litestar-userio-core`, core/pyproject.toml). No file is in two of them.
wheels: $(STAMP)
	$(BIN)/python -m build --wheel --no-isolation --outdir dist core
	$(BIN)/python -m build --wheel --no-isolation --outdir dist client
	$(BIN)/python -m build --wheel --no-isolation --outdir dist .

# Rebuild the admin console's committed assets from console/ (needs Node.js; the server does not).
console:
	cd console && npm ci --no-audit --no-fund && npm run build

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache dist build
