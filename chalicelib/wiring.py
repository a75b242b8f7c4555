"""The composition root: settings -> boto3 -> repositories -> services, cached.

Nothing is built at import time (STYLE.md rules 5–6). ``services()`` builds
once per Lambda container; tests call ``services.cache_clear()`` after
starting moto, or build their own with ``build_services``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config

from chalicelib.ids import Clock, IdFactory, SystemClock
from chalicelib.services.access import AdminService, AuthService
from chalicelib.services.day_log import DayLogService
from chalicelib.services.memories import MemoryService
from chalicelib.services.recall import RecallService
from chalicelib.services.rules import SecretFinder
from chalicelib.services.scoring import LexicalScorer, Scorer
from chalicelib.services.secrets import SecretDetector
from chalicelib.services.tokens import Cl100kTokenCounter, TokenCounter
from chalicelib.settings import Settings
from chalicelib.storage.dynamodb import (
    DynamoDBDirectoryRepository,
    DynamoDBMemoryRepository,
    DynamoDBTable,
)
from chalicelib.storage.recalls import DynamoDBRecallRepository


@dataclass(frozen=True)
class Services:
    """Every use-case service, built once, plus the clock they share."""

    settings: Settings
    clock: Clock
    auth: AuthService
    admin: AdminService
    memories: MemoryService
    day_log: DayLogService
    recall: RecallService


def dynamodb_client(settings: Settings) -> Any:
    """A DynamoDB client for the settings' region and endpoint (adaptive retries)."""
    return boto3.client(
        "dynamodb",
        region_name=settings.region,
        endpoint_url=settings.dynamodb_endpoint,
        config=Config(retries={"mode": "adaptive", "max_attempts": 5}),
    )


def build_services(
    settings: Settings,
    *,
    clock: Clock | None = None,
    scorer: Scorer | None = None,
    tokens: TokenCounter | None = None,
    secrets: SecretFinder | None = None,
    client: Any = None,
) -> Services:
    """Build every service from settings; each part can be injected (STYLE.md rule 7).

    Args:
        settings: where the table lives.
        clock: defaults to the system clock (UTC).
        scorer: recall relevance; defaults to ``LexicalScorer``.
        tokens: token counter; defaults to cl100k.
        secrets: secret detector; defaults to ``SecretDetector``.
        client: a boto3 DynamoDB client; built from settings when omitted.
    """
    clock = clock or SystemClock()
    ids = IdFactory(clock)
    table = DynamoDBTable(client or dynamodb_client(settings), settings.table_name)
    memories = DynamoDBMemoryRepository(table)
    directory = DynamoDBDirectoryRepository(table)
    detector = secrets or SecretDetector()
    return Services(
        settings=settings,
        clock=clock,
        auth=AuthService(directory),
        admin=AdminService(directory, clock, ids),
        memories=MemoryService(memories, directory, detector, clock, ids),
        day_log=DayLogService(memories, detector, clock, ids),
        recall=RecallService(
            memories,
            DynamoDBRecallRepository(table),
            directory,
            scorer or LexicalScorer(),
            tokens or Cl100kTokenCounter(),
            clock,
            ids,
            settings.recall_time_budget_ms,
        ),
    )


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
    return AdminService(DynamoDBDirectoryRepository(table), clock, IdFactory(clock))
