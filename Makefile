# Two commands do everything:  make lab   (set up, then open JupyterLab on your work/ folder)
#                              make test  (set up, then run every test)
SHELL := /bin/bash
VENV ?= .venv
# The interpreter that made $(VENV) (tools/setup_env.py records it), else python3.11, else python3.
# Another one given (make lab PYTHON=/path/to/python3.11) makes the virtualenv anew with it.
PYTHON ?= $(or $(wildcard $(shell cat $(VENV)/.python 2>/dev/null)),$(shell command -v python3.11 || command -v python3))
# The student's own copy of course/: made the first time, a chapter added when a release brings a new
# one, never overwritten and never deleted by any target here (git clean -x would: it is ignored by git).
WORK ?= work
# torch on Linux: PyTorch's CPU index (a CPU-sized download); TORCH_INDEX= (empty): PyPI's default build
# (CUDA's on Linux, several GB); or a CUDA index of PyTorch's, e.g. https://download.pytorch.org/whl/cu126
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
ifeq ($(DLCOURSE_EXISTING_ENV),1)
# Binder (binder/start sets it): the environment the image was built with, used as it is; nothing installed
BIN := $(patsubst %/,%,$(dir $(shell command -v python3)))
else
BIN := $(abspath $(VENV))/bin
endif
# nbgrader shells out to alembic and jupyter: the environment's bin/ must be on PATH.
export PATH := $(BIN):$(PATH)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# JupyterLab as a student has it: nbgrader's instructor parts off (jupyter-config/student/, as on Binder)
STUDENT_LAB := JUPYTER_CONFIG_PATH="$(CURDIR)/jupyter-config/student$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}"
LAB := $(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: setup lab lab-instructor work test test-setup test-load test-browser release grade feedback export formgrader check benchmark clean clean-grading hub hub-stop test-hub

# tools/setup_env.py: the interpreter checked (one line if it cannot serve), the virtualenv made anew when
# another interpreter made it, torch, the lock's packages with a progress line each, the stamp; seconds when done
ifeq ($(DLCOURSE_EXISTING_ENV),1)
setup: ;
else
setup:
	@test -n "$(PYTHON)" || { echo "make: found neither python3.11 nor python3: install Python 3.11, or make lab PYTHON=/path/to/python3.11" >&2; exit 2; }
	@$(PYTHON) tools/setup_env.py --venv "$(VENV)" --torch-index "$(TORCH_INDEX)"
endif

# jupyter refuses root unless told; a container's user is often root. LAB_ARGS: more options.
lab: setup work
	$(STUDENT_LAB) $(LAB) --ServerApp.root_dir="$(abspath $(WORK))" $(LAB_ARGS)

# the instructor's lab: the repository, with nbgrader's Formgrader, Course List and Create Assignment
lab-instructor: setup
	$(LAB) --ServerApp.root_dir="$(CURDIR)" $(LAB_ARGS)

# $(WORK)/<chapter>/ from course/<chapter>/ for each chapter it does not have yet; nothing is overwritten
work:
	@mkdir -p "$(WORK)"
	@for chapter in course/*/; do name=$$(basename "$$chapter"); \
	  if [ ! -e "$(WORK)/$$name" ]; then cp -R "$$chapter" "$(WORK)/$$name" && echo "$(WORK)/$$name: new chapter"; fi; \
	done

test: setup
	MPLBACKEND=Agg $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup -q -p no:cacheprovider --durations=30 -m "not fresh_setup and not hub and not load and not every_chapter"

# Same submission, same score on a busy machine: ch11 and ch12 graded and self-checked quiet, then under 8 CPU
# hogs each in a cpu cgroup of its own (autograder/tests/test_load.py; root for the cgroups; about 10 minutes)
test-load: setup
	MPLBACKEND=Agg $(BIN)/python -m pytest -q -p no:cacheprovider -m load autograder/tests/test_load.py

# The first ten minutes on Debian: make setup, lab and check as a new account with Debian's own python3.11,
# from a copy of this checkout in its home folder (tests/test_fresh_setup.py; root, a few minutes of download)
test-setup: setup
	MPLBACKEND=Agg $(BIN)/python -m pytest -q -p no:cacheprovider -s -m fresh_setup tests/test_fresh_setup.py

# The class on a real JupyterHub (hub/hub.py; root, Linux, configurable-http-proxy from npm): accounts for an
# instructor and two students, nbgrader's exchange, the formgrader, ch01 released; all of it listed, recorded
# in $(HUB_DIR)/state.json, and removed by make hub-stop. HUB_PORT, HUB_IP, HUB_DIR, HUB_ACCOUNT_PREFIX: see hub/hub.py.
HUB_DIR ?= /srv/dlcourse-hub
hub: setup
	@HUB_DIR="$(HUB_DIR)" TORCH_INDEX="$(TORCH_INDEX)" $(BIN)/python hub/hub.py up

hub-stop:
	@HUB_DIR="$(HUB_DIR)" $(or $(wildcard $(BIN)/python),python3) hub/hub.py down

# The whole class on that hub in Chromium (tests/test_hub.py: its own hub, stopped and removed at the end)
test-hub: setup
	REQUIRE_BROWSER=1 MPLBACKEND=Agg $(BIN)/python -m pytest -q -p no:cacheprovider -s -m hub tests/test_hub.py

test-browser: setup
	REQUIRE_BROWSER=1 MPLBACKEND=Agg $(BIN)/python -m pytest -q -p no:cacheprovider -m every_chapter tests/test_browser.py

release: setup
	$(BIN)/python -m autograder release
	$(BIN)/python -m autograder prepare

# Into an OUT graded before, hand grades and comments are kept; RESET_HAND_GRADES=1 drops them.
# DUE="2027-01-15 23:59 UTC": the due date (its time zone is required), for the lateness columns.
# LIMITS="cell_seconds=120 ram_bytes=4e9": each sandbox's bounds by name (python -m autograder grade --help lists them).
grade: setup
	@MPLBACKEND=Agg $(BIN)/python -m autograder grade "$(SUBMISSIONS)" "$(OUT)" $(if $(SCHEDULER),--scheduler "$(SCHEDULER)") $(if $(GRADE_JOBS),--jobs $(GRADE_JOBS)) $(if $(UNSAFE),--unsafe-no-isolation) $(if $(filter-out 0,$(RESET_HAND_GRADES)),--reset-hand-grades) $(if $(DUE),--due "$(DUE)") $(if $(LIMITS),--limits "$(LIMITS)")

# After grading by hand in the formgrader: feedback pages, CSVs and report anew, with the hand grades
feedback: setup
	@MPLBACKEND=Agg $(BIN)/python -m autograder feedback "$(OUT)"

export: setup
	@MPLBACKEND=Agg $(BIN)/python -m autograder export "$(OUT)"

# The formgrader on a grading run (OUT of make grade): grade free-response answers by hand, then make export.
# Works as root (--allow-root) and without the venv activated; LAB_ARGS: more options (e.g. --no-browser).
formgrader: setup
	@test -f "$(OUT)/nbgrader_config.py" || { echo "make formgrader: OUT=$(OUT) holds no grading run (make grade SUBMISSIONS=... OUT=... first)" >&2; exit 2; }
	cd "$(OUT)" && JUPYTER_CONFIG_PATH="$(CURDIR)/autograder/formgrader_config" $(LAB) --ServerApp.root_dir="$(abspath $(OUT))" --ServerApp.default_url=/formgrader $(LAB_ARGS)

# make check CHAPTER=ch01_perceptron: $(WORK)/ch01_perceptron/ch01_perceptron.ipynb; NOTEBOOK=<path>: any
# notebook; neither: the notebook of $(WORK) saved last (on Binder, WORK is course/: binder/start).
# A line per exercise and the first failing check; DETAILS=1: every failing check.
check: setup
	@notebook="$(or $(NOTEBOOK),$(if $(CHAPTER),$(WORK)/$(CHAPTER)/$(CHAPTER).ipynb))"; \
	if [ -z "$$notebook" ]; then notebook=$$(ls -t "$(WORK)"/*/*.ipynb 2>/dev/null | head -n 1); \
	  if [ -z "$$notebook" ]; then echo "check: no notebook in $(WORK)/ to check: make check CHAPTER=<chapter> or NOTEBOOK=<path>" >&2; exit 2; fi; \
	  echo "checking $$notebook (saved last; CHAPTER=<chapter> for another)"; fi; \
	MPLBACKEND=Agg $(BIN)/python -m autograder check $(if $(filter-out 0,$(DETAILS)),--details) $(if $(LIMITS),--limits "$(LIMITS)") "$$notebook"

# Chapter budgets, grading against its limits (overhead, bare code, stock nbgrader on the whole class, Dask
# with 1 and 2 workers), widget latency in a browser, and Binder rehearsed (a clean virtualenv from binder/
# alone, every chapter on 1 CPU and 2 GB; BINDER_WHEELS=<folder>: torch's +cpu wheel from there where its
# index cannot be reached and pip's own configuration has none). GRADING_BENCHMARK: the grading benchmark's
# options, e.g. a quick run: GRADING_BENCHMARK="--students 4 --chapters ch01_perceptron,ch06_transformers --dask"
# A large class: LARGE_CLASS, its options (classes of 30, 300 and 1,000 notebooks of ch01; e.g. "--sizes 30,300")
GRADING_BENCHMARK ?= --dask --students 3
LARGE_CLASS ?= --sizes 30,300,1000
benchmark: setup
	MPLBACKEND=Agg $(BIN)/python -m benchmarks.chapter_budgets
	MPLBACKEND=Agg $(BIN)/python -m benchmarks.grading $(GRADING_BENCHMARK)
	MPLBACKEND=Agg $(BIN)/python -m benchmarks.grading large-class $(LARGE_CLASS)
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
