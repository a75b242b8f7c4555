"""On-demand recall (SPEC §8): score an agent's live facts against a query,
keep scores >= 0.5 best first, cut to 300 memories and 12,000 tokens, count the
recall on exactly the memories returned, and render the ``--- MEMORY ---`` block.

If the scorer raises or runs past its time budget, the newest facts are
returned under the same budgets with ``fallback: "newest"``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from chalicelib.errors import InvalidRequest
from chalicelib.ids import Clock
from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.models.principal import Principal
from chalicelib.models.requests import RecallRequest
from chalicelib.services.memories import RunContext
from chalicelib.services.rules import RECALL_QUERY_MAX_CHARS, resolve_agent
from chalicelib.services.scoring import Scorer
from chalicelib.services.tokens import TokenCounter
from chalicelib.storage.protocols import DirectoryRepository, MemoryRepository

logger = logging.getLogger(__name__)

SCORE_CUTOFF = 0.5
MAX_MEMORIES = 300
MAX_MEMORY_TOKENS = 12_000
MAX_DAY_LOG_TOKENS = 2_000
BLOCK_HEADER = "--- MEMORY ---"
DAY_LOG_HEADER = "--- DAY LOG (today and yesterday, UTC, newest first) ---"
BLOCK_FOOTER = "--- END MEMORY ---"
FALLBACK_NEWEST = "newest"


@dataclass(frozen=True)
class ScoredMemory:
    """A recalled memory and its score (``None`` when recall fell back to newest)."""

    memory: Memory
    score: float | None


@dataclass(frozen=True)
class RecallResult:
    """What a recall returns: the query used, the memories, the block, any fallback."""

    query: str
    fallback: str | None
    memories: list[ScoredMemory]
    block: str


def memory_line(memory: Memory) -> str:
    """One block line: ``mem_… (YYYY-MM-DD) text`` with line breaks flattened."""
    created = memory.created_at.astimezone(UTC).date().isoformat()
    text = " ".join(memory.text.split())
    return f"{memory.id} ({created}) {text}"


class RecallService:
    """Recall for agents and persons.

    Args:
        memories: memory storage.
        directory: agents, to check a person's ``agentId``.
        scorer: relevance in [0, 1] (pluggable, SPEC §8).
        tokens: the real tokenizer's counter.
        clock: the current time.
        time_budget_ms: scoring slower than this falls back to newest.
    """

    def __init__(
        self,
        memories: MemoryRepository,
        directory: DirectoryRepository,
        scorer: Scorer,
        tokens: TokenCounter,
        clock: Clock,
        time_budget_ms: int,
    ) -> None:
        self._memories = memories
        self._directory = directory
        self._scorer = scorer
        self._tokens = tokens
        self._clock = clock
        self._budget_seconds = time_budget_ms / 1000

    def recall(self, principal: Principal, request: RecallRequest, run: RunContext) -> RecallResult:
        """Recall on demand: counts as a recall (SPEC §8).

        Args:
            request: ``query`` (default: the run's task key) and a person's ``agentId``.
            run: the run's headers.

        Raises:
            MemoryNotOwn, MemoryAgentRequired: see ``resolve_agent``.
            InvalidRequest: no query and no task; query over 4,000 characters.
        """
        agent_id = resolve_agent(self._directory, principal, request.agent_id)
        query = request.query if request.query is not None else run.task_key
        if query is None or not query.strip():
            raise InvalidRequest("Send a query, or X-Pinework-Task to recall for the task.")
        if len(query) > RECALL_QUERY_MAX_CHARS:
            raise InvalidRequest(
                f"The query has {len(query)} characters; the limit is {RECALL_QUERY_MAX_CHARS}."
            )
        now = self._clock.now()
        facts = [fact for fact in self._memories.live_facts(agent_id) if not fact.is_expired(now)]
        ranked, fallback = self._rank(query, facts)
        picked = self._within_budget(ranked)
        self._memories.record_recall([item.memory.id for item in picked], now)
        picked = [
            ScoredMemory(
                item.memory.model_copy(
                    update={"recall_count": item.memory.recall_count + 1, "last_recalled_at": now}
                ),
                item.score,
            )
            for item in picked
        ]
        block = self._render(agent_id, picked, now)
        return RecallResult(query=query, fallback=fallback, memories=picked, block=block)

    def _rank(self, query: str, facts: list[Memory]) -> tuple[list[ScoredMemory], str | None]:
        started = time.monotonic()
        try:
            scores = self._scorer.score(query, [fact.text for fact in facts])
        except Exception:
            logger.exception("recall scorer failed; falling back to newest")
            return [ScoredMemory(fact, None) for fact in facts], FALLBACK_NEWEST
        if time.monotonic() - started > self._budget_seconds or len(scores) != len(facts):
            logger.warning("recall scorer over budget or malformed; falling back to newest")
            return [ScoredMemory(fact, None) for fact in facts], FALLBACK_NEWEST
        kept = [
            ScoredMemory(fact, round(score, 4))
            for fact, score in zip(facts, scores, strict=True)
            if score >= SCORE_CUTOFF
        ]
        # Best first; among equal scores the newer fact (larger ULID) first.
        kept.sort(key=lambda item: item.memory.id, reverse=True)
        kept.sort(key=lambda item: item.score or 0.0, reverse=True)
        return kept, None

    def _within_budget(self, ranked: Sequence[ScoredMemory]) -> list[ScoredMemory]:
        """Whole memories, best first, at most 300 and 12,000 tokens; a memory too big
        for what is left is skipped and smaller ones after it still considered."""
        picked: list[ScoredMemory] = []
        used = 0
        for item in ranked:
            if len(picked) == MAX_MEMORIES:
                break
            cost = self._tokens.count(memory_line(item.memory))
            if used + cost > MAX_MEMORY_TOKENS:
                continue
            picked.append(item)
            used += cost
        return picked

    def _render(self, agent_id: str, picked: Sequence[ScoredMemory], now: datetime) -> str:
        lines = [BLOCK_HEADER, *(memory_line(item.memory) for item in picked)]
        day_lines = self._day_log_lines(agent_id, now)
        if day_lines:
            lines += [DAY_LOG_HEADER, *day_lines]
        lines.append(BLOCK_FOOTER)
        return "\n".join(lines)

    def _day_log_lines(self, agent_id: str, now: datetime) -> list[str]:
        """Today's and yesterday's lines, newest first, trimmed oldest-first to 2,000 tokens."""
        newest_first: list[str] = []
        today = now.astimezone(UTC).date()
        for day in (today, today - timedelta(days=1)):
            row_id = self._memories.live_day_row_id(agent_id, day.isoformat())
            row = None if row_id is None else self._memories.get(row_id)
            if row is None or row.status is not MemoryStatus.ACTIVE:
                continue
            newest_first += [f"{day.isoformat()} {line}" for line in reversed(row.text.split("\n"))]
        kept: list[str] = []
        used = 0
        for line in newest_first:
            cost = self._tokens.count(line)
            if used + cost > MAX_DAY_LOG_TOKENS:
                break
            kept.append(line)
            used += cost
        return kept
