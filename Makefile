# make demo: venv + pinned install, build the demo corpus, refresh, query with an explained answer.
# make test: venv + pinned install, lint (ruff), type check (mypy), run the test suite.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
DEMO := examples/build
DATA := $(DEMO)/data
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 90
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1

.PHONY: install demo test test-fast lint typecheck bench clean

$(BIN)/.installed: requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/python examples/build_demo.py $(DEMO)
	PREFECT_HOME=$(abspath $(DATA))/.prefect $(BIN)/trustindex refresh --sources $(DEMO)/sources.toml --data $(DATA)
	$(BIN)/trustindex query "How do I install the Compact compiler?" --data $(DATA) --k 3 --explain
	@echo; echo "With a version target: the deprecated Wallet API page ranks below the Wallet SDK that replaces it, and its hit says why it is deprecated, who verified it and how its version matches."
	$(BIN)/trustindex query "Wallet API deprecated replacement" --target docs=v1 --data $(DATA) --k 5 --explain
	@echo; echo "Authenticated next to claimed: a community page whose merge the platform's listed key signed (authenticated: Ada, foundation) and whose unsigned Reviewed-by trailer names Ada too (claimed: counts as community)."
	$(BIN)/trustindex inspect --source community-contracts --path docs/review-process.md --data $(DATA)
	$(BIN)/trustindex query "How are pull requests to the community contracts reviewed?" --data $(DATA) --k 1 --explain
	@echo; echo "Content risk: a community page asks the reader to send a seed phrase; its hit carries the warning, and its trust the policy's content_risk multiplier (0.1)."
	$(BIN)/trustindex query "How do I claim the community airdrop?" --data $(DATA) --k 5 --explain

# Two pytest-xdist workers, a test file each at a time (module fixtures stay in one process): most of the slow tests
# wait on servers and subprocesses, and CI's limit is 20 minutes (one worker took 705 s here, two 489 s).
# Prefect's state and the run's encoder export live in temporary folders that tests/conftest.py makes and removes.
TEST_WORKERS ?= 2
test: install lint typecheck
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# The fast tier: every test of no slow kind (the markers in pyproject.toml: the real corpus, a browser, a Dask
# cluster, the real compiler, serving load, a real Prefect server or a fresh venv). One room: add ROOM=query (any
# folder of tests/), e.g. `make test-fast ROOM=serve`; `make test` always runs everything.
FAST := not (real_corpus or browser or cluster or compiler or serving_load or slow)
test-fast: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "$(FAST)" tests/$(ROOM)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy cannot follow the editable install's import hook, so it checks a tree of links that lays the repository's
# folders out as the installed package is (trustindex/<room> -> <folder>/, from pyproject.toml's package-dir:
# trustindex/layout.py).
TYPECHECK := build/typecheck
typecheck: install
	rm -rf $(TYPECHECK)
	$(BIN)/python trustindex/layout.py link-tree $(TYPECHECK)
	cd $(TYPECHECK) && $(abspath $(BIN))/mypy --config-file $(abspath pyproject.toml) -p trustindex.schemas -p trustindex.query -p trustindex.serve

bench: install
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(DEMO) data .pytest_cache build
