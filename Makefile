# webwinnow: `make run` (set-up included) and `make test` on a fresh machine.
#   make run INPUT='crawl/*.warc.gz more.warc' OUT=results   runs on your own crawl files.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
BYTECODE := $(VENV)/.bytecode-stamp
SAMPLE := data/sample
INPUT  ?= $(SAMPLE)
OUT    ?= out/sample
CONF   ?= conf/webwinnow.toml
BENCH_SET ?= small

export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

PACKAGE_ENV := dist/webwinnow-env.tar.gz

.PHONY: run test test-fast lint bench bench-smoke sample prereqs browser clean package cluster-demo notebooks

run: $(BYTECODE) $(if $(filter $(SAMPLE),$(INPUT)),$(SAMPLE)/planted.json)
	$(VENV)/bin/webwinnow run $(INPUT) --out $(OUT) --conf $(CONF)

test: lint browser
	$(PY) -m pytest -q --durations=15

# The unit tests: no JVM, no browser.
test-fast: $(BYTECODE)
	$(PY) -m pytest -q tests/unit

lint: $(BYTECODE)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The report is tested in a real headless browser: Debian's chromium.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (Debian) for the report's browser tests" >&2; \
	    (apt-get install -y -q chromium >/dev/null 2>&1 || \
	     (apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null)) || \
	    { echo "could not install chromium: install it (apt-get install chromium) or run 'pytest -m \"not browser\"'" >&2; exit 1; }; \
	  else echo "the report's browser tests need chromium: apt-get install chromium" >&2; exit 1; fi; }

bench: $(BYTECODE)
	$(PY) bench/bench_kernel.py
	$(PY) bench/bench_extract.py
	$(PY) bench/bench_pipeline.py --set $(BENCH_SET)
	$(PY) bench/bench_peers.py --set $(BENCH_SET)
	$(PY) bench/bench_scaling.py
	$(PY) bench/bench_index.py --set $(BENCH_SET)
	$(PY) bench/bench_index.py --set $(BENCH_SET) --unit word

# The peers' step of `make bench` on a few pages: that each peer's pinned virtualenv starts (CI).
bench-smoke: $(BYTECODE) $(SAMPLE)/planted.json
	$(PY) bench/bench_peers.py --smoke

sample: $(SAMPLE)/planted.json

# Every notebook in notebooks/, top to bottom, on the run in OUT (the sample run, made first when
# absent): executed copies in build/notebooks/, the figures in OUT/report/figures/.
notebooks: $(BYTECODE)
	@test -f $(OUT)/summary.json || $(MAKE) --no-print-directory run
	$(PY) notebooks/execute.py --out $(OUT)

# What a cluster needs: the wheel, and a packed virtualenv holding it and its native dependencies
# (spark-submit --archives dist/webwinnow-env.tar.gz#env --conf spark.pyspark.python=./env/bin/python).
package: $(PACKAGE_ENV)

$(PACKAGE_ENV): $(STAMP) pyproject.toml $(shell git ls-files lib 2>/dev/null)
	$(PY) tests/cluster/package.py

# A Spark standalone cluster on this machine (a master, two workers) runs the whole pipeline
# submitted with plain spark-submit and the packed environment; its tables must equal local mode's.
cluster-demo: $(PACKAGE_ENV) $(SAMPLE)/planted.json
	$(PY) tests/cluster/demo.py
$(SAMPLE)/planted.json: $(STAMP) $(wildcard lib/webwinnow/sample/*.py)
	$(VENV)/bin/webwinnow sample $(SAMPLE)

# Prerequisites are checked before anything is installed, with a message saying what to do.
prereqs:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null || { \
	  echo "webwinnow needs Python >= 3.11 as '$(PYTHON)'. Install it (Debian: apt-get install python3) or run 'make PYTHON=/path/to/python3.11 ...'." >&2; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { \
	  echo "Python's venv module is missing: install it (Debian: apt-get install python3-venv)." >&2; exit 1; }
	@if ! command -v java >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Java not found: installing openjdk-17-jre-headless with apt-get" >&2; \
	  (apt-get install -y -q openjdk-17-jre-headless >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null && apt-get install -y -q openjdk-17-jre-headless >/dev/null)) || true; \
	fi
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	case "$$v" in 17|21) ;; \
	  "") echo "Spark needs Java 17 or 21 and 'java' is not on PATH: install it (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME and PATH." >&2; exit 1;; \
	  *) echo "Spark 4 needs Java 17 or 21; 'java' is version $$v. Install openjdk-17-jre-headless (or 21) and put it first on PATH." >&2; exit 1;; \
	esac

$(STAMP): pyproject.toml | prereqs
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,connect]'
	@touch $(STAMP)

# The package's bytecode, written whatever PYTHONDONTWRITEBYTECODE says (container images often
# set it): an editable install compiles nothing, so each process of a run (the command, Spark's
# Python daemon) compiled every module it imported from source, about 0.3 CPU-s each. compileall
# rewrites only what changed.
$(BYTECODE): $(STAMP) $(shell find lib -name '*.py' 2>/dev/null)
	@$(PY) -m compileall -q lib >/dev/null || \
	  echo "note: could not write the package's bytecode in lib/ (not writable?): each run compiles it again" >&2
	@touch $(BYTECODE)

clean:
	rm -rf out data/sample .pytest_cache .hypothesis build dist
