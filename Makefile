# Token economics calculator — developer commands.
#
#   make run    start the app (creates .venv on first use)
#   make test   lint + type-check and the packaging smoke test (wheel installed into a fresh virtualenv outside the
#               repository) + the whole test suite (browser, million-row and fuzz tests included)
#   make quick  the fast loop: pytest -m "not slow" (under a minute; no browser, million-row or fuzz tests)
#
# Other targets: venv, browser, lint, package, bench, docs, docs-serve, docs-build, clean.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.requirements-stamp
REQS   := requirements.txt requirements-dev.txt

# First interpreter found that is Python >= 3.11 (override with `make PYTHON=/path/to/python3.12 venv`).
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
	command -v $$p; break; fi; done)

CHROMIUM := $(or $(shell command -v chromium 2>/dev/null),/usr/bin/chromium)

.PHONY: help venv browser fonts postgresql run test test-explore quick lint typecheck package bench docs docs-serve docs-build clean

help:
	@echo "make run     start the app at http://localhost:8501"
	@echo "make test    ruff + mypy + pytest (every test, browser included) + the packaging smoke test"
	@echo "make quick   pytest -m 'not slow': the fast loop (no browser, million-row or fuzz tests)"
	@echo "make test-explore  the hypothesis properties on fresh random examples (make test derandomises them)"
	@echo "make package build the wheel, install it in a fresh virtualenv outside the repo, evaluate a CSV there"
	@echo "make venv    create/refresh .venv from requirements*.txt"
	@echo "make browser install Debian chromium for the browser tests (needs root or sudo)"
	@echo "make postgresql  install Debian postgresql for the store's tests (needs root or sudo)"
	@echo "make fonts   install the board report's fonts (Debian Noto, Noto CJK, Noto Color Emoji, Unifont)"
	@echo "make lint    ruff check + mypy"
	@echo "make bench   run every bench/*.py"
	@echo "make docs    regenerate the docs pages' generated blocks (fields, model, worked example)"
	@echo "make docs-serve  serve the documentation site at http://127.0.0.1:8000"
	@echo "make docs-build  build the documentation site with --strict into site/"

venv: $(STAMP)

# Re-installs only when a requirements file changes (the stamp is older than it).
$(STAMP): $(REQS)
	@if [ ! -x "$(PY)" ]; then \
		if [ -z "$(PYTHON)" ]; then echo "error: Python >= 3.11 not found; set PYTHON=/path/to/python3.11" >&2; exit 1; fi; \
		echo "creating $(VENV) with $(PYTHON)"; \
		"$(PYTHON)" -m venv "$(VENV)"; \
	fi
	$(PY) -m pip install --disable-pip-version-check --quiet -r requirements-dev.txt
	@touch "$(STAMP)"

# Browser tests drive the system Chromium (Debian package), never a downloaded Playwright build.
browser:
	@if [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"; \
	else \
		echo "Chromium is missing and cannot be installed without root." >&2; \
		echo "Install it with:  sudo apt-get update && sudo apt-get install -y chromium" >&2; \
		if [ -n "$${CI:-}" ]; then exit 1; fi; \
		echo "(continuing: the browser tests will fail until Chromium is installed)" >&2; exit 0; \
	fi; \
	echo "installing Debian chromium"; \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q; \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium

# The board report's fonts beyond Typst's own (economics/report/document.py FONT_DIRS): Noto for the world's scripts,
# Noto CJK, Noto Color Emoji and GNU Unifont for anything else, from Debian; without them a name in Chinese, Hindi or
# with an emoji prints as empty boxes.
REPORT_FONTS := fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji fonts-unifont

fonts:
	@if dpkg -s $(REPORT_FONTS) >/dev/null 2>&1; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		echo "The report's fonts are Debian packages ($(REPORT_FONTS)); install Noto, Noto CJK and Noto Color Emoji" >&2; \
		echo "from your system's packages (reports print CJK, Indic, Thai and emoji names as boxes without them)." >&2; \
		exit 0; \
	fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"; \
	else \
		echo "The report's fonts are missing and cannot be installed without root." >&2; \
		echo "Install them with:  sudo apt-get update && sudo apt-get install -y $(REPORT_FONTS)" >&2; \
		if [ -n "$${CI:-}" ]; then exit 1; fi; \
		echo "(continuing: reports print CJK, Indic, Thai and emoji names as boxes until they are installed)" >&2; \
		exit 0; \
	fi; \
	echo "installing the report's fonts: $(REPORT_FONTS)"; \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q; \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(REPORT_FONTS)

# The store's tests start a real PostgreSQL (pytest-postgresql, tests/pg_ctl.sh): Debian's postgresql server binaries.
PG_BINDIR ?= /usr/lib/postgresql/15/bin

postgresql:
	@if [ -x "$(PG_BINDIR)/pg_ctl" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"; \
	else \
		echo "PostgreSQL ($(PG_BINDIR)/pg_ctl) is missing and cannot be installed without root." >&2; \
		echo "Install it with:  sudo apt-get update && sudo apt-get install -y postgresql" >&2; \
		if [ -n "$${CI:-}" ]; then exit 1; fi; \
		echo "(continuing: the store's PostgreSQL tests will fail until it is installed)" >&2; exit 0; \
	fi; \
	echo "installing Debian postgresql"; \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q; \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql

run: venv fonts
	$(VENV)/bin/streamlit run app.py

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

typecheck: venv
	$(VENV)/bin/mypy

# One pytest worker more than the machine has cores: a run on 2 cores used 1.44 of them with a worker per core
# (user + system CPU over the run's wall time, 2026-12-06), the rest waiting on browsers, servers and subprocesses.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

# mypy and the packaging smoke test side by side, before the suite: each runs on one core and they share nothing (the
# smoke test builds the working tree into a temporary directory and installs it there; mypy reads economics/, ui/ and
# app.py). Either's failure stops make before pytest, as mypy's did; the smoke test's output is shown after mypy's.
# Started together with the two in turn (clean mypy cache each, load 10-14): 478 s against 676 s.
# The suite's own modules compiled once before it: with PYTHONDONTWRITEBYTECODE set (as in this machine's
# environment) no process writes its bytecode, so each of the suite's Python processes (the workers, every
# `python -m economics`, server and bench script a test starts) compiled the modules it imports from source again; a
# process still reads bytecode that exists. 1 s of CPU here; two CLI test files 0.80x CPU (docs/speed.md, suite10).
test: venv browser fonts postgresql
	$(VENV)/bin/ruff check .
	@echo "$(VENV)/bin/mypy & .ci/wheel-smoke $(PY)"; log="$$(mktemp)"; \
	.ci/wheel-smoke $(PY) >"$$log" 2>&1 & smoke=$$!; \
	status=0; $(VENV)/bin/mypy || status=$$?; \
	wait "$$smoke" || status=$$?; \
	cat "$$log"; rm -f "$$log"; exit "$$status"
	$(PY) -m compileall -q economics ui bench tools app.py
	$(PY) -m pytest -n $(TEST_WORKERS) --durations=60

quick: venv fonts
	$(PY) -m pytest -n logical -q -m "not slow"

# The property tests on fresh random examples (make test runs them derandomised: the same examples every run).
test-explore: venv
	HYPOTHESIS_PROFILE=explore $(PY) -m pytest -q $$(grep -l "^from hypothesis" tests/*.py)

package: venv
	.ci/wheel-smoke $(PY)

bench: venv
	@shopt -s nullglob; files=(bench/*.py); \
	if [ $${#files[@]} -eq 0 ]; then echo "no bench/*.py"; exit 0; fi; \
	for f in "$${files[@]}"; do echo "== $$f"; $(PY) "$$f"; done

docs: venv
	$(PY) tools/update_readme.py

# The documentation site (mkdocs.yml). make test builds it too, into a temporary directory (tests/test_docs.py).
docs-serve: venv
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve

docs-build: venv
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict -d site

clean:
	rm -rf .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -print0 | xargs -0 rm -rf
