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
BUNDLE ?=

## The kernels, pinned by default to the reference machine's instruction set (AVX2) in every
## process that computes, so that any x86 CPU with AVX2 computes what the reference's computed:
## oneDNN's convolutions, ATen's kernels and OpenBLAS under numpy, scipy and scikit-learn (its
## Haswell kernels are what it chooses on the reference's Zen 3: the same bits, measured). A
## value the machine already sets is kept. `ISA=native` lets each library choose (2 % faster on
## a Zen 4 measured). A CPU without AVX2 (ARM, older x86) gets no pins: `make fingerprint` says
## so, and `make book BUNDLE=...` gives it the reference's networks (`make pins` shows them).
ISA ?= avx2
ifeq ($(ISA),avx2)
ifneq ($(shell grep -m1 -ow avx2 /proc/cpuinfo 2>/dev/null),)
export ONEDNN_MAX_CPU_ISA ?= AVX2
export ATEN_CPU_CAPABILITY ?= avx2
export OPENBLAS_CORETYPE ?= Haswell
endif
else ifneq ($(ISA),native)
$(error ISA must be avx2 (the default) or native, got '$(ISA)')
endif

.PHONY: book test unit unit-light heavy-after-smoke shape-after-smoke site-checks-after-smoke checks-after-smoke smoke-site-checks smoke-ledger-checks lint format params smoke smoke-build smoke-checks chapter sweep exercises clean clean-cache venv benchmark plan paper-shape paper-run paper-commit lab commands reference fingerprint bundle pins

venv: $(VENV)/.installed

# The environment is (re)created whenever the pinned dependencies change.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	touch $@

## Execute every chapter at the cpu profile (stale ones only) and build the HTML
## (`make book CHAPTERS=a1_localization,a2_mechanism`: only those; independent chapters run
## three at a time on two cores or more, `JOBS=1` one at a time). `make book BUNDLE=<file or URL>`
## first imports a bundle's trained networks and analyses (`make bundle`): every file checked,
## only the entries this checkout computes, nothing of a damaged one; the build computes the rest.
book: venv
	$(if $(BUNDLE),$(PY) -m normbook.publish.bundle import '$(BUNDLE)' --profile $(PROFILE))
	$(BUILD) book --profile $(PROFILE) --write-params $(if $(CHAPTERS),--chapters $(CHAPTERS)) $(if $(JOBS),--jobs $(JOBS))
	$(PY) -m normbook.publish.sitecheck _build/$(PROFILE)/site/_build/html

## Write the reference ledger, results/<profile>/ledger.json (commit it), from the last
## `make book` at PROFILE (cpu by default): every claim's verdicts, effect, interval, p-values
## and stability, every check, and the build's commit, code hashes and machine. Every later
## build compares itself with it (the intro, the ledger and the Build and compute page); the
## pages that compare are rebuilt at once. It writes none whose rows no data could decide
## (`normbook.tools.refutable`: seeds that tie below the sign test's floor, undeclared blocks).
reference: venv
	$(PY) -m normbook.tools.refutable $(PROFILE)
	$(PY) -m normbook.tools.reference --profile $(PROFILE)
	$(BUILD) book --profile $(PROFILE)

## Pack the cache entries the last `make book` at PROFILE read (trained networks, analyses;
## no data, no site) into _build/<profile>/normbook-<profile>-<commit>.tar.gz with a manifest
## and its .sha256: another computer builds the same book from it with `make book BUNDLE=...`.
bundle: venv
	$(PY) -m normbook.publish.bundle export --profile $(PROFILE)

## Train two small networks with the kernels as this CPU chooses them and pinned to AVX2, and
## hash their weights (_build/<profile>/fingerprint.json); the Build and compute page compares
## them with the reference machine's: do pinned kernels give another CPU the same numbers?
fingerprint: venv
	$(PY) -m normbook.tools.fingerprint --profile $(PROFILE)

## The pins every computing process of this make gets (none: the CPU chooses).
pins:
	@env | grep -E '^(ONEDNN_MAX_CPU_ISA|ATEN_CPU_CAPABILITY|OPENBLAS_CORETYPE)=' | sort | grep . || echo "no pins: each library chooses its kernels (ISA=$(ISA))"

## Open the chapters in JupyterLab as notebooks (jupytext; installs the pinned `lab` extra
## once): right-click a chapter's .py, Open With > Jupytext Notebook, and run it.
lab: $(VENV)/.lab-installed
	$(VENV)/bin/jupyter lab --notebook-dir=$(CURDIR)/book $(LAB_ARGS)

$(VENV)/.lab-installed: $(VENV)/.installed
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[lab]'
	touch $@

## Lint and format gate, parameters cells vs specs, unit tests, every chapter executed at
## smoke with an empty cache, book built with -W, the built pages checked to work offline and
## opened in headless Chromium (needs Debian's chromium and chromium-driver; .ci/run installs them),
## chapters re-executed from the cache that must reproduce the smoke build's ledger exactly, then
## the README's commands run at smoke, the exercises' checked (`make commands RUN=readme`).
## The unit tests and the smoke build run side by side: the light unit tests in one lane, the
## smoke build in the other; after the build, four lanes share the cores while the light tests go
## on: the heavy tests (marked `heavy`: they build or train for a minute or more), the paper-shape
## test apart from them, the site's checks (offline, browser) and the ledger's (reference,
## re-execution, README commands). Measured on 2 Zen 3 cores (2026-12-08), each lane's CPU
## seconds with its children: light tests 533, smoke build 485, heavy 349, checks 338 (1,713 in
## all: 14.3 min of two cores at best); with one heavy lane and one lane of checks after the
## build, the heavy lane ran alone at the end and make test took 16.7 min. With this layout, a
## paper-shape test cut to two seeds and one batch, and a README sweep that trains nothing
## (about 100 CPU s less, each measured alone), the next four runs took 17.1, 17.7, 16.6 and
## 16.1 min: their light tests and smoke build, the same work in both layouts, took 5-15 % longer
## than in the run before, so this machine's speed varied by more than the change saves; scaled
## by them, the lanes after the build took 13-27 % less time. Nothing reads what another
## writes: every test has its own cache and build folder, and the checks read only the smoke
## build's (the site's checks its HTML; the ledger's its records and cache).
test: lint params
	$(MAKE) --no-print-directory -j5 unit-light heavy-after-smoke shape-after-smoke \
		site-checks-after-smoke checks-after-smoke

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

unit-light: venv
	$(PY) -m pytest -m "not heavy" --durations=12

# make test's lanes after the smoke build (-j5: the light tests go on beside them)
heavy-after-smoke: smoke-build
	$(PY) -m pytest -m heavy --durations=5 --ignore=tests/test_paper_shape.py

shape-after-smoke: smoke-build
	$(PY) -m pytest -m heavy --durations=5 tests/test_paper_shape.py

site-checks-after-smoke: smoke-build
	$(MAKE) --no-print-directory smoke-site-checks

checks-after-smoke: smoke-build
	$(MAKE) --no-print-directory smoke-ledger-checks

# Chapters `make smoke` re-executes from the cache after writing the smoke build's reference
# ledger: the rebuild must reproduce it exactly (A1's networks, and B3's single-start k-means,
# which turns a last-bit difference into another partition).
REPRODUCE ?= a1_localization b3_clusters
smoke: smoke-build
	$(MAKE) --no-print-directory smoke-checks

smoke-build: venv
	rm -rf _build/smoke/cache
	NORMBOOK_CACHE=$(CURDIR)/_build/smoke/cache $(BUILD) book --profile smoke --strict --force $(if $(JOBS),--jobs $(JOBS))

smoke-checks: smoke-site-checks smoke-ledger-checks

smoke-site-checks: venv
	$(PY) -m normbook.publish.sitecheck _build/smoke/site/_build/html
	$(PY) -m normbook.publish.browser _build/smoke/site/_build/html

smoke-ledger-checks: venv
	$(PY) -m normbook.tools.refutable smoke
	$(PY) -m normbook.tools.pins _build/smoke/cache
	$(PY) -m normbook.tools.reference --profile smoke --allow-changes --no-fingerprint --out _build/smoke/reference.json
	$(foreach ch,$(REPRODUCE),NORMBOOK_CACHE=$(CURDIR)/_build/smoke/cache $(BUILD) execute book/$(ch).py --profile smoke --force &&) true
	$(PY) -m normbook.tools.reference --profile smoke --check _build/smoke/reference.json
	$(MAKE) --no-print-directory commands RUN=readme

## Every `make chapter` and `make sweep` command of the README's bash blocks and every
## exercise's command, at smoke against the smoke build (its cache; each in a folder of its own
## under _build/smoke/commands/, the smoke book left as built), each chapter's followed by the
## pages that read every chapter's record; skipped ones say why. `make test` runs the README's
## (RUN=readme) and checks the exercises' without compute; all of them take about two smoke builds.
RUN ?= all
commands: venv
	NORMBOOK_CACHE=$(CURDIR)/_build/smoke/cache $(PY) -m normbook.tools.doc_commands --run $(RUN) $(if $(JOBS),--jobs $(JOBS))

## Re-execute one chapter with new parameters and rebuild its page:
##   make chapter CHAPTER=book/a1_localization.py PARAMS='-p seq_len 200 -p norm group'
chapter: venv
	@test -n "$(CHAPTER)" || { echo "error: set CHAPTER=book/<chapter>.py"; exit 2; }
	$(BUILD) chapter $(CHAPTER) --profile $(PROFILE) $(PARAMS) --write-params

## A chapter over a parameter grid, on Dask (a local cluster, one worker per core, or
## SCHEDULER=tcp://host:8786), and a sweep page in the book:
##   make sweep CHAPTER=book/a1_localization.py GRID='-p detector span,neighbour,definition'
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

## Chapter A1's experiment at the paper's scale on this machine's GPU (none: it stops at once),
## within DEADLINE seconds (a ladder fixed in code fits the budget to it), written to OUT
## (default results/paper: the a1.json and .npz the book reads; commit them). A GPU machine
## without this environment runs the bare command of results/paper/README.md.
DEADLINE ?= 540
OUT ?= results/paper
paper-run: venv paper-commit
	$(PY) -m normbook.tools.paperscale a1 --out "$(OUT)" --deadline $(DEADLINE) --device cuda --commit "$$(cat results/paper/COMMIT)"

## results/paper/COMMIT (gitignored): this checkout's commit, +changes where tracked files
## differ from it, for a run in a copy of the tree without git history (make it before copying).
paper-commit:
	@c=$$(git rev-parse HEAD) && { git diff --quiet HEAD -- || c="$$c+changes"; } && echo "$$c" > results/paper/COMMIT && echo "results/paper/COMMIT: $$c"

## Planned FLOPs per chapter and the estimated GPU time, without running anything:
##   make plan PROFILE=paper
plan: venv
	$(BUILD) book --profile $(PROFILE) --dry-run

clean:
	rm -rf _build

clean-cache: venv
	$(PY) -m normbook.runtime.cache clear
