# Concierge. `make run` and `make test` build the virtualenv themselves when it is missing or stale.
# OPENBLAS_NUM_THREADS=1: numpy's small matrix products are slower with BLAS threads fighting
# torch for two cores (measured by `make bench`: up to 20x swings under load).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test smoke test-atlas check lint types seed ingest indexes eval fit bench docs fuzz clean venv chromium

$(STAMP): requirements.txt requirements-dev.txt
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt -r requirements-dev.txt
	@touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	DEMO=1 OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/uvicorn app.main:create_app --factory --no-proxy-headers --host $(HOST) --port $(PORT) $(ARGS)

# Debian's Chromium for the browser tests: installed with apt-get when missing and run as root,
# otherwise one line says how (scripts/ensure_chromium.sh).
chromium:
	@sh scripts/ensure_chromium.sh

test: $(STAMP) chromium
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest

smoke: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -m "not slow and not browser and not atlas and not integration"

# The suites marked `atlas` (store contract, search parity, index readiness) against a real
# cluster: MONGODB_URI must point at Atlas or a mongodb/mongodb-atlas-local container
# (docs/deploy-atlas.md). Without it every test here would be skipped, so refuse instead.
test-atlas: $(STAMP)
	@test -n "$$MONGODB_URI" || { echo "make test-atlas needs MONGODB_URI (see docs/deploy-atlas.md)"; exit 2; }
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -m atlas -p no:cacheprovider $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

types: $(STAMP)
	$(BIN)/mypy

check: lint types test

seed: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m scripts.seed

ingest: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m scripts.ingest $(if $(SRC),--dir "$(SRC)") $(ARGS)

indexes: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m scripts.create_indexes

eval: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m scripts.eval $(ARGS)

# Every fitted value, refitted from the development sets (../shared/eval, or CONCIERGE_EVAL_DIR) into the
# data files tuning.py and the stages load (scripts/README.md, "Fitting"). `git diff` is empty
# after it when neither the code nor the data changed.
fit: $(STAMP)
	OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 $(BIN)/python -m scripts.fit $(ARGS)

# The generated parts of README.md, docs/configuration.md and docs/evaluation.md.
docs: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m scripts.docs $(ARGS)

# The docs zoo (docs/zoo.md): public help centers at pinned commits, served with ARTICLES_DIR
# and asked their committed questions; reports in reports/zoo/. ARGS="anki --screens" narrows it.
.PHONY: zoo
zoo: $(STAMP)
	OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 $(BIN)/python -m scripts.zoo.fetch
	OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 $(BIN)/python -m scripts.zoo.run $(ARGS)

bench: $(STAMP)
	OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 $(BIN)/python -m scripts.bench $(ARGS)

fuzz: $(STAMP)
	HF_HUB_OFFLINE=1 FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-150} $(BIN)/python -m pytest tests/test_fuzz.py -p no:cacheprovider

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
