# One command to run the app, one to run the tests; both bootstrap their own virtualenv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# Menagerie robots resolve from a local checkout when one sits beside the repo (CI, dev).
SHARED_MENAGERIE := $(abspath ../shared/menagerie)
export MENAGERIE_ROOT ?= $(if $(wildcard $(SHARED_MENAGERIE)),$(SHARED_MENAGERIE),)

.PHONY: run test lint bench browser clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[dev]'
	$(PY) -c "from posekit.warmup import compile_kernels; print(f'posekit: engine kernels compiled in {compile_kernels():.0f} s')"
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/posekit up

browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update && apt-get install -y chromium; \
	  else sudo apt-get update && sudo apt-get install -y chromium; fi; }

test: $(STAMP) browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) bench/ik_step.py

clean:
	rm -rf $(VENV)
