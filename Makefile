# Two commands do everything:  make lab   (set up, then open JupyterLab on course/)
#                              make test  (set up, then run every test)
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
# nbgrader shells out to alembic and jupyter: the environment's bin/ must be on PATH.
export PATH := $(BIN):$(PATH)
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements.lock pyproject.toml | cksum | cut -d' ' -f1)
PIP := $(BIN)/python -m pip --disable-pip-version-check --quiet
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# jupyter-config/ is the course's Jupyter configuration, copied into the environment's etc/jupyter
LABCONFIG := $(VENV)/etc/jupyter/labconfig/page_config.d/dlcourse.json

.PHONY: setup lab test test-browser release grade export formgrader check benchmark clean

setup: $(STAMP) $(LABCONFIG)

$(STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -r requirements.txt -c requirements.lock
	$(PIP) install --no-deps --no-build-isolation -e .
	@MPLBACKEND=Agg $(BIN)/python -c "import matplotlib.pyplot" # build matplotlib's font cache once
	@rm -f $(VENV)/.installed-* && touch $@
	@echo "environment ready in $(VENV)"

$(LABCONFIG): $(shell find jupyter-config -type f) $(STAMP)
	@mkdir -p $(VENV)/etc/jupyter && cp -r jupyter-config/. $(VENV)/etc/jupyter/

# jupyter refuses root unless told; a container's user is often root. LAB_ARGS: more options.
lab: setup
	$(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)/course" $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

test: setup
	MPLBACKEND=Agg $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup -q -p no:cacheprovider

test-browser: setup
	REQUIRE_BROWSER=1 MPLBACKEND=Agg $(BIN)/python -m pytest -q -p no:cacheprovider -m browser tests

release: setup
	$(BIN)/python -m autograder release

grade: setup
	@MPLBACKEND=Agg $(BIN)/python -m autograder grade "$(SUBMISSIONS)" "$(OUT)" $(if $(SCHEDULER),--scheduler "$(SCHEDULER)") $(if $(GRADE_JOBS),--jobs $(GRADE_JOBS)) $(if $(UNSAFE),--unsafe-no-isolation)

export: setup
	@$(BIN)/python -m autograder export "$(OUT)"

# The formgrader on a grading run (OUT of make grade): grade free-response answers by hand, then make export.
# Works as root (--allow-root) and without the venv activated; LAB_ARGS: more options (e.g. --no-browser).
formgrader: setup
	@test -f "$(OUT)/nbgrader_config.py" || { echo "make formgrader: OUT=$(OUT) holds no grading run (make grade SUBMISSIONS=... OUT=... first)" >&2; exit 2; }
	cd "$(OUT)" && JUPYTER_CONFIG_PATH="$(CURDIR)/autograder/formgrader_config" $(BIN)/jupyter lab --ServerApp.root_dir="$(abspath $(OUT))" --ServerApp.default_url=/formgrader $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

check: setup
	@MPLBACKEND=Agg $(BIN)/python -m autograder check "$(NOTEBOOK)"

# Chapter budgets, grading throughput against stock nbgrader, widget latency in a browser, and Binder
# rehearsed (a clean virtualenv from binder/ alone, every chapter on 1 CPU and 2 GB; BINDER_WHEELS=<folder>:
# torch's +cpu wheel from there where its index cannot be reached and pip's own configuration has none).
benchmark: setup
	MPLBACKEND=Agg $(BIN)/python -m benchmarks.chapter_budgets
	MPLBACKEND=Agg $(BIN)/python -m benchmarks.grading --stock-sample 3
	MPLBACKEND=Agg $(BIN)/python -m benchmarks.widget_latency --strict
	MPLBACKEND=Agg $(BIN)/python -m benchmarks.binder $(if $(BINDER_WHEELS),--wheels "$(BINDER_WHEELS)")

clean:
	rm -rf $(VENV) grading build out
