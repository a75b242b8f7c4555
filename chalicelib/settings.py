"""Typed settings, read once from the environment (docs/conventions.md#rule-5).

Only this module reads ``os.environ``. Each Chalice stage sets the variables in
``.chalice/config.json``; the local server and the tests build a ``Settings``
directly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chalicelib.limits import (
    KV_ACCOUNT_MAX_BYTES,
    KV_ACCOUNT_MAX_KEYS,
    KV_ANON_MAX_BYTES,
    KV_ANON_MAX_KEYS,
    KV_ANON_VALUE_MAX_BYTES,
    KV_BYOK_MAX_BYTES,
    KV_BYOK_MAX_KEYS,
    KV_BYOK_NEW_SCOPES_PER_DAY,
    REVIEW_INLINE_MAX_FACTS,
)

DEFAULT_LOCAL_DYNAMODB_ENDPOINT = "http://127.0.0.1:8001"
"""Where the local server's embedded DynamoDB listens unless told otherwise."""
REVIEW_QUEUE_NAME = "pinework-reviews"
"""The SQS queue of the nightly review fan-out (docs/reference.md#9-review) when
``PINEWORK_REVIEW_QUEUE_NAME`` is unset: the local server's and the tests' queue, and
the name stages deployed by earlier releases keep (CHANGELOG.md)."""
LIFECYCLE_QUEUE_NAME = "pinework-lifecycle"
"""The SQS queue of a person's erasures and exports (docs/reference.md#the-lifecycle-queue)
when ``PINEWORK_LIFECYCLE_QUEUE_NAME`` is unset: the local server's and the tests' queue.
Deployed stacks name theirs ``<stack>-lifecycle``."""
LIFECYCLE_WORKER_MAX_CONCURRENCY = 2
"""How many lifecycle workers the lifecycle queue's trigger runs at once: SQS's smallest
``MaximumConcurrency``, a fixed cap (docs/operations.md#the-lifecycle-worker). Erasures
and exports are rare and each reads only its owner's items, so two at a time keep a
flood of them from taking the account's concurrency from the API and the reviews."""
DEFAULT_REVIEW_WORKER_MAX_CONCURRENCY = 5
"""How many review workers the queue's trigger runs at once unless
``PINEWORK_REVIEW_WORKER_MAX_CONCURRENCY`` says otherwise (docs/operations.md#deploy)."""
DEFAULT_MODEL_DIR = "/tmp/pinework-models"
"""Where weights read from the bucket are kept unless ``PINEWORK_MODEL_DIR`` says
otherwise (docs/operations.md#reranker-weights)."""
DEFAULT_REVIEW_RETENTION_DAYS = 365
"""How many days a review's report and items are kept unless
``PINEWORK_REVIEW_RETENTION_DAYS`` says otherwise (docs/reference.md#retention); the
bucket's ``ReviewReports`` lifecycle rule (``infra/template.py``) uses the same number."""
DEFAULT_BEDROCK_MODEL_ID = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
"""Claude Haiku 4.5 through its global cross-region inference profile, which every
commercial region offers (Claude 4 models are not invocable by their bare ids)."""


def review_queue_name(environ: Mapping[str, str] | None = None) -> str:
    """The queue ``app.py``'s worker is bound to when ``chalice deploy`` imports it:
    ``PINEWORK_REVIEW_QUEUE_NAME`` (``make deploy`` sets it from the resources stack's
    ``ReviewQueueName`` output, and each function has it in its environment), else
    ``REVIEW_QUEUE_NAME``."""
    env = os.environ if environ is None else environ
    return env.get("PINEWORK_REVIEW_QUEUE_NAME") or REVIEW_QUEUE_NAME


def lifecycle_queue_name(environ: Mapping[str, str] | None = None) -> str:
    """The queue ``app.py``'s lifecycle worker is bound to when ``chalice deploy`` imports
    it: ``PINEWORK_LIFECYCLE_QUEUE_NAME`` (``make deploy`` sets it from the resources
    stack's ``LifecycleQueueName`` output, and each function has it in its environment),
    else ``LIFECYCLE_QUEUE_NAME``."""
    env = os.environ if environ is None else environ
    return env.get("PINEWORK_LIFECYCLE_QUEUE_NAME") or LIFECYCLE_QUEUE_NAME


def review_worker_max_concurrency(environ: Mapping[str, str] | None = None) -> int:
    """The worker trigger's maximum concurrency ``chalice deploy`` sets
    (``PINEWORK_REVIEW_WORKER_MAX_CONCURRENCY``, ``make deploy``'s
    ``REVIEW_WORKER_MAX_CONCURRENCY``; default ``DEFAULT_REVIEW_WORKER_MAX_CONCURRENCY``).

    Raises:
        ValueError: the value is not an integer from 2 to 1000 (SQS's bounds).
    """
    env = os.environ if environ is None else environ
    text = env.get("PINEWORK_REVIEW_WORKER_MAX_CONCURRENCY")
    value = int(text) if text else DEFAULT_REVIEW_WORKER_MAX_CONCURRENCY
    if not 2 <= value <= 1000:
        raise ValueError(f"PINEWORK_REVIEW_WORKER_MAX_CONCURRENCY is {value}, not 2 to 1000")
    return value


class SettingsError(ValueError):
    """An environment variable holds a value the setting does not accept; the message
    names the variable, the value and what is accepted."""


def _named(error: ValidationError, names: Mapping[str, str]) -> str:
    """``error``'s problems, each with the environment variable it came from."""
    parts = []
    for problem in error.errors():
        field = str(problem["loc"][0]) if problem["loc"] else ""
        variable = names.get(field, field)
        parts.append(f"{variable}={problem.get('input')!r}: {problem['msg']}")
    return "; ".join(parts)


class Settings(BaseModel):
    """Everything the deployed code needs to know about its environment.

    Attributes:
        table_name: the single DynamoDB table (``PINEWORK_TABLE_NAME``).
        bucket_name: the S3 bucket for large objects and review reports
            (``PINEWORK_BUCKET_NAME``).
        region: AWS region (``AWS_REGION`` / ``AWS_DEFAULT_REGION``).
        dynamodb_endpoint: endpoint override, e.g. the local moto server
            (``PINEWORK_DYNAMODB_ENDPOINT``); ``None`` means real AWS.
        s3_endpoint: endpoint override for S3 (``PINEWORK_S3_ENDPOINT``).
        recall_time_budget_ms: how long scoring may take before recall falls
            back to the newest facts (``PINEWORK_RECALL_TIME_BUDGET_MS``,
            docs/reference.md#8-recall).
        recall_log_retention_days: how many days a recall log entry is kept
            (``PINEWORK_RECALL_LOG_RETENTION_DAYS``, 1-3650, default 90;
            docs/reference.md#retention).
        archived_text_retention_days: how many days after its archiving a memory's
            history keeps its texts (``PINEWORK_ARCHIVED_TEXT_RETENTION_DAYS``, 1-3650,
            default 365; docs/reference.md#retention).
        review_retention_days: how many days a review's report, summary and the items of
            its actions are kept, counted from its start (``PINEWORK_REVIEW_RETENTION_DAYS``,
            1-3650, default 365; docs/reference.md#retention).
        idempotency_retention_hours: how long a request's stored answer is replayed for
            its ``Idempotency-Key`` (``PINEWORK_IDEMPOTENCY_RETENTION_HOURS``, 1-720,
            default 24; docs/reference.md#retention).
        reranker: recall's cross-encoder (``PINEWORK_RERANKER``, docs/reference.md#8-recall):
            ``on`` (default) or ``off`` (the two calibrated stages alone).
        review_queue_name: the review fan-out queue (``PINEWORK_REVIEW_QUEUE_NAME``).
        lifecycle_queue_name: the queue of a person's erasures and exports
            (``PINEWORK_LIFECYCLE_QUEUE_NAME``).
        sqs_endpoint: endpoint override for SQS (``PINEWORK_SQS_ENDPOINT``).
        reviewer: the review's judgement (``PINEWORK_REVIEWER``, docs/reference.md#9-review):
            ``rules`` (default, no network) or ``bedrock`` (``BedrockReviewer``).
        mcp_allowed_origins: comma-separated browser origins (``https://app.example``)
            that may call ``/mcp`` besides those on an allowed host (``allowed_hosts``)
            (``PINEWORK_MCP_ALLOWED_ORIGINS``; MCP's DNS-rebinding guard).
        allowed_hosts: comma-separated host names this API answers to besides
            ``localhost``, ``127.0.0.1`` and ``[::1]`` (``PINEWORK_ALLOWED_HOSTS``:
            ``name``, ``name:port`` or ``*.suffix``); ``/mcp`` refuses any other
            ``Host``, and browser ``Origin``s must name one of them
            (docs/reference.md#cross-site). On AWS the name API Gateway received the
            request on is allowed besides, so only names that reach the API another way
            (a proxy in front of it) need listing.
        bedrock_model_id: the Bedrock model or inference profile of the
            ``bedrock`` reviewer (``PINEWORK_BEDROCK_MODEL_ID``); called in ``region``.
        review_inline_max_facts: the largest store (facts of the agent) whose manual
            review with the ``rules`` reviewer runs inside the API call; larger ones,
            and every ``bedrock`` one, are queued (``PINEWORK_REVIEW_INLINE_MAX_FACTS``;
            0 queues them all).
        log_format: ``json`` (default: one JSON object per line, and EMF metrics, as
            CloudWatch reads them) or ``text`` (one readable line per request, no
            metrics; the local server's default) (``PINEWORK_LOG_FORMAT``).
        tracing: X-Ray tracing of each request and AWS call (``PINEWORK_TRACING``,
            ``on``/``off``; off by default: nothing is imported or sent).
        metrics_namespace: the CloudWatch namespace of the EMF metrics
            (``PINEWORK_METRICS_NAMESPACE``).
        demo_file: where the local server keeps the demo workspace's tokens
            (``PINEWORK_DEMO_FILE``, set by ``infra/local_server.py`` to
            ``$PINEWORK_DATA_DIR/demo.json``); ``None`` on AWS, where there is no
            demo. The sign-in page names it.
        read_concurrency: how many agents the dashboard's agents overview reads at the
            same time (``PINEWORK_READ_CONCURRENCY``, default 8; boto3's clients are
            thread-safe). The tests under in-process moto, which is not, set 1.
        kv_anon_max_keys, kv_anon_max_bytes: the quota of one anonymous key-value scope,
            in keys and in bytes of keys and values (``PINEWORK_KV_ANON_MAX_KEYS``,
            ``PINEWORK_KV_ANON_MAX_BYTES``; docs/reference.md#kv-quotas).
        kv_anon_max_value_bytes: the largest anonymous value, as it travels
            (``PINEWORK_KV_ANON_MAX_VALUE_BYTES``).
        kv_byok_max_keys, kv_byok_max_bytes: the quota of one ``X-Api-Key`` scope
            (``PINEWORK_KV_BYOK_MAX_KEYS``, ``PINEWORK_KV_BYOK_MAX_BYTES``).
        kv_byok_new_scopes_per_day: new ``X-Api-Key`` scopes one source network (IPv4
            address or IPv6 /64) may start per UTC day; 0 starts none
            (``PINEWORK_KV_BYOK_NEW_SCOPES_PER_DAY``).
        kv_account_max_keys, kv_account_max_bytes: the quota of one workspace scope
            (``PINEWORK_KV_ACCOUNT_MAX_KEYS``, ``PINEWORK_KV_ACCOUNT_MAX_BYTES``).
        model_source: where model weights too large for the Lambda zip are read from
            (``PINEWORK_MODEL_SOURCE``, docs/operations.md#reranker-weights): ``s3`` (the
            bucket's ``models/``, copied into ``model_dir`` on first use; the default on
            Lambda, where ``AWS_LAMBDA_FUNCTION_NAME`` is set, and the local server's),
            ``local`` (the checkout's ``models/``) or ``auto`` (the checkout's file when it
            exists, else ``s3``).
        model_dir: where ``s3`` keeps the downloaded weights (``PINEWORK_MODEL_DIR``,
            default ``/tmp/pinework-models``: Lambda's only writable folder).
        hash_secret: the hash secret itself (``PINEWORK_HASH_SECRET``: one string of 32+
            characters or ``{"current": …, "previous": […]}``); the local server's and
            the tests' way (docs/reference.md#keyed-hashes-of-personal-data).
        hash_secret_arn: the Secrets Manager secret holding it
            (``PINEWORK_HASH_SECRET_ARN``, the stack's ``HashSecretArn``); the deployed way.
        webhooks_allow_loopback: webhook URLs may be ``http://`` and resolve to
            loopback, for a receiver on the developer's machine
            (``PINEWORK_WEBHOOKS_ALLOW_LOOPBACK``, off by default; refused on Lambda,
            docs/reference.md#webhook-urls).
        hash_secret_required: on Lambda (``AWS_LAMBDA_FUNCTION_NAME`` set) a digest with
            neither of the two is refused instead of using the development secret.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    table_name: str = "pinework-local"
    bucket_name: str = "pinework-local"
    region: str = "us-east-1"
    dynamodb_endpoint: str | None = None
    s3_endpoint: str | None = None
    recall_time_budget_ms: int = Field(default=2000, ge=1)
    recall_log_retention_days: int = Field(default=90, ge=1, le=3650)
    archived_text_retention_days: int = Field(default=365, ge=1, le=3650)
    review_retention_days: int = Field(default=DEFAULT_REVIEW_RETENTION_DAYS, ge=1, le=3650)
    idempotency_retention_hours: int = Field(default=24, ge=1, le=720)
    reranker: Literal["on", "off"] = "on"
    review_queue_name: str = REVIEW_QUEUE_NAME
    lifecycle_queue_name: str = LIFECYCLE_QUEUE_NAME
    sqs_endpoint: str | None = None
    reviewer: Literal["rules", "bedrock"] = "rules"
    bedrock_model_id: str = Field(default=DEFAULT_BEDROCK_MODEL_ID, min_length=1)
    mcp_allowed_origins: str = ""
    allowed_hosts: str = ""
    review_inline_max_facts: int = Field(default=REVIEW_INLINE_MAX_FACTS, ge=0)
    log_format: Literal["json", "text"] = "json"
    tracing: bool = False
    metrics_namespace: str = Field(default="Pinework", min_length=1, max_length=255)
    demo_file: str | None = None
    read_concurrency: int = Field(default=8, ge=1, le=32)
    kv_anon_max_keys: int = Field(default=KV_ANON_MAX_KEYS, ge=0)
    kv_anon_max_bytes: int = Field(default=KV_ANON_MAX_BYTES, ge=0)
    kv_anon_max_value_bytes: int = Field(default=KV_ANON_VALUE_MAX_BYTES, ge=0)
    kv_byok_max_keys: int = Field(default=KV_BYOK_MAX_KEYS, ge=0)
    kv_byok_max_bytes: int = Field(default=KV_BYOK_MAX_BYTES, ge=0)
    kv_byok_new_scopes_per_day: int = Field(default=KV_BYOK_NEW_SCOPES_PER_DAY, ge=0)
    kv_account_max_keys: int = Field(default=KV_ACCOUNT_MAX_KEYS, ge=0)
    kv_account_max_bytes: int = Field(default=KV_ACCOUNT_MAX_BYTES, ge=0)
    model_source: Literal["auto", "s3", "local"] = "auto"
    model_dir: str = Field(default=DEFAULT_MODEL_DIR, min_length=1)
    hash_secret: str | None = Field(default=None, repr=False)
    hash_secret_arn: str | None = None
    hash_secret_required: bool = False
    webhooks_allow_loopback: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Build settings from environment variables.

        Args:
            environ: the variables to read; ``os.environ`` when omitted.

        Returns:
            The settings, with defaults for anything unset.

        Raises:
            SettingsError: a variable holds a value of the wrong type (the message names
                the variable, e.g. ``PINEWORK_RERANKER='bogus': Input should be 'on' or
                'off'``).
        """
        env = os.environ if environ is None else environ
        values: dict[str, str] = {}
        names = dict(
            (
                ("table_name", "PINEWORK_TABLE_NAME"),
                ("bucket_name", "PINEWORK_BUCKET_NAME"),
                ("dynamodb_endpoint", "PINEWORK_DYNAMODB_ENDPOINT"),
                ("s3_endpoint", "PINEWORK_S3_ENDPOINT"),
                ("recall_time_budget_ms", "PINEWORK_RECALL_TIME_BUDGET_MS"),
                ("recall_log_retention_days", "PINEWORK_RECALL_LOG_RETENTION_DAYS"),
                ("archived_text_retention_days", "PINEWORK_ARCHIVED_TEXT_RETENTION_DAYS"),
                ("review_retention_days", "PINEWORK_REVIEW_RETENTION_DAYS"),
                ("idempotency_retention_hours", "PINEWORK_IDEMPOTENCY_RETENTION_HOURS"),
                ("reranker", "PINEWORK_RERANKER"),
                ("review_queue_name", "PINEWORK_REVIEW_QUEUE_NAME"),
                ("lifecycle_queue_name", "PINEWORK_LIFECYCLE_QUEUE_NAME"),
                ("sqs_endpoint", "PINEWORK_SQS_ENDPOINT"),
                ("reviewer", "PINEWORK_REVIEWER"),
                ("bedrock_model_id", "PINEWORK_BEDROCK_MODEL_ID"),
                ("mcp_allowed_origins", "PINEWORK_MCP_ALLOWED_ORIGINS"),
                ("allowed_hosts", "PINEWORK_ALLOWED_HOSTS"),
                ("review_inline_max_facts", "PINEWORK_REVIEW_INLINE_MAX_FACTS"),
                ("log_format", "PINEWORK_LOG_FORMAT"),
                ("tracing", "PINEWORK_TRACING"),
                ("metrics_namespace", "PINEWORK_METRICS_NAMESPACE"),
                ("demo_file", "PINEWORK_DEMO_FILE"),
                ("read_concurrency", "PINEWORK_READ_CONCURRENCY"),
                ("kv_anon_max_keys", "PINEWORK_KV_ANON_MAX_KEYS"),
                ("kv_anon_max_bytes", "PINEWORK_KV_ANON_MAX_BYTES"),
                ("kv_anon_max_value_bytes", "PINEWORK_KV_ANON_MAX_VALUE_BYTES"),
                ("kv_byok_max_keys", "PINEWORK_KV_BYOK_MAX_KEYS"),
                ("kv_byok_max_bytes", "PINEWORK_KV_BYOK_MAX_BYTES"),
                ("kv_byok_new_scopes_per_day", "PINEWORK_KV_BYOK_NEW_SCOPES_PER_DAY"),
                ("kv_account_max_keys", "PINEWORK_KV_ACCOUNT_MAX_KEYS"),
                ("kv_account_max_bytes", "PINEWORK_KV_ACCOUNT_MAX_BYTES"),
                ("model_source", "PINEWORK_MODEL_SOURCE"),
                ("model_dir", "PINEWORK_MODEL_DIR"),
                ("hash_secret", "PINEWORK_HASH_SECRET"),
                ("hash_secret_arn", "PINEWORK_HASH_SECRET_ARN"),
                ("webhooks_allow_loopback", "PINEWORK_WEBHOOKS_ALLOW_LOOPBACK"),
            )
        )
        for field, name in names.items():
            if env.get(name):
                values[field] = env[name]
        if env.get("AWS_LAMBDA_FUNCTION_NAME") and "model_source" not in values:
            values["model_source"] = "s3"  # Lambda's code has no models/ (not in the zip)
        if env.get("AWS_LAMBDA_FUNCTION_NAME"):
            values["hash_secret_required"] = "true"
            values.pop("webhooks_allow_loopback", None)  # development only, never deployed
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        if region:
            values["region"] = region
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            raise SettingsError(_named(error, names)) from error
