# Two commands do all the set-up: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export SOLAR_HOME ?= $(CURDIR)/data/solar_home

.PHONY: setup demo test test-slow test-dagster-range bench ui clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@command -v glpsol >/dev/null 2>&1 || { echo "installing glpk-utils (glpsol)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq glpk-utils >/dev/null; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt torch==2.13.0
	$(BIN)/pip install -q -c constraints.txt -e '.[test,hf,postgres,dask,k8s]'  # ranges in pyproject.toml, tested versions in constraints.txt
	touch $(STAMP)

# Two workers side by side (the shipped zoo: 92 s with one, 55 s with two on a 2-core machine);
# `make demo JOBS=1` for one.
JOBS ?= 2
demo: setup
	$(BIN)/solar analyze data/workloads --hardware H100_SXM --jobs $(JOBS)

# The fast suite (CI: .ci/run). Tests marked slow (a Dagster run per case, worker isolation with real
# time limits, PostgreSQL, the browser, timing comparisons) run with `make test-slow`.
test: setup
	$(BIN)/python -m pytest -q -m "not slow"

test-slow: setup
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  echo "installing postgresql (tests/test_postgres.py starts a server)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
	@command -v chromium >/dev/null 2>&1 || { echo "installing chromium (tests/test_browser_ui.py drives it headless)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	$(BIN)/python -m pytest -q -m slow

# The Dagster tests on the lowest and the newest Dagster the range in pyproject.toml allows (each put
# ahead of the venv's on PYTHONPATH; the venv keeps the tested version of constraints.txt).
DAGSTER_RANGE ?= 1.13.0 1.13.29
DAGSTER_TESTS := tests/test_dagster_public_api.py tests/test_assets.py tests/test_asset_compute.py \
	tests/test_dagster_call.py tests/test_dagster_spine.py tests/test_dagster_step_limits.py
test-dagster-range: setup
	@for v in $(DAGSTER_RANGE); do \
	  d=$$(mktemp -d); echo "== dagster $$v"; \
	  $(BIN)/pip install -q --target $$d --no-deps dagster==$$v dagster-pipes==$$v dagster-shared==$$v || exit 1; \
	  PYTHONPATH=$$d $(BIN)/python -m pytest -q -p no:cacheprovider $(DAGSTER_TESTS) || exit 1; rm -rf $$d; \
	done

bench: setup
	$(BIN)/python bench/stage_times.py

ui: setup
	$(BIN)/solar ui

clean:
	rm -rf $(VENV) data/solar_home
