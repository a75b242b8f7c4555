"""The composition root: settings -> boto3 -> repositories -> services, cached.

Nothing is built at import time (docs/conventions.md#rule-5 to docs/conventions.md#rule-6).
``services()`` builds once per Lambda container; tests call ``services.cache_clear()`` after
starting moto, or build their own with ``build_services``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config

from chalicelib.deferred import (
    DeferredEmbedder,
    DeferredScorer,
    DeferredSecretFinder,
    minilm_embedder,
    relevance_scorer,
    secret_detector,
    shared_cross_encoder,
)
from chalicelib.ids import Clock, IdFactory, SystemClock
from chalicelib.models.requests import ArchiveRequest
from chalicelib.services.access.admin import AdminService
from chalicelib.services.access.auth import AuthService
from chalicelib.services.access.enrolment import Enrolment
from chalicelib.services.access.people import PeopleService
from chalicelib.services.access.sessions import DashboardSessions
from chalicelib.services.access.workspace import WorkspaceService
from chalicelib.services.events import EventService
from chalicelib.services.idempotency import IdempotencyService
from chalicelib.services.keyed_hash import DEVELOPMENT_SECRETS, HashSecrets, KeyedHash
from chalicelib.services.kv.service import KvLimits, KvService
from chalicelib.services.learnings import LearningService
from chalicelib.services.lifecycle.erasure import OwnerErasure
from chalicelib.services.lifecycle.learning_sources import ErasedSources
from chalicelib.services.lifecycle.readable import ReadableExport
from chalicelib.services.lifecycle.requests import PersonLifecycle
from chalicelib.services.lifecycle.retention import ArchivedTextRetention
from chalicelib.services.lifecycle.transfer import WorkspaceTransfer
from chalicelib.services.memory.as_of import MemoryAsOf
from chalicelib.services.memory.browse import MemoryBrowser
from chalicelib.services.memory.bulk import BulkService
from chalicelib.services.memory.day_log import DayLogService
from chalicelib.services.memory.erase import MemoryErasure
from chalicelib.services.memory.service import MemoryService
from chalicelib.services.memory.vetoes import VetoGuard
from chalicelib.services.overview.agents import AgentOverview
from chalicelib.services.overview.days import DayLogIndex
from chalicelib.services.overview.pictures import AgentPicturesService
from chalicelib.services.recall.as_of import RecallAsOf
from chalicelib.services.recall.backfill import EmbeddingBackfill
from chalicelib.services.recall.candidates import CandidateScorer
from chalicelib.services.recall.index_backfill import RecallIndexBackfill
from chalicelib.services.recall.preview import RecallPreviewService
from chalicelib.services.recall.run_block import RunBlocks
from chalicelib.services.recall.service import RecallService
from chalicelib.services.recall.tokens import Cl100kTokenCounter, TokenCounter
from chalicelib.services.review.manual import ManualReviews
from chalicelib.services.review.routines import RoutineService
from chalicelib.services.review.rule_reviewer import Reviewer, RuleReviewer
from chalicelib.services.review.service import ReviewService
from chalicelib.services.review.shared_facts import SharedFacts
from chalicelib.services.text import SecretFinder
from chalicelib.services.webhooks.delivery import Attempts, WebhookDelivery
from chalicelib.services.webhooks.service import WebhookService
from chalicelib.services.webhooks.urls import system_resolver
from chalicelib.services.wiki.index import SectionIndexer
from chalicelib.services.wiki.pages import PageService
from chalicelib.settings import Settings, SettingsError
from chalicelib.storage.as_of import DynamoDBAsOfReader
from chalicelib.storage.bulk_actions import DynamoDBBulkRepository
from chalicelib.storage.directory import DynamoDBDirectoryRepository
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.erasure import DynamoDBMemoryScrub
from chalicelib.storage.events import KNOWN_EVENT_TYPES, DynamoDBEventFeed
from chalicelib.storage.exports import DynamoDBExportStore, ExportTaken
from chalicelib.storage.hash_secret import SecretsManagerSecret
from chalicelib.storage.keys import RERANKER_WEIGHTS_OBJECT
from chalicelib.storage.kv import DynamoDBKvRepository, S3ObjectStore
from chalicelib.storage.learnings import DynamoDBLearningRepository, LearningVersionChanged
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.memory_index import DynamoDBMemoryIndexRepository
from chalicelib.storage.model_files import LocalModelFile, S3ModelFile
from chalicelib.storage.owner_store import DynamoDBOwnerStore
from chalicelib.storage.protocols import IdempotencyStore, KvQuota, ModelFile
from chalicelib.storage.queue import SqsReviewQueue
from chalicelib.storage.recall_index import DynamoDBRecallIndex
from chalicelib.storage.recalls import DynamoDBRecallRepository
from chalicelib.storage.reports import S3ReportStore
from chalicelib.storage.retention import DynamoDBRetentionMarks
from chalicelib.storage.review_actions import DynamoDBPendingRepository, DynamoDBUndoRepository
from chalicelib.storage.review_runs import DynamoDBReviewRunRepository
from chalicelib.storage.reviews import DynamoDBReviewRepository
from chalicelib.storage.routines import DynamoDBRoutineRepository
from chalicelib.storage.same_facts import DynamoDBSameFacts
from chalicelib.storage.upgrade import TableUpgrade
from chalicelib.storage.vetoes import DynamoDBVetoIndex
from chalicelib.storage.web_sessions import DynamoDBWebSessionRepository
from chalicelib.storage.webhook_http import HttpxSender
from chalicelib.storage.webhooks import DynamoDBWebhookRepository
from chalicelib.storage.wiki_pages import DynamoDBPageRepository, PageVersionChanged
from chalicelib.storage.wiki_sections import DynamoDBSectionIndex

if TYPE_CHECKING:  # numpy: loaded by the embedder itself, on first use (chalicelib/deferred.py)
    # The boto3 client types (boto3-stubs, dev only): nothing is imported at run time.
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient

    from chalicelib.services.recall.embedding import Embedder


@dataclass(frozen=True)
class Dashboard:
    """The services only the persons' dashboard uses (docs/reference.md#13-dashboard,
    docs/issues.md#issue-13); its pages also call every service of ``Services`` as the signed-in
    person."""

    sessions: DashboardSessions
    workspace: WorkspaceService
    people: PeopleService
    overview: AgentOverview
    pictures: AgentPicturesService
    browser: MemoryBrowser
    recall_preview: RecallPreviewService
    day_logs: DayLogIndex


@dataclass(frozen=True)
class Services:
    """Every use-case service, built once, plus the clock they share."""

    settings: Settings
    clock: Clock
    auth: AuthService
    admin: AdminService
    memories: MemoryService
    erasure: MemoryErasure
    """Erasing a memory (docs/reference.md#erasing-a-memory)."""
    as_of: MemoryAsOf
    """Memories as they were at a moment (docs/reference.md#as-of-a-moment)."""
    recall_as_of: RecallAsOf
    """The recall preview as of a moment (docs/reference.md#as-of-a-moment)."""
    run_blocks: RunBlocks
    """The block a logged recall gave, rebuilt (docs/reference.md#what-a-run-saw)."""
    retention: ArchivedTextRetention
    """The sweep of archived memories' audit texts (docs/reference.md#retention)."""
    lifecycle: PersonLifecycle
    learnings: LearningService
    """Learnings: shared facts of a workspace (docs/reference.md#15-learnings)."""
    pages: PageService
    """Wiki pages a workspace shares with its agents (docs/reference.md#17-wiki-pages)."""
    bulk: BulkService
    """Persons' bulk actions on memories and their undo (docs/reference.md#bulk-actions)."""
    sources: ErasedSources
    """The learnings an erasure retires and blanks (docs/reference.md#learnings-and-erasure)."""
    """A person's erasures of agents and exports (docs/reference.md#exports-for-a-person)."""
    day_log: DayLogService
    recall: RecallService
    kv: KvService
    routines: RoutineService
    reviews: ReviewService
    idempotency: IdempotencyService
    review_runs: ManualReviews
    secrets: SecretFinder
    """The secret detector every service shares (the adapters check run headers with it)."""
    dashboard: Dashboard
    events: EventService
    """The pull feed of change events (docs/reference.md#change-events)."""
    webhooks: WebhookService
    """Persons' webhook endpoints (docs/reference.md#webhooks)."""
    webhook_delivery: WebhookDelivery
    """The webhook delivery worker (docs/reference.md#webhook-deliveries)."""


def dynamodb_client(settings: Settings) -> DynamoDBClient:
    """A DynamoDB client for the settings' region and endpoint (adaptive retries)."""
    return boto3.client(
        "dynamodb",
        region_name=settings.region,
        endpoint_url=settings.dynamodb_endpoint,
        config=Config(retries={"mode": "adaptive", "max_attempts": 5}),
    )


def s3_client(settings: Settings) -> S3Client:
    """An S3 client for the settings' region and endpoint (path-style for an emulator)."""
    return boto3.client(
        "s3",
        region_name=settings.region,
        endpoint_url=settings.s3_endpoint,
        config=Config(
            retries={"mode": "standard", "max_attempts": 5},
            s3={"addressing_style": "path" if settings.s3_endpoint else "auto"},
        ),
    )


def keyed_hash(settings: Settings) -> KeyedHash:
    """The keyed digests of personal data in keys (docs/reference.md#keyed-hashes-of-personal-data):
    under ``PINEWORK_HASH_SECRET`` when set, else the Secrets Manager secret of
    ``PINEWORK_HASH_SECRET_ARN``, else (outside Lambda only) the development secret.
    The secret is read on the first digest; a Lambda with neither setting refuses it
    (``SettingsError``, a 500 the operator's logs name)."""
    if settings.hash_secret:
        value = settings.hash_secret
        return KeyedHash(lambda: HashSecrets.parse(value))
    if settings.hash_secret_arn:
        secret = SecretsManagerSecret(
            lambda: boto3.client("secretsmanager", region_name=settings.region),
            settings.hash_secret_arn,
        )
        return KeyedHash(lambda: HashSecrets.parse(secret.read()))
    if settings.hash_secret_required:

        def refuse() -> HashSecrets:
            raise SettingsError(
                "PINEWORK_HASH_SECRET_ARN is not set: the stack's HashSecretArn output "
                "must be in the function's environment (docs/operations.md#deploy)"
            )

        return KeyedHash(refuse)
    return KeyedHash(lambda: DEVELOPMENT_SECRETS)


def archived_text_retention(
    settings: Settings, table: DynamoDBTable, clock: Clock
) -> ArchivedTextRetention:
    """The sweep of archived memories' audit texts (docs/reference.md#retention)."""
    return ArchivedTextRetention(
        DynamoDBMemoryIndexRepository(table),
        # only audit records are rewritten: the scrub never opens the bucket here
        DynamoDBMemoryScrub(
            table, DynamoDBOwnerStore(table, lambda: s3_client(settings), settings.bucket_name)
        ),
        DynamoDBRetentionMarks(table),
        clock,
        timedelta(days=settings.archived_text_retention_days),
    )


def erased_sources(
    table: DynamoDBTable, memories: DynamoDBMemoryRepository, clock: Clock, ids: IdFactory
) -> ErasedSources:
    """The learnings whose sources an erasure takes (docs/reference.md#learnings-and-erasure)."""
    return ErasedSources(
        DynamoDBLearningRepository(table), memories, clock, ids, LearningVersionChanged
    )


def sqs_client(settings: Settings) -> SQSClient:
    """An SQS client for the settings' region and endpoint (the review fan-out)."""
    return boto3.client(
        "sqs",
        region_name=settings.region,
        endpoint_url=settings.sqs_endpoint,
        config=Config(retries={"mode": "standard", "max_attempts": 5}),
    )


def bedrock_runtime_client(settings: Settings) -> BedrockRuntimeClient:
    """A Bedrock Runtime client for the settings' region (the ``bedrock`` reviewer).

    Connect 5 s, read 25 s, and one retry (standard mode) for throttling and
    transient errors: with the reviewer's 20 s budget an agent takes under a
    minute, so a batch of 10 fits the review worker's 600 s (.chalice/config.json).
    """
    return boto3.client(
        "bedrock-runtime",
        region_name=settings.region,
        config=Config(
            connect_timeout=5, read_timeout=25, retries={"mode": "standard", "max_attempts": 2}
        ),
    )


def build_reviewer(settings: Settings, bedrock: BedrockRuntimeClient | None = None) -> Reviewer:
    """The reviewer ``settings.reviewer`` names (docs/reference.md#9-review; ``PINEWORK_REVIEWER``).

    Args:
        settings: ``reviewer`` (``rules`` or ``bedrock``), ``bedrock_model_id``, ``region``.
        bedrock: a boto3 ``bedrock-runtime`` client; built on first use when omitted.

    Returns:
        ``RuleReviewer`` for ``rules``; ``BedrockReviewer`` (falling back to the
        rules when Bedrock fails) for ``bedrock``.
    """
    if settings.reviewer == "bedrock":
        from chalicelib.services.review.bedrock_reviewer import BedrockReviewer  # on first use

        return BedrockReviewer(
            lambda: bedrock or bedrock_runtime_client(settings), settings.bedrock_model_id
        )
    return RuleReviewer()


def kv_limits(settings: Settings) -> KvLimits:
    """The key-value quotas the settings name (``PINEWORK_KV_*``, docs/reference.md#kv-quotas)."""
    return KvLimits(
        anon=KvQuota(settings.kv_anon_max_keys, settings.kv_anon_max_bytes),
        byok=KvQuota(settings.kv_byok_max_keys, settings.kv_byok_max_bytes),
        byok_new_scopes_per_day=settings.kv_byok_new_scopes_per_day,
        account=KvQuota(settings.kv_account_max_keys, settings.kv_account_max_bytes),
        anon_value_max_bytes=settings.kv_anon_max_value_bytes,
    )


RERANKER_WEIGHTS_FILE = Path(__file__).resolve().parents[1] / RERANKER_WEIGHTS_OBJECT
"""The checkout's reranker weights (``models/ms-marco-minilm-l12-int8.npz``, built by
``make``; not in the Lambda zip, so absent on Lambda)."""


def reranker_weights(settings: Settings, s3_factory: Callable[[], S3Client]) -> ModelFile:
    """Where the recall reranker's weights are read from (docs/operations.md#reranker-weights).

    Nothing is read or downloaded here: the returned ``ModelFile.path()`` does that on
    first call.

    Args:
        settings: ``model_source`` (``s3`` on Lambda and on the local server, ``local``,
            or ``auto``: the checkout's file when it exists, else ``s3``), ``bucket_name``
            and ``model_dir``.
        s3_factory: returns a boto3 S3 client (called on the first download only).

    Returns:
        ``S3ModelFile`` of ``s3://<bucket>/models/ms-marco-minilm-l12-int8.npz`` kept in
        ``model_dir``, or ``LocalModelFile`` of ``RERANKER_WEIGHTS_FILE``.
    """
    source = settings.model_source
    if source == "auto":
        source = "local" if RERANKER_WEIGHTS_FILE.is_file() else "s3"
    if source == "local":
        return LocalModelFile(RERANKER_WEIGHTS_FILE)
    return S3ModelFile(
        s3_factory, settings.bucket_name, RERANKER_WEIGHTS_OBJECT, Path(settings.model_dir)
    )


def default_scorer(
    settings: Settings, embedder: Embedder, s3_factory: Callable[[], S3Client]
) -> CandidateScorer:
    """Recall's default scorer (docs/reference.md#8-recall), built on its first use: the
    calibrated stages over ``embedder`` and, unless ``PINEWORK_RERANKER=off``, the
    process's cross-encoder on the weights ``reranker_weights`` finds. On Lambda
    (``AWS_LAMBDA_FUNCTION_NAME`` set) a new container's recalls do not wait for those
    weights (they load in the background, docs/operations.md#reranker-weights); elsewhere
    the first recall loads them.
    """
    if settings.reranker == "off":
        return DeferredScorer(lambda: relevance_scorer(embedder))
    weights = reranker_weights(settings, s3_factory)
    source = "|".join(
        str(part)
        for part in (
            settings.model_source,
            settings.bucket_name,
            settings.s3_endpoint,
            settings.model_dir,
        )
    )
    on_lambda = bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME"))
    return DeferredScorer(
        lambda: relevance_scorer(
            embedder,
            shared_cross_encoder(source, weights.path),
            wait_for_reranker=not on_lambda,
        )
    )


def build_services(
    settings: Settings,
    *,
    clock: Clock | None = None,
    scorer: CandidateScorer | None = None,
    embedder: Embedder | None = None,
    tokens: TokenCounter | None = None,
    secrets: SecretFinder | None = None,
    client: DynamoDBClient | None = None,
    s3: S3Client | None = None,
    reviewer: Reviewer | None = None,
    sqs: SQSClient | None = None,
    bedrock: BedrockRuntimeClient | None = None,
) -> Services:
    """Build every service from settings; each part can be injected (docs/conventions.md#rule-7).

    Args:
        settings: where the table lives.
        clock: defaults to the system clock (UTC).
        scorer: recall relevance; defaults to ``RelevanceScorer`` on ``embedder``.
        embedder: fact embeddings at save time; defaults to the process's MiniLM.
        tokens: token counter; defaults to cl100k.
        secrets: secret detector; defaults to ``SecretDetector``.

    The default embedder, scorer, token counter and secret detector import their
    libraries (numpy, tiktoken, detect-secrets) on first use (``chalicelib.deferred``).
        client: a boto3 DynamoDB client; built from settings when omitted.
        s3: a boto3 S3 client for large key-value values; built from settings on
            first use when omitted (also for review reports).
        reviewer: the review's judgement; defaults to ``build_reviewer(settings)``:
            ``RuleReviewer``, or ``BedrockReviewer`` with ``PINEWORK_REVIEWER=bedrock``.
        sqs: a boto3 SQS client for the review fan-out; built on first use when omitted.
        bedrock: a boto3 ``bedrock-runtime`` client for the ``bedrock`` reviewer;
            built on first use when omitted.
    """
    clock = clock or SystemClock()
    ids = IdFactory(clock)
    digests = keyed_hash(settings)
    table = DynamoDBTable(client or dynamodb_client(settings), settings.table_name)
    memories = DynamoDBMemoryRepository(table)
    directory = DynamoDBDirectoryRepository(table)
    detector = secrets or DeferredSecretFinder(secret_detector)
    embedder = embedder or default_embedder()
    routine_store = DynamoDBRoutineRepository(table)
    routines = RoutineService(routine_store, directory, clock)
    recall_store = DynamoDBRecallRepository(
        table, clock, timedelta(days=settings.recall_log_retention_days)
    )
    recall_index = DynamoDBRecallIndex(
        table, ids, S3ObjectStore(lambda: s3 or s3_client(settings), settings.bucket_name)
    )
    review_retention = timedelta(days=settings.review_retention_days)
    review_store = DynamoDBReviewRepository(table, clock, review_retention)
    reports = S3ReportStore(lambda: s3 or s3_client(settings), settings.bucket_name)
    queue = SqsReviewQueue(lambda: sqs or sqs_client(settings), settings.review_queue_name)
    lifecycle_queue = SqsReviewQueue(
        lambda: sqs or sqs_client(settings), settings.lifecycle_queue_name
    )
    learnings = LearningService(
        DynamoDBLearningRepository(table),
        directory,
        detector,
        clock,
        ids,
        embedder=embedder,
        version_changed=LearningVersionChanged,
        # memory_service is built below; the approval calls it long after
        archive=lambda person, memory_id, reason: memory_service.archive(
            person, memory_id, ArchiveRequest(reason=reason)
        ),
    )
    reviews = ReviewService(
        memories,
        review_store,
        reports,
        routines,
        directory,
        detector,
        reviewer or build_reviewer(settings, bedrock),
        clock,
        ids,
        queue,
        embedder,
        pending=DynamoDBPendingRepository(table, clock, review_retention),
        undos=DynamoDBUndoRepository(table, review_retention),
        shared=SharedFacts(memories, DynamoDBSameFacts(table), learnings),
    )
    memory_service = MemoryService(
        memories,
        directory,
        detector,
        clock,
        ids,
        embedder=embedder,
        after_save=routines.ensure_routine,
        vetoes=VetoGuard(memories, DynamoDBVetoIndex(table)),
        archived_text_retention=timedelta(days=settings.archived_text_retention_days),
    )
    as_of = MemoryAsOf(
        memories,
        DynamoDBAsOfReader(table),
        directory,
        clock,
        timedelta(days=settings.archived_text_retention_days),
    )
    tokens = tokens or Cl100kTokenCounter()
    page_store = DynamoDBPageRepository(table)
    sections = SectionIndexer(
        DynamoDBSectionIndex(
            table, S3ObjectStore(lambda: s3 or s3_client(settings), settings.bucket_name)
        ),
        tokens,
        embedder,
        page_store.get,
    )
    recall = RecallService(
        memories,
        recall_store,
        directory,
        scorer or default_scorer(settings, embedder, lambda: s3 or s3_client(settings)),
        tokens,
        clock,
        ids,
        settings.recall_time_budget_ms,
        detector,
        recall_index,
        learnings.active,
        sections,
    )
    index = DynamoDBMemoryIndexRepository(table)
    auth = AuthService(directory, clock)
    owner_store = DynamoDBOwnerStore(
        table, lambda: s3 or s3_client(settings), settings.bucket_name, clock
    )
    sources = erased_sources(table, memories, clock, ids)
    owner_erasure = OwnerErasure(owner_store, directory, clock, sources)
    transfer = WorkspaceTransfer(
        owner_store, RecallIndexBackfill(memories, recall_index, directory, clock), clock, digests
    )
    webhook_store = DynamoDBWebhookRepository(table)
    attempts = Attempts(
        webhook_store,
        HttpxSender(),
        system_resolver,
        clock,
        ids,
        allow_loopback=settings.webhooks_allow_loopback,
    )
    return Services(
        settings=settings,
        clock=clock,
        auth=auth,
        admin=AdminService(
            directory,
            clock,
            ids,
            EmbeddingBackfill(memories, embedder),
            RecallIndexBackfill(memories, recall_index, directory, clock),
            TableUpgrade(
                table,
                DynamoDBSectionIndex(
                    table, S3ObjectStore(lambda: s3 or s3_client(settings), settings.bucket_name)
                ),
            ),
            owner_erasure,
            transfer,
            digests,
            archived_text_retention(settings, table, clock),
        ),
        memories=memory_service,
        as_of=as_of,
        recall_as_of=RecallAsOf(recall, as_of),
        run_blocks=RunBlocks(recall, as_of, learnings),
        erasure=MemoryErasure(
            memories,
            DynamoDBMemoryScrub(table, owner_store),
            sources,
            RecallIndexBackfill(memories, recall_index, directory, clock),
            detector,
            clock,
            ids,
        ),
        retention=archived_text_retention(settings, table, clock),
        events=EventService(DynamoDBEventFeed(table), clock),
        webhooks=WebhookService(webhook_store, attempts, KNOWN_EVENT_TYPES, clock, ids),
        webhook_delivery=WebhookDelivery(
            webhook_store,
            DynamoDBEventFeed(table),
            attempts,
            clock,
            workers=settings.read_concurrency,
        ),
        learnings=learnings,
        pages=PageService(
            page_store,
            detector,
            clock,
            ids,
            version_changed=PageVersionChanged,
            sections=sections,
        ),
        bulk=BulkService(memory_service, DynamoDBBulkRepository(table), detector, ids, clock),
        sources=sources,
        lifecycle=PersonLifecycle(
            owner_erasure,
            owner_store,
            ReadableExport(owner_store, clock),
            DynamoDBExportStore(
                table, lambda: s3 or s3_client(settings), settings.bucket_name, clock
            ),
            directory,
            lifecycle_queue,
            detector,
            clock,
            ids,
            taken=ExportTaken,
        ),
        day_log=DayLogService(memories, detector, clock, ids),
        recall=recall,
        kv=KvService(
            DynamoDBKvRepository(
                table, S3ObjectStore(lambda: s3 or s3_client(settings), settings.bucket_name)
            ),
            detector,
            clock,
            kv_limits(settings),
            digests,
        ),
        routines=routines,
        reviews=reviews,
        review_runs=ManualReviews(
            reviews,
            DynamoDBReviewRunRepository(table, clock, review_retention),
            review_store,
            reports,
            memories,
            directory,
            queue,
            clock,
            ids,
            reviewer=settings.reviewer,
            inline_max_facts=settings.review_inline_max_facts,
        ),
        idempotency=IdempotencyService(
            lambda: idempotency_store(table), settings.idempotency_retention_hours * 3600
        ),
        secrets=detector,
        dashboard=Dashboard(
            sessions=DashboardSessions(DynamoDBWebSessionRepository(table), directory, auth, clock),
            workspace=WorkspaceService(directory, clock),
            people=PeopleService(directory, Enrolment(directory, clock, ids, digests)),
            overview=AgentOverview(
                index,
                recall_store,
                review_store,
                routine_store,
                clock,
                workers=settings.read_concurrency,
            ),
            pictures=AgentPicturesService(directory, index, recall_store, clock),
            browser=MemoryBrowser(memory_service, index, clock),
            recall_preview=RecallPreviewService(recall, memories, directory, clock),
            day_logs=DayLogIndex(directory, index),
        ),
    )


def idempotency_store(table: DynamoDBTable) -> IdempotencyStore:
    """The idempotency records' persistence layer on ``table`` (docs/issues.md#issue-15).

    Imported here, on the first request with an ``Idempotency-Key``: Powertools'
    idempotency modules are not paid by every cold start.
    """
    from chalicelib.storage.idempotency import DynamoDBIdempotencyStore

    return DynamoDBIdempotencyStore(table)


@functools.cache
def default_embedder() -> Embedder:
    """The process's one embedder: numpy and its weights load on first use, once,
    and are read-only."""
    return DeferredEmbedder(minilm_embedder)


_installed: dict[str, Services] = {}


@functools.cache
def _from_environment() -> Services:
    return build_services(Settings.from_env())


def services() -> Services:
    """The process-wide services: the installed ones, else built once from the environment."""
    installed = _installed.get("services")
    return installed if installed is not None else _from_environment()


def install(wired: Services | None) -> None:
    """Use ``wired`` for every request from now on (tests, the local server);
    ``None`` goes back to building from the environment (and forgets that build)."""
    _installed.pop("services", None)
    _from_environment.cache_clear()
    if wired is not None:
        _installed["services"] = wired


def build_admin_service(settings: Settings) -> AdminService:
    """The operator commands' service for a given table (``pinework admin …``)."""
    clock = SystemClock()
    table = DynamoDBTable(dynamodb_client(settings), settings.table_name)
    memories = DynamoDBMemoryRepository(table)
    directory = DynamoDBDirectoryRepository(table)
    ids = IdFactory(clock)
    digests = keyed_hash(settings)
    index_backfill = RecallIndexBackfill(
        memories,
        DynamoDBRecallIndex(
            table, ids, S3ObjectStore(lambda: s3_client(settings), settings.bucket_name)
        ),
        directory,
        clock,
    )
    owner_store = DynamoDBOwnerStore(
        table, lambda: s3_client(settings), settings.bucket_name, clock
    )
    return AdminService(
        directory,
        clock,
        ids,
        EmbeddingBackfill(memories, default_embedder()),
        index_backfill,
        TableUpgrade(
            table,
            DynamoDBSectionIndex(
                table, S3ObjectStore(lambda: s3_client(settings), settings.bucket_name)
            ),
        ),
        OwnerErasure(owner_store, directory, clock, erased_sources(table, memories, clock, ids)),
        WorkspaceTransfer(owner_store, index_backfill, clock, digests),
        digests,
        archived_text_retention(settings, table, clock),
    )
