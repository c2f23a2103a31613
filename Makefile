# Two commands on a fresh machine: `make test` and `make demo`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PACE   := $(BIN)/pace
STAMP  := $(VENV)/.installed
DB     ?= pace.duckdb
export PACE_DB ?= $(DB)

.PHONY: setup test demo ingest loocv fit plan run predict export bench clean help

help:
	@echo "make test | demo | ingest [RESULTS=dir] | loocv [TASK=abs|pair] [METHOD=compat|default] [C=100]"
	@echo "make fit | plan MODEL=X | run MODEL=X | predict MODEL=X | export [OUT=dir] | bench"

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

demo: $(STAMP)
	$(PACE) demo

ingest: $(STAMP)
	$(PACE) ingest $(RESULTS)

TASK   ?= abs
METHOD ?= default
C      ?= 100
loocv: $(STAMP)
	$(PACE) loocv $(TASK) --method $(METHOD) --count $(C)

fit: $(STAMP)
	$(PACE) fit

plan: $(STAMP)
	$(PACE) plan $(MODEL)

run: $(STAMP)
	$(PACE) run $(MODEL)

predict: $(STAMP)
	$(PACE) predict $(MODEL)

OUT ?= export
export: $(STAMP)
	$(PACE) export $(OUT)

bench: $(STAMP)
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/loocv.py

clean:
	rm -rf $(VENV) pace.duckdb pace.duckdb.wal lake
