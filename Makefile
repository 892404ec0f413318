# Gossamer: `make demo` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
# Every install takes the versions `make test` passed with (`make lock` writes them again).
CONSTRAINTS := constraints.txt
# The demo crawls, indexes, ranks and searches: the runtime with those extras, no dev tools.
DEMO_EXTRAS := search,rank,charts
DEMO_STAMP  := $(VENV)/.installed-demo
STAMP       := $(VENV)/.installed

.PHONY: demo test lint typecheck unit wheel lock clean browser spin redis proxy java mutation

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade -c $(CONSTRAINTS) pip

$(DEMO_STAMP): pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP) install --quiet -c $(CONSTRAINTS) -e '.[$(DEMO_EXTRAS)]'
	touch $(DEMO_STAMP)

# Every extra (spark too, which `all` leaves out) and the development tools; the demo's needs
# are a part of them.
$(STAMP): pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP) install --quiet -c $(CONSTRAINTS) -e '.[all,dev,spark]'
	touch $(STAMP) $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/gossamer demo --out demo-out

# Write constraints.txt again from the development venv (run it after `make test` passed with
# newer versions, e.g. once `$(PIP) install -U ...` brought them): every package but Gossamer.
lock: $(STAMP)
	{ sed -n '/^#/p' $(CONSTRAINTS); $(PIP) freeze --all --exclude-editable; } > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)

# The wheel `pip install .` builds, installed alone (no extras) in a throwaway venv that has
# no pip of its own (the development venv's pip installs into it): the lean crawler installs
# and starts from the package as published, not only from this checkout.
WHEEL_DIR := $(VENV)/wheel
wheel: $(STAMP)
	rm -rf $(WHEEL_DIR)
	$(PIP) wheel --quiet --no-deps -w $(WHEEL_DIR)/dist .
	$(PYTHON) -m venv --without-pip $(WHEEL_DIR)/venv
	$(PIP) --python $(WHEEL_DIR)/venv/bin/python install --quiet -c $(CONSTRAINTS) \
	  $(WHEEL_DIR)/dist/gossamer-*.whl
	$(WHEEL_DIR)/venv/bin/gossamer --version
	$(WHEEL_DIR)/venv/bin/gossamer --help > /dev/null
	$(WHEEL_DIR)/venv/bin/gossamer index $(WHEEL_DIR) 2>&1 | grep -qx \
	  "gossamer: error: gossamer index needs the search extra: pip install 'gossamer\[search\]'"
	rm -rf $(WHEEL_DIR)

lint: $(STAMP)
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/ruff check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q tests/unit

# The web UI's browser test drives Debian's Chromium; install it when we can (root + apt).
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "chromium not installed: the browser test will be skipped"; }

# The model checks (models/, tests/integration/test_spin_model.py) need Debian's spin and a
# C compiler for the verifiers it generates; install them when we can (root + apt).
spin:
	@{ command -v spin && command -v gcc; } >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spin gcc >/dev/null) \
	  || echo "spin or gcc not installed: the Spin model checks will be skipped"; }

# The shared-frontier tests (tests/unit/distributed, tests/integration/test_redis_*.py) start
# Debian's redis-server themselves; install it when we can (root + apt).
redis:
	@command -v redis-server >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null) \
	  || echo "redis-server not installed: the shared-frontier tests will be skipped"; }

# The proxy tests (tests/integration/test_proxies_cookies.py) start Debian's tinyproxy
# themselves; install it when we can (root + apt).
proxy:
	@command -v tinyproxy >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tinyproxy >/dev/null) \
	  || echo "tinyproxy not installed: the proxy tests will be skipped"; }

# The Spark engine's tests (tests/unit/spark) run Spark in this machine's JVM: Debian's
# OpenJDK 17; install it when we can (root + apt).
java:
	@command -v java >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null) \
	  || echo "java not installed: the Spark tests will be skipped"; }

test: $(STAMP) lint typecheck wheel browser spin redis proxy java
	$(BIN)/pytest -q

# Mutation testing of the modules whose mistakes cost most ([tool.mutmut] in pyproject.toml
# names them and the tests run against them). CPU heavy, so not part of `make test`; a fresh
# run each time. MUTANTS narrows it, e.g. make mutation MUTANTS='gossamer.robots.matcher*'.
# TESTING.md lists the kill rates and explains every survivor.
MUTANTS ?=
mutation: $(STAMP)
	rm -rf mutants
	set -f; $(BIN)/mutmut run --max-children 2 $(MUTANTS) > /dev/null
	@$(BIN)/mutmut results --all=true | awk -F': ' ' \
	  $$2 == "not checked" { next } \
	  { name = $$1; sub(/^ +/, "", name); sub(/\.x[_\302-\377].*/, "", name); \
	    total[name]++; if ($$2 == "killed" || $$2 == "timeout") caught[name]++; \
	    else left[name] = left[name] "\n    " $$1 ": " $$2 } \
	  END { for (m in total) printf "%-28s %4d/%-4d killed%s\n", m, caught[m], total[m], left[m] }'

clean:
	rm -rf $(VENV) demo-out mutants .mypy_cache .ruff_cache .pytest_cache
