# Pinework Memory. `make serve` and `make test` are all a new machine needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
STAGE ?= prod
# Deploying (make deploy, make deploy-cloudformation): the AWS CLI v2 with credentials.
STACK ?= pinework-$(STAGE)
REVIEWER ?= rules
BEDROCK_MODEL_ID ?= global.anthropic.claude-haiku-4-5-20251001-v1:0
AWS_REGION ?= $(or $(AWS_DEFAULT_REGION),us-east-1)
PARAMETERS := Reviewer=$(REVIEWER) BedrockModelId=$(BEDROCK_MODEL_ID)
# Rate limits (docs/reference.md#14-operations): the API stage's throttle (requests/s, burst)
# and the optional WAF web ACL (on|off; requests per 5 minutes per IP and per credential).
API_RATE_LIMIT ?= 50
API_BURST_LIMIT ?= 100
WAF_RATE_LIMITING ?= off
WAF_IP_LIMIT ?= 3000
WAF_CREDENTIAL_LIMIT ?= 1500
WAF_PARAMETERS := WafIpLimit=$(WAF_IP_LIMIT) WafCredentialLimit=$(WAF_CREDENTIAL_LIMIT)
RATE_PARAMETERS := ApiThrottleRateLimit=$(API_RATE_LIMIT) ApiThrottleBurstLimit=$(API_BURST_LIMIT) WafRateLimiting=$(WAF_RATE_LIMITING) $(WAF_PARAMETERS)
# Where `aws cloudformation package` uploads the zip (created if missing; one per account and region).
ARTIFACT_BUCKET ?= pinework-artifacts-$(shell aws sts get-caller-identity --query Account --output text 2>/dev/null)-$(AWS_REGION)

.PHONY: install serve test format lint types static check package deploy deploy-cloudformation clean

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

package: $(STAMP)  ## CloudFormation/SAM template + zip for STAGE: cfn-lint, <= 50 MB zipped, <= 150 MB unzipped
	rm -rf build/package && mkdir -p build
	$(PY) -m infra.template package > build/resources.json
	AWS_DEFAULT_REGION=$(AWS_REGION) $(VENV)/bin/chalice package --stage $(STAGE) --merge-template build/resources.json build/package > build/chalice-package.log 2>&1 || { cat build/chalice-package.log; exit 1; }
	@cat build/chalice-package.log
	@! grep -q "Could not install dependencies" build/chalice-package.log || { echo "chalice found no Lambda wheel for a dependency (see above): the zip would not work"; exit 1; }
	$(PY) -m infra.check_package build/package/deployment.zip requirements.txt requirements-dev.txt
	$(VENV)/bin/cfn-lint build/package/sam.json

deploy: package  ## chalice deploy --stage STAGE (the zip checked by make package), after the resources stack STACK-resources
	mkdir -p build
	$(PY) -m infra.template resources > build/resources-stack.json
	$(VENV)/bin/cfn-lint build/resources-stack.json
	aws cloudformation deploy --region $(AWS_REGION) --stack-name $(STACK)-resources --template-file build/resources-stack.json --capabilities CAPABILITY_IAM --no-fail-on-empty-changeset --parameter-overrides $(PARAMETERS) ChaliceStage=$(STAGE)
	aws cloudformation describe-stacks --region $(AWS_REGION) --stack-name $(STACK)-resources --output json > build/resources-stack-$(STAGE).json
	$(PY) -m infra.deploy configure --stage $(STAGE) --stack build/resources-stack-$(STAGE).json
	AWS_DEFAULT_REGION=$(AWS_REGION) $(VENV)/bin/chalice deploy --stage $(STAGE)
	AWS_DEFAULT_REGION=$(AWS_REGION) $(PY) -m infra.deploy gateway-responses --stage $(STAGE)
	AWS_DEFAULT_REGION=$(AWS_REGION) $(PY) -m infra.deploy throttle --stage $(STAGE) --rate $(API_RATE_LIMIT) --burst $(API_BURST_LIMIT)
ifeq ($(WAF_RATE_LIMITING),on)
	$(PY) -m infra.template waf > build/waf-stack.json
	$(VENV)/bin/cfn-lint build/waf-stack.json
	aws cloudformation deploy --region $(AWS_REGION) --stack-name $(STACK)-waf --template-file build/waf-stack.json --no-fail-on-empty-changeset --parameter-overrides $$($(PY) -m infra.deploy waf-parameters --stage $(STAGE)) $(WAF_PARAMETERS)
else
	aws cloudformation delete-stack --region $(AWS_REGION) --stack-name $(STACK)-waf
	aws cloudformation wait stack-delete-complete --region $(AWS_REGION) --stack-name $(STACK)-waf
endif

deploy-cloudformation: package  ## the whole stack STACK (functions, API, storage) from make package's template
	aws s3api head-bucket --bucket $(ARTIFACT_BUCKET) 2>/dev/null || aws s3 mb s3://$(ARTIFACT_BUCKET) --region $(AWS_REGION)
	aws cloudformation package --region $(AWS_REGION) --template-file build/package/sam.json --s3-bucket $(ARTIFACT_BUCKET) --output-template-file build/packaged.yaml
	aws cloudformation deploy --region $(AWS_REGION) --stack-name $(STACK) --template-file build/packaged.yaml --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND --no-fail-on-empty-changeset --parameter-overrides $(PARAMETERS) $(RATE_PARAMETERS)
	aws cloudformation describe-stacks --region $(AWS_REGION) --stack-name $(STACK) --query "Stacks[0].Outputs" --output table

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache
