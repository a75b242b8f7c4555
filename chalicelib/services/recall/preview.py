"""Recall preview (docs/reference.md#13-dashboard, docs/issues.md#issue-13): what an agent would get
for a task, with every fact's score and whether it would be kept, and the block it would see.

A preview is not a recall: it counts nothing (no ``recallCount``, no
``lastRecalledAt``), writes no recall log entry and leaves run-start session
state alone, so a person can try as many tasks as they like without changing
what the review sees (its "recalled in the last 30 days" rules read those
counts). The scoring, the 0.5 cut, the budgets and the block are
``RecallService``'s own, so a preview shows what a recall would return.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chalicelib.errors import InvalidRequest
from chalicelib.ids import Clock
from chalicelib.limits import MAX_MEMORIES, MAX_MEMORY_TOKENS, SCORE_CUTOFF
from chalicelib.models.memory import Memory
from chalicelib.models.principal import Principal
from chalicelib.services.access.who import resolve_agent
from chalicelib.services.recall.service import RecallService, WikiPick
from chalicelib.services.text import has_content
from chalicelib.storage.protocols import DirectoryRepository, MemoryRepository

PREVIEW_LINES = 60
"""Facts listed at most (best first): every kept one up to this, then the best left out."""
BELOW_CUTOFF = f"score below {SCORE_CUTOFF}"
OVER_BUDGET = f"over the {MAX_MEMORIES}-memory / {MAX_MEMORY_TOKENS:,}-token budget"


@dataclass(frozen=True)
class PreviewLine:
    """One scored fact: its score (None on fallback), kept or not, and why not."""

    memory: Memory
    score: float | None
    kept: bool
    why_not: str | None = None


@dataclass(frozen=True)
class RecallPreview:
    """What a recall for ``query`` would return now.

    Attributes:
        query: the task or question scored against.
        fallback: ``newest`` when scoring failed or ran past its budget.
        considered: live, unexpired facts scored.
        kept: facts the recall would return.
        lines: the best ``PREVIEW_LINES`` facts, best first.
        block: the block the agent would see (``--- WIKI ---`` part included).
        wiki: the wiki sections it would be shown, or that scoring them failed
            (docs/reference.md#wiki-in-recall).
    """

    query: str
    fallback: str | None
    considered: int
    kept: int
    lines: list[PreviewLine]
    block: str
    wiki: WikiPick = field(default_factory=WikiPick)


class RecallPreviewService:
    """Runs previews.

    Args:
        recall: the recall service (scoring, budgets, the block).
        memories: memory storage (the agent's live facts).
        directory: agents, to check the named agent's workspace.
        clock: the current time.
    """

    def __init__(
        self,
        recall: RecallService,
        memories: MemoryRepository,
        directory: DirectoryRepository,
        clock: Clock,
    ) -> None:
        self._recall = recall
        self._memories = memories
        self._directory = directory
        self._clock = clock

    def preview(self, principal: Principal, agent_id: str | None, query: str) -> RecallPreview:
        """Score the agent's live, unexpired facts against ``query`` without recalling.

        Raises:
            InvalidRequest: a blank query, or one over 4,000 characters.
            SecretInMemory: the query looks like a credential (as for a recall).
            MemoryAgentRequired, MemoryNotOwn, Forbidden: see ``resolve_agent``.
        """
        agent = resolve_agent(self._directory, principal, agent_id)
        self._recall.check_query(query, "task")
        if not has_content(query):
            raise InvalidRequest("Write the task or question the agent would get.")
        now = self._clock.now()
        facts = [fact for fact in self._memories.live_facts(agent) if not fact.is_expired(now)]
        scored, fallback = self._recall.score_all(query, facts, now)
        eligible = (
            scored
            if fallback is not None
            else [item for item in scored if (item.score or 0.0) >= SCORE_CUTOFF]
        )
        picked = self._recall.within_budget(eligible)
        picked_ids = {item.memory.id for item in picked}
        lines = []
        for item in scored[:PREVIEW_LINES]:
            kept = item.memory.id in picked_ids
            below = fallback is None and (item.score or 0.0) < SCORE_CUTOFF
            why = None if kept else (BELOW_CUTOFF if below else OVER_BUDGET)
            lines.append(PreviewLine(item.memory, item.score, kept, why))
        wiki = self._recall.pick_sections(principal.workspace_id, query, now)
        return RecallPreview(
            query=query,
            fallback=fallback,
            considered=len(facts),
            kept=len(picked),
            lines=lines,
            block=self._recall.render_block(
                agent,
                picked,
                now,
                self._recall.pick_learnings(principal.workspace_id, query, now),
                wiki=wiki,
            ),
            wiki=wiki,
        )
