# tcplab developer commands. `make test` is what CI runs (.ci/run) and what a new user types.
#
#   make install   uv (if missing) + .venv with the dev tools and `tcpsim` built in release mode
#   make test      cargo test + clippy (if installed) + pytest
#   make bench     the simulator benchmark (simulator/bench/bench.py, against ns-3)
#   make clean     remove .venv and the Rust build products

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

PYTHON ?= python3
UV_VERSION ?= 0.13.9
VENV := .venv
# uv on PATH if there is one, else the one `make install` puts in the user site.
UV ?= $(shell command -v uv 2>/dev/null || echo "$(PYTHON) -m uv")

# Only package registries are reachable: use this machine's Python, never download one.
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(CURDIR)/$(VENV)

.PHONY: install test bench clean

install:
	@$(UV) --version >/dev/null 2>&1 || { \
	  echo "uv not found: installing uv==$(UV_VERSION) with pip (user site)"; \
	  PIP_ROOT_USER_ACTION=ignore $(PYTHON) -m pip install --quiet --user "uv==$(UV_VERSION)" \
	    || PIP_ROOT_USER_ACTION=ignore $(PYTHON) -m pip install --quiet "uv==$(UV_VERSION)"; }
	@# uv rebuilds tcpsim (maturin, release) whenever its Rust sources change: see the
	@# cache-keys in simulator/python/pyproject.toml.
	$(UV) sync --locked --all-groups --python $(PYTHON)

test: install
	cd simulator && cargo test --workspace --release
	@if cargo clippy --version >/dev/null 2>&1; then \
	  echo "cd simulator && cargo clippy --workspace --all-targets -- -D warnings"; \
	  cd simulator && cargo clippy --workspace --all-targets -- -D warnings; \
	else \
	  echo "NOTE: cargo clippy is not installed here (rustup component add clippy): lint skipped"; \
	fi
	$(VENV)/bin/python -m pytest tests -q

# bench.py creates the ns-3 peer's .venv-ns3 when it is missing; `make bench BENCH_ARGS=--no-ns3`
# measures tcpsim alone.
BENCH_ARGS ?= --install-ns3

bench: install
	$(VENV)/bin/python simulator/bench/bench.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
	cd simulator && cargo clean
	-@$(UV) cache clean tcpsim >/dev/null 2>&1
