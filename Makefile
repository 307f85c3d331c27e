# Caravanserai: `make help` lists the targets. `make test` is exactly what CI runs (.ci/run).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The suite runs against the machine's PostgreSQL and Redis, then its database tests again on the
# embedded defaults (SQLite, no Redis). Override these to point elsewhere.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
# Bytecode is cached as Python does by default, even where the machine's environment says not to: the suite
# starts some 600 Python processes, and each would compile the project anew (and each pytest process would
# rewrite every test module's asserts again: its collection took 11 CPU-s instead of 6).
unexport PYTHONDONTWRITEBYTECODE
# pytest-xdist processes for the suite (0: one process). The tests isolate by free ports, per-process
# database names (pytest-django's _gw<N> suffixes) and per-run Redis prefixes, so they run side by side.
# Twice the cores: many tests wait on the servers and processes they start (on an idle 2-core machine the
# suite took 8 min with 4 processes, 11 with 2).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
# The SQLite run in one process per core: each process migrates its own database (87 s with 4, 50 s with 2).
TEST_WORKERS_SQLITE ?= $(shell nproc)
# buf (npm's @bufbuild/buf) for `buf lint` and `buf breaking` on protos/, installed into the ignored .venv/buf
BUF_VERSION := 1.75.0
# uv, which installs the project's Python packages into .venv
UV_VERSION := 0.13.9

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z][a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# The venv is made by Python's own venv module (so it has pip, for bot authors' commands), and filled by uv
# (pinned, from PyPI): on a fresh clone with warm caches, uv installs the project in about 15 s of wall and
# 3 CPU-s where pip took 60-120 s and 42 CPU-s. Both run quietly: their errors show, their notes do not.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(BIN)/uv: $(BIN)/python
	$(BIN)/pip install --quiet --quiet --disable-pip-version-check uv==$(UV_VERSION)

UV_PIP := $(BIN)/uv pip install --quiet --python $(BIN)/python

$(VENV)/.installed: pyproject.toml clients/python/pyproject.toml clients/python/setup.py $(BIN)/uv
	$(UV_PIP) -e '.[dev,envs]'
	$(UV_PIP) --no-deps --no-build-isolation -e clients/python
	touch $@

.PHONY: install
install: $(VENV)/.installed ## create .venv and install the project with its pinned dependencies
	@BUF_VERSION=$(BUF_VERSION) bash infra/scripts/install-extras.sh

.PHONY: test
test: install lint ## lint, the suite on PostgreSQL + Redis (its 20 slowest tests listed), its database tests on SQLite (CI)
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(BIN)/pytest -n $(TEST_WORKERS) --durations=20
	env -u DATABASE_URL -u REDIS_URL $(BIN)/pytest -n $(TEST_WORKERS_SQLITE) -m "django_db and not browser"; \
	  status=$$?; [ $$status -eq 0 ] || [ $$status -eq 5 ]  # 5: no database tests collected

.PHONY: lint
lint: install ## ruff (lint and format check) and mypy, strict, over every layer (pyproject.toml: relaxations)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy engine_service ladder workers bot_host pairing

.PHONY: format
format: install ## apply ruff's fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

.PHONY: bench
bench: install ## benchmarks: ratios measured side by side; results under bench/results/
	$(BIN)/python -m bench

.PHONY: rehearse-scale-out
rehearse-scale-out: install ## HAProxy before 3 gateways, 3 workers, bots through it; faults across nodes, with figures
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(BIN)/python -m bench scale_out

.PHONY: demo
demo: install ## run the whole ladder locally on embedded defaults
	$(BIN)/python infra/demo.py

.PHONY: clean
clean: ## remove the virtualenv, caches and local data
	rm -rf $(VENV) var .pytest_cache .ruff_cache .mypy_cache test-artifacts
