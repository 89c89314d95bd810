# Two commands: `make run` (install + start on the bundled sample), `make test` (install + all tests).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# DB unset: `neardup app` names no database and starts on the bundled sample; make run DB=crawl.duckdb opens yours.
DB     ?=
SAMPLE := sample_data/crawl.jsonl.gz

# `make test-fast`: the tests that need nothing beyond the venv (no Chromium, JVM or wget; markers in pyproject.toml).
.PHONY: run test test-fast install install-dev system-deps lint bench sample screenshots clean

# What running needs (neardup and its dependencies); the dev extra (pytest, Playwright, Spark, mypy, ...)
# only for the targets that test, lint or take screenshots.
$(VENV)/.installed: pyproject.toml setup.py neardup/_kernels.c neardup/_html.c neardup/_archives.c neardup/_payload.c neardup/_warc_members.c neardup/vendor/lexbor/core/hash.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

run: install
	$(VENV)/bin/neardup app $(if $(DB),--db $(DB))

# Chromium, Java and wget: installed with apt-get when root, otherwise named (scripts/system_deps.sh).
system-deps:
	bash scripts/system_deps.sh

LINTED := neardup tests bench scripts app.py pages setup.py

lint: install-dev
	$(PY) -m ruff check $(LINTED)
	$(PY) -m ruff format --check $(LINTED)
	$(PY) -m mypy  # neardup/, as [tool.mypy] in pyproject.toml says
	$(VENV)/bin/lint-imports  # the layer contract in pyproject.toml ([tool.importlinter])

test: install-dev system-deps lint
	$(PY) -m pytest -q

test-fast: install-dev lint
	$(PY) -m pytest -q -m "not browser and not spark and not wheel and not wget"

# The README's screenshots (docs/*.png), taken by the browser tests; `make test` writes them to a temporary folder.
screenshots: install-dev system-deps
	NEARDUP_SCREENSHOTS=docs $(PY) -m pytest -q tests/test_browser.py tests/test_browser_labeling.py

bench: install-dev
	$(PY) -m pip install --quiet -e '.[bench]'  # the expert-stack peer's rensa
	$(PY) bench/bench.py --pages 100000

sample:
	$(PYTHON) scripts/make_sample.py --out $(SAMPLE) --truth sample_data/truth.csv --seed 7
	$(PYTHON) scripts/jsonl_to_warc.py --one-stream $(SAMPLE) sample_data/crawl.warc.gz

clean:
	rm -rf $(VENV) $(or $(DB),neardup.duckdb) $(or $(DB),neardup.duckdb).wal
