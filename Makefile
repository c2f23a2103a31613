# Two commands on a fresh machine: `make test` and `make demo`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PACE   := $(BIN)/pace
STAMP  := $(VENV)/.installed
# DB=path selects the warehouse (else $PACE_DB, else ./pace.duckdb; `make demo` on synthetic data
# uses demo_warehouse/pace.duckdb so it never lands in a real warehouse)
ifdef DB
export PACE_DB := $(DB)
endif

.PHONY: setup test demo ingest loocv fit plan run predict export bench clean help need-model

help:
	@echo "make test | demo | ingest [RESULTS=dir] | loocv [TASK=abs|pair] [METHOD=default|instance|compat] [SPLIT=loo|family|low-3] [C=100]"
	@echo "make fit [METHOD=..] | plan MODEL=X | run MODEL=X | predict MODEL=X | export [OUT=dir] | bench"
	@echo "extra flags for any pace command: ARGS='...'"

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# the suite runs on TEST_WORKERS processes (pytest-xdist), one test file per worker at a time so a
# file's shared fixtures are built once; TEST_WORKERS=0 runs it in this process
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=15

# real data when RESULTS=dir, $PACE_RESULTS_DIR or results/standardized_results names a tree, else synthetic
demo: $(STAMP)
	$(PACE) demo $(if $(RESULTS),--results "$(RESULTS)")

ingest: $(STAMP)
	$(PACE) ingest $(RESULTS)

TASK   ?= abs
METHOD ?= default
C      ?= 100
SPLIT  ?= loo
# compat follows the published headline path, which needs these flags
COMPAT_FLAGS_abs  := --strict-budget
COMPAT_FLAGS_pair := --strict-budget --pin-task-a-selection
# mean and bench-ridge read no budget (an option a method ignores is refused)
loocv: $(STAMP)
	$(PACE) loocv $(TASK) --method $(METHOD) --split $(SPLIT) $(if $(filter-out mean bench-ridge,$(METHOD)),--count $(C)) --plots $(if $(filter compat,$(METHOD)),$(COMPAT_FLAGS_$(TASK))) $(ARGS)

fit: $(STAMP)
	$(PACE) fit --method $(METHOD) --count $(C) $(ARGS)

need-model:
	@test -n "$(MODEL)" || { echo "usage: make $(MAKECMDGOALS) MODEL=<model name>"; exit 2; }

plan: $(STAMP) need-model
	$(PACE) plan "$(MODEL)" $(ARGS)

run: $(STAMP) need-model
	$(PACE) run "$(MODEL)" $(ARGS)

predict: $(STAMP) need-model
	$(PACE) predict "$(MODEL)" $(ARGS)

OUT ?= export
export: $(STAMP)
	$(PACE) export $(OUT)

bench: $(STAMP)
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/loocv.py
	$(BIN)/python bench/accuracy.py
	$(BIN)/python bench/intervals.py
	$(BIN)/python bench/anchors.py --report
	$(BIN)/python bench/anchors_range.py

clean:
	rm -rf $(VENV) pace.duckdb pace.duckdb.wal lake demo_warehouse
