# Pinework Memory. `make serve` and `make test` are all a new machine needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
STAGE ?= prod

.PHONY: install serve test format lint types static check package clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt -e .
	touch $(STAMP)

install: $(STAMP)  ## create .venv with everything (runs on its own when needed)

serve: $(STAMP)  ## local server: embedded DynamoDB + API on http://127.0.0.1:$${PINEWORK_PORT:-8000}
	$(PY) -m infra.local_server

test: $(STAMP)  ## every test
	$(PY) -m pytest

format: $(STAMP)
	$(VENV)/bin/ruff format .

lint: $(STAMP)
	$(VENV)/bin/ruff check .

types: $(STAMP)
	$(VENV)/bin/mypy

static: $(STAMP)  ## format check, lint, types
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

check: static test  ## what CI checks

package: $(STAMP)  ## CloudFormation/SAM template + zip for STAGE, validated by cfn-lint
	rm -rf build/package && mkdir -p build
	$(PY) -m infra.template > build/resources.json
	AWS_DEFAULT_REGION=$${AWS_DEFAULT_REGION:-us-east-1} $(VENV)/bin/chalice package --stage $(STAGE) --merge-template build/resources.json build/package > build/chalice-package.log 2>&1 || { cat build/chalice-package.log; exit 1; }
	@cat build/chalice-package.log
	@! grep -q "Could not install dependencies" build/chalice-package.log || { echo "chalice found no Lambda wheel for a dependency (see above): the zip would not work"; exit 1; }
	$(PY) -m infra.check_package build/package/deployment.zip requirements.txt
	$(VENV)/bin/cfn-lint build/package/sam.json

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache
