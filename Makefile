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

.PHONY: setup lab test test-browser release grade feedback export check benchmark clean clean-grading

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

# Into an OUT graded before, hand grades and comments are kept; RESET_HAND_GRADES=1 drops them.
# DUE="2027-01-15 23:59 UTC": the due date (its time zone is required), for the lateness columns.
grade: setup
	@MPLBACKEND=Agg $(BIN)/python -m autograder grade "$(SUBMISSIONS)" "$(OUT)" $(if $(SCHEDULER),--scheduler "$(SCHEDULER)") $(if $(GRADE_JOBS),--jobs $(GRADE_JOBS)) $(if $(UNSAFE),--unsafe-no-isolation) $(if $(filter-out 0,$(RESET_HAND_GRADES)),--reset-hand-grades) $(if $(DUE),--due "$(DUE)")

# After grading by hand in the formgrader: feedback pages, CSVs and report anew, with the hand grades
feedback: setup
	@MPLBACKEND=Agg $(BIN)/python -m autograder feedback "$(OUT)"

export: setup
	@MPLBACKEND=Agg $(BIN)/python -m autograder export "$(OUT)"

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

# Removes only what can be rebuilt: never grading/ (nbgrader's gradebook, hand grades, collected
# submissions) nor an OUT folder. `make clean-grading` deletes grading/, after asking.
clean:
	rm -rf $(VENV) build

clean-grading:
	@if [ "$(CONFIRM)" != yes ]; then \
	  if [ -t 0 ]; then \
	    read -r -p "Delete grading/ (nbgrader's gradebook with every hand grade, and the collected submissions)? Type yes: " answer; \
	    [ "$$answer" = yes ] || { echo "make clean-grading: kept grading/"; exit 1; }; \
	  else echo "make clean-grading: refusing to delete grading/ without a terminal to confirm; CONFIRM=yes to delete it" >&2; exit 1; fi; \
	fi
	rm -rf grading
