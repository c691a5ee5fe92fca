# Two commands on a fresh machine:
#   make demo   create .venv, install cellsafe, run the demo
#   make test   install cellsafe with its test extras into .venv and run the test suite
#   make test-fast   the same without the tests marked slow (Spark, browser, long statistical checks)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-fast bench clean java chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

demo: $(VENV)/.installed
	$(BIN)/cellsafe demo --output demo-output --overwrite

# The Spark engine's tests need Java 17: installed here when running as root, else they skip and say why.
java:
	@command -v java >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && { apt-get install -y -q openjdk-17-jre-headless >/dev/null 2>&1 \
	  || { apt-get update -q >/dev/null && apt-get install -y -q openjdk-17-jre-headless >/dev/null; }; }; } \
	  || echo "Java 17 not found: the Spark engine's tests will skip (apt-get install -y openjdk-17-jre-headless)"

# The release report's browser test needs Debian's chromium: installed here when running as root, else it skips.
chromium:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && { apt-get install -y -q chromium >/dev/null 2>&1 \
	  || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }; }; } \
	  || echo "chromium not found: the report's browser test will skip (apt-get install -y chromium)"

test: $(VENV)/.installed-test java chromium
	$(BIN)/python -m pytest -q

# What developers run between changes: every test not marked slow (CI runs them all with make test).
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m "not slow"

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) demo-output
