# groupsim: every target sets itself up on a fresh machine (Java, virtualenv, dependencies).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup test stress oracle demo bench lint fmt clean java browser accel accel-check accel-clean

setup: $(STAMP)

java:
	@bash scripts/ensure-java.sh

browser:
	@bash scripts/ensure-browser.sh

$(STAMP): pyproject.toml constraints.txt scripts/ensure-java.sh scripts/ensure-browser.sh
	@bash scripts/ensure-java.sh
	@bash scripts/ensure-browser.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "groupsim: installing dependencies into $(VENV) (pinned by constraints.txt; log in $(VENV)/install.log) ..."
	@$(BIN)/python -m pip install -c constraints.txt -e '.[pipeline,dev]' > $(VENV)/install.log 2>&1 \
	  || { tail -40 $(VENV)/install.log; echo "groupsim: dependency install failed (full log: $(VENV)/install.log)" >&2; exit 1; }
	@touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

# the Simulation state machine with many long random examples (make test runs a few short ones)
stress: $(STAMP)
	GROUPSIM_STRESS=1 $(BIN)/python -m pytest -q tests/sim/test_stateful_simulation.py

# every recorded Kafka-oracle trace (make test replays a fifth of them); docs/oracle.md
oracle: $(STAMP)
	GROUPSIM_ORACLE_TRACES=all $(BIN)/python -m pytest -q -n 2 --dist loadgroup tests/oracle

demo: $(STAMP)
	$(BIN)/groupsim demo
	@echo
	@echo "groupsim: now the Spark pipeline: 24 runs of a rolling restart (classic eager, cooperative, static, KIP-848), swept on local Spark ..."
	$(BIN)/groupsim sweep pipeline/examples/rolling-restart-cost.yaml --out build/demo/sweep --report pipeline/examples/report

bench: $(STAMP)
	$(BIN)/python -m bench

# optional: compile the hot modules with mypyc (needs gcc + Python headers); same logs, faster.
# `groupsim --version` says which build runs; `make accel-clean` (or `make clean`) removes it.
accel: $(STAMP)
	$(BIN)/python scripts/accel.py build

# the compiled build against the pure one: every log of scripts/log_digests.py, in one run each,
# then the rolling restart's same-run timing (docs/runner.md)
accel-check: $(STAMP)
	$(BIN)/python -m pytest -q tests/test_accel.py
	$(BIN)/python -m bench.simulation --compare-accel --quick

accel-clean:
	@test ! -x $(BIN)/python || $(BIN)/python scripts/accel.py clean

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

fmt: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean: accel-clean
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .hypothesis
