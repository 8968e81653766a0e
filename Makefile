# One command each, on a fresh clone: `make book`, `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BUILD := $(PY) -m normbook.publish.build
PROFILE ?= cpu
CHAPTER ?=
PARAMS ?=
CHAPTERS ?=
GRID ?=
GRID_FILE ?=
WORKERS ?=
SCHEDULER ?=
JOBS ?=
EXERCISES ?=
CHEAP ?=

.PHONY: book test unit lint format params smoke chapter sweep exercises clean clean-cache venv benchmark plan paper-shape paper-run lab

venv: $(VENV)/.installed

# The environment is (re)created whenever the pinned dependencies change.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	touch $@

## Execute every chapter at the cpu profile (stale ones only) and build the HTML
## (`make book CHAPTERS=a1_localization,a2_mechanism`: only those; independent chapters run
## two at a time on two cores or more, `JOBS=1` one at a time).
book: venv
	$(BUILD) params --write
	$(BUILD) book --profile $(PROFILE) $(if $(CHAPTERS),--chapters $(CHAPTERS)) $(if $(JOBS),--jobs $(JOBS))
	$(PY) -m normbook.publish.sitecheck _build/$(PROFILE)/site/_build/html

## Open the chapters in JupyterLab as notebooks (jupytext; installs the pinned `lab` extra
## once): right-click a chapter's .py, Open With > Jupytext Notebook, and run it.
lab: $(VENV)/.lab-installed
	$(VENV)/bin/jupyter lab --notebook-dir=$(CURDIR)/book $(LAB_ARGS)

$(VENV)/.lab-installed: $(VENV)/.installed
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[lab]'
	touch $@

## Lint and format gate, parameters cells vs specs, unit tests, every chapter executed at
## smoke with an empty cache, book built with -W, the built pages checked to work offline and
## opened in headless Chromium (needs Debian's chromium and chromium-driver; .ci/run installs them).
test: lint params unit smoke

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

## Apply the formatter and the safe lint fixes.
format: venv
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

## Check every chapter's parameters cell against its spec (`make params WRITE=1` regenerates).
params: venv
	$(BUILD) params $(if $(WRITE),--write)

unit: venv
	$(PY) -m pytest

smoke: venv
	rm -rf _build/smoke/cache
	NORMBOOK_CACHE=$(CURDIR)/_build/smoke/cache $(BUILD) book --profile smoke --strict --force $(if $(JOBS),--jobs $(JOBS))
	$(PY) -m normbook.tools.refutable smoke
	$(PY) -m normbook.publish.sitecheck _build/smoke/site/_build/html
	$(PY) -m normbook.publish.browser _build/smoke/site/_build/html

## Re-execute one chapter with new parameters and rebuild its page:
##   make chapter CHAPTER=book/a1_localization.py PARAMS='-p seq_len 200 -p norm group'
chapter: venv
	@test -n "$(CHAPTER)" || { echo "error: set CHAPTER=book/<chapter>.py"; exit 2; }
	$(BUILD) params --write
	$(BUILD) chapter $(CHAPTER) --profile $(PROFILE) $(PARAMS)

## A chapter over a parameter grid, on Dask (a local cluster, one worker per core, or
## SCHEDULER=tcp://host:8786), and a sweep page in the book:
##   make sweep CHAPTER=book/a3_which_norms.py GRID='-p group_counts 1,2,4,8,16,32'
##   make sweep GRID_FILE=grid.yml
sweep: venv
	$(PY) -m normbook.publish.sweep $(if $(GRID_FILE),--grid $(GRID_FILE),$(CHAPTER) --profile $(PROFILE) $(GRID)) $(if $(WORKERS),--workers $(WORKERS)) $(if $(SCHEDULER),--scheduler $(SCHEDULER))

## The book's exercises, each run as its text says (its chapter at `cpu` with its parameters)
## into its own build folder, _build/cpu/exercises/<label>/, sharing the cache; their measured
## cost, what they retrained and their claims' outcome appear in the solutions (the book is
## re-rendered after): `make exercises EXERCISES=a1-ex-detector,b2-ex-threshold`; every
## runnable one by default (hours: most retrain networks); `CHEAP=1` stops any that starts
## training a network. The two exercises that need an edit of the library are never run.
exercises: venv
	$(PY) -m normbook.tools.exercise_runs $(if $(EXERCISES),--only $(EXERCISES)) $(if $(CHEAP),--no-training)

## Training throughput of chapter A1's networks against this machine's matmul peak, kept in
## _build/<profile>/benchmark.json for the book's Build and compute page.
benchmark: venv
	$(PY) -m normbook.tools.benchmark --profile $(PROFILE) --record

## Every chapter at the `paper` profile's full shape on this CPU, its counts cut to a handful:
## each chapter's time and peak memory, seconds per step at each paper geometry, and the
## estimated full `paper` time on this CPU and on a stated GPU (_build/paper-shape/report.md).
paper-shape: venv
	$(PY) -m normbook.tools.shape_run $(if $(CHAPTERS),--chapters $(CHAPTERS))

## Chapter A1's experiment at the paper's scale on one GPU, within DEADLINE seconds (a ladder
## fixed in code fits the budget to it), written to results/paper/a1.json and .npz, which the
## book reads (commit them). A GPU machine without this environment runs the same program:
##   PYTHONPATH=src python3 -m normbook.tools.paperscale a1 --out results/paper --deadline 540
DEADLINE ?= 540
paper-run: venv
	$(PY) -m normbook.tools.paperscale a1 --out results/paper --deadline $(DEADLINE)

## Planned FLOPs per chapter and the estimated GPU time, without running anything:
##   make plan PROFILE=paper
plan: venv
	$(BUILD) book --profile $(PROFILE) --dry-run

clean:
	rm -rf _build

clean-cache: venv
	$(PY) -m normbook.runtime.cache clear
