# One command to run the app, one to run the tests; both bootstrap their own virtualenv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# `make run` installs posekit with its server extra (the API, the viewer); `make test`
# adds the dev extra (every layer, the test, lint and docs tools).
RUNTIME_STAMP := $(VENV)/.runtime-stamp
DEV_STAMP := $(VENV)/.dev-stamp
# Menagerie robots resolve from a local checkout when one sits beside the repo (CI, dev).
SHARED_MENAGERIE := $(abspath ../shared/menagerie)
export MENAGERIE_ROOT ?= $(if $(wildcard $(SHARED_MENAGERIE)),$(SHARED_MENAGERIE),)

.PHONY: run test lint docs bench browser nginx compose lock clean

$(RUNTIME_STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "posekit needs Python 3.11 or newer; $(PYTHON) is $$($(PYTHON) --version 2>&1) (make PYTHON=python3.11 ...)" >&2; \
	  exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[server]'
	$(PY) -c "from posekit.warmup import compile_kernels; print(f'posekit: engine kernels compiled in {compile_kernels():.0f} s')"
	touch $@

$(DEV_STAMP): $(RUNTIME_STAMP)
	$(PY) -m pip install -e '.[dev]'
	touch $@

run: $(RUNTIME_STAMP)
	$(VENV)/bin/posekit up

# A Chromium for the browser tests: found, or installed through apt; else they skip (not in CI).
browser:
	@sh tools/ensure_browser.sh

# An nginx for the cluster tests: found, or installed through apt; else they skip (not in CI).
nginx:
	@sh tools/ensure_nginx.sh

# A compose CLI to validate the compose files with: found, or installed through apt.
compose:
	@sh tools/ensure_compose.sh

test: $(DEV_STAMP) browser nginx compose
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(MAKE) docs
	$(PY) -m pytest

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The documentation site (MkDocs, Material), warnings as errors, into site/.
docs: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

bench: $(RUNTIME_STAMP)
	$(PY) bench/ik_step.py

# Refresh requirements.lock, the versions the Docker image installs: posekit and its
# server and cluster extras as pip resolves them today, in a clean virtualenv of its own.
LOCK_VENV := $(or $(TMPDIR),/tmp)/posekit-lock-venv
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install '.[server,cluster]'
	{ echo "# The versions the Docker image installs (pip install --constraint requirements.lock .)."; \
	  echo "# posekit's runtime dependencies, resolved in a clean virtualenv by 'make lock' on"; \
	  echo "# Python $$($(LOCK_VENV)/bin/python -c 'import platform; print(platform.python_version())'), Linux; refresh with 'make lock'."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude posekit; \
	} > requirements.lock
	rm -rf $(LOCK_VENV)

clean:
	rm -rf $(VENV)
