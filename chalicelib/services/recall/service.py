"""Recall (docs/reference.md#8-recall): score an agent's live facts against the task or message,
keep scores >= 0.5 best first, cut to 300 memories and 12,000 tokens, count the
recall on exactly the memories returned, log it, and render the
``--- MEMORY ---`` block with today's and yesterday's day log.

Two entry points: on-demand recall (``recall``: counts, never touches the
run-start skip state) and run-start recall (``start``: skips slash commands and
resumed sessions recalled in the last 24 hours). At most ``MAX_KEPT`` (40) scored facts
are returned, ties included. The scorer runs on the request's thread under a deadline
(``deadline.scoring``) that it checks between stages and batches: if it raises or its
time budget runs out, it stops there and the newest facts are returned under the same
budgets with ``fallback: "newest"``; nothing scoring >= 0.5 is an empty result, not a
failure (docs/reference.md#8-recall).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Protocol

from chalicelib.characters import block_text
from chalicelib.errors import Forbidden, InvalidRequest, RecallNotFound
from chalicelib.ids import Clock, IdFactory
from chalicelib.limits import (
    MAX_DAY_LOG_TOKENS,
    MAX_KEPT,
    MAX_LEARNING_TOKENS,
    MAX_MEMORIES,
    MAX_MEMORY_TOKENS,
    MAX_RECALLED_LEARNINGS,
    MAX_RECALLED_SECTIONS,
    MAX_SECTION_TOKENS,
    RECALL_QUERY_MAX_CHARS,
    SCORE_CUTOFF,
    SESSION_WINDOW,
)
from chalicelib.models.learning import Learning
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.models.page import PATH_SEPARATOR, IndexedSection
from chalicelib.models.principal import Principal
from chalicelib.models.recall import (
    RecalledLearning,
    RecalledMemory,
    RecalledSection,
    RecallEntry,
    RecallLogEntry,
    RecallStartRequest,
)
from chalicelib.models.requests import RecallRequest
from chalicelib.models.totals import ListTotal
from chalicelib.services.access.who import refuse_persons, resolve_agent
from chalicelib.services.memory.metadata_filter import meta_filter
from chalicelib.services.memory.tags import tag_filter
from chalicelib.services.recall.candidates import Candidate, CandidateScorer, PartialCandidates
from chalicelib.services.recall.deadline import DeadlinePassed, ScoringRun, scoring
from chalicelib.services.recall.embedding_format import sentence_stand_in
from chalicelib.services.recall.identifiers import keyed_scores
from chalicelib.services.recall.tokens import TokenCounter
from chalicelib.services.run_context import RunContext, check_body_session
from chalicelib.services.text import SecretFinder, check_no_secret, has_content
from chalicelib.storage.protocols import (
    DirectoryRepository,
    MemoryRepository,
    RecallIndexRepository,
    RecallRepository,
    SessionAlreadyRecalled,
    SessionClaim,
)

logger = logging.getLogger(__name__)

WIKI_HEADER = "--- WIKI ---"
WIKI_NOT_SCORED = "(wiki pages not shown: scoring their sections failed)"
"""The WIKI part's one line when the sections could not be scored
(docs/reference.md#wiki-in-recall): no page is shown, never the newest."""
SECTION_TEXT_PREFIX = "> "
"""How a section's text line starts (its heading line starts with the page id)."""
LEARNINGS_HEADER = "--- LEARNINGS (the workspace's, for every agent) ---"
LEARNINGS_FOOTER = "--- END LEARNINGS ---"
BLOCK_HEADER = "--- MEMORY ---"
DAY_LOG_HEADER = "--- DAY LOG (today and yesterday, UTC, newest first) ---"
BLOCK_FOOTER = "--- END MEMORY ---"
FALLBACK_NEWEST = "newest"
SKIP_SLASH_COMMAND = "slash_command"
SKIP_RESUMED_SESSION = "resumed_session_recalled"


RUN_START_IS_FOR_AGENTS = "Run-start recall is for agents; persons use /memories/recall."


@dataclass(frozen=True)
class ScoredMemory:
    """A recalled memory and its score (``None`` when recall fell back to newest)."""

    memory: Memory
    score: float | None


@dataclass(frozen=True)
class ScoredLearning:
    """A recalled learning and its score (``None`` when recall fell back to newest)."""

    learning: Learning
    score: float | None


@dataclass(frozen=True)
class ScoredSection:
    """A wiki section a recall shows, with its score (docs/reference.md#wiki-in-recall)."""

    section: IndexedSection
    score: float


@dataclass(frozen=True)
class WikiPick:
    """What a recall takes from the workspace's wiki pages.

    Attributes:
        sections: the sections shown, best first.
        indexed: the workspace has sections indexed (a published page): the block
            holds a ``--- WIKI ---`` part.
        failed: scoring the sections failed or ran out of time: none is shown and the
            block says so.
        considered: sections indexed (the first stage's; the scorer reads at most
            ``SHORTLIST_SECTIONS`` of them).
    """

    sections: list[ScoredSection] = field(default_factory=list)
    indexed: bool = False
    failed: bool = False
    considered: int = 0


class WikiSections(Protocol):
    """The workspace's section index as recall reads it (``services.wiki.index``)."""

    def candidates(self, workspace_id: str, query: str) -> tuple[list[IndexedSection], int]:
        """The first stage's shortlist of the workspace's sections for ``query``, and
        how many sections are indexed."""
        ...

    def published_version(self, workspace_id: str, page_id: str) -> int | None:
        """The page's version if it is published now (read by key), else None."""
        ...


@dataclass(frozen=True)
class Scoring:
    """How one scoring of the facts went (docs/reference.md#8-recall).

    Attributes:
        ranked: the facts best first (scored), or newest first unscored on a fallback.
        fallback: ``"newest"`` when the scorer failed or its budget ran out, else ``None``.
        reranker: what the reranker did (``deadline.RERANKER_*``), ``None`` when the
            scorer did not say (no reranker stage, or it stopped before it).
        stopped_at: the stage the scorer stopped before when its budget ran out.
        seconds: wall seconds the scoring took.
    """

    ranked: list[ScoredMemory]
    fallback: str | None = None
    reranker: str | None = None
    stopped_at: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class RecallResult:
    """What a recall returns. ``skipped`` names why a run-start recall gave no block;
    ``scoring`` is how its scoring went (``None`` when nothing was scored)."""

    query: str
    fallback: str | None
    memories: list[ScoredMemory]
    block: str | None
    recall_id: str | None = None
    skipped: str | None = None
    learnings: list[ScoredLearning] = field(default_factory=list)
    scoring: Scoring | None = None
    wiki: WikiPick = field(default_factory=WikiPick)


def memory_line(memory: Memory) -> str:
    """One block line: ``mem_… (YYYY-MM-DD) text``, the text as ``block_text`` shows it
    (one line, invisible characters marked, marker dashes quoted;
    docs/reference.md#block-grammar)."""
    created = memory.created_at.astimezone(UTC).date().isoformat()
    return f"{memory.id} ({created}) {block_text(memory.text)}"


def section_lines(section: IndexedSection) -> tuple[str, str]:
    """A section's two block lines (docs/reference.md#block-grammar): ``pag_… §<index>
    (<slug>#<anchor>) <title> › <heading> › …`` (``(<slug>)`` before the first heading),
    then ``> `` and its text. Every stored part is written as ``block_text`` shows it,
    and a ``›`` inside a heading as ``⟨U+203A⟩``, so the path splits at `` › `` only."""
    path = f" {PATH_SEPARATOR} ".join(
        block_text(part).replace(PATH_SEPARATOR, "⟨U+203A⟩") for part in section.heading_path
    )
    where = section.slug + (f"#{block_text(section.anchor)}" if section.anchor else "")
    head = f"{section.page_id} §{section.index} ({where}) {path}"
    return head, SECTION_TEXT_PREFIX + block_text(section.text)


class RecallService:
    """Recall for agents and persons.

    Args:
        memories: memory storage (facts, day rows).
        recalls: counters, the recall log and session state.
        directory: agents, to check a person's ``agentId``.
        scorer: relevance in [0, 1] (pluggable, docs/reference.md#8-recall).
        tokens: the real tokenizer's counter.
        clock: the current time.
        ids: the id factory (``rcl_`` log ids).
        time_budget_ms: the scoring's deadline (``deadline.scoring``): a scorer past it
            stops at its next check and recall falls back to the newest facts.
        secrets: the secret detector: a query, task or message is kept in the recall
            log that every person of the workspace reads, so one that looks like a
            credential is refused as it is everywhere else (``secret_in_memory``).
        index: the recall index a recall reads instead of every fact item
            (docs/issues.md#issue-23-item-1).
        learnings: a workspace's active learnings (docs/reference.md#learnings-in-recall);
            ``None``: none are recalled.
        wiki: the workspaces' section indexes (docs/reference.md#wiki-in-recall);
            ``None``: no wiki part.
    """

    def __init__(
        self,
        memories: MemoryRepository,
        recalls: RecallRepository,
        directory: DirectoryRepository,
        scorer: CandidateScorer,
        tokens: TokenCounter,
        clock: Clock,
        ids: IdFactory,
        time_budget_ms: int,
        secrets: SecretFinder,
        index: RecallIndexRepository,
        learnings: Callable[[str], list[Learning]] | None = None,
        wiki: WikiSections | None = None,
    ) -> None:
        self._learnings = learnings
        self._wiki = wiki
        self._memories = memories
        self._index = index
        self._recalls = recalls
        self._directory = directory
        self._scorer = scorer
        self._tokens = tokens
        self._clock = clock
        self._ids = ids
        self._budget_seconds = time_budget_ms / 1000
        self._secrets = secrets

    def recall(self, principal: Principal, request: RecallRequest, run: RunContext) -> RecallResult:
        """On-demand recall: counts as a recall (unless ``request.count`` is false: a preview,
        no log entry, no counters, ``recall_id`` None; docs/reference.md#recall-preview);
        leaves run-start session state alone.

        Args:
            request: ``query`` (default, and instead of a blank one: the run's task key),
                a person's ``agentId`` and ``count``.
            run: the run's headers.

        Raises:
            MemoryNotOwn, MemoryAgentRequired: see ``resolve_agent``.
            InvalidRequest: no query and no task; query over 4,000 characters.
            SecretInMemory: the query looks like a credential (it would be logged).
            MemoryTagInvalid: a bad ``tags`` / ``anyTags`` filter (``tags.tag_filter``);
                with one, only the facts holding the tags are ranked
                (docs/reference.md#tags).
            MetadataFilterInvalid: a bad ``meta`` filter (``meta_filter``); with one,
                only the facts meeting it are ranked
                (docs/reference.md#metadata-filters).
        """
        agent_id = resolve_agent(self._directory, principal, request.agent_id)
        if request.query is not None:
            self._check_query(request.query)
        # A blank query is no query: the run's task is recalled for instead, as
        # run-start recall does with a blank task.
        query = request.query if has_content(request.query) else run.task_key
        if query is None or not has_content(query):
            if principal.is_agent:
                raise InvalidRequest("Send a query, or X-Pinework-Task to recall for the task.")
            raise InvalidRequest("Send a query: a person has no current task to recall for.")
        only = self._only(agent_id, request.tags, request.any_tags, request.meta)
        return self._recall(
            principal,
            agent_id,
            query,
            run,
            kind="on_demand",
            session=None,
            count=request.count,
            only=only,
        )

    def start(
        self, principal: Principal, request: RecallStartRequest, run: RunContext
    ) -> RecallResult:
        """Run-start recall for the calling agent (docs/reference.md#8-recall).

        Scores against ``task``, else ``message``, else the run's task key; a
        slash command or a resumed session recalled in the last 24 hours is
        skipped (no block, nothing counted, ``skipped`` says why).

        The session is ``sessionId`` or the ``X-Pinework-Session`` header (both must be
        printable ASCII of at most 128 characters, and name the same session when both
        are sent); ``task``, ``message`` and ``slashCommand`` are each at most 4,000
        characters, whichever of them is scored (docs/reference.md#5-limits query limit).

        Raises:
            Forbidden: a person called it (persons use on-demand recall).
            InvalidRequest: no session id, a malformed one, or body and header naming
                different sessions; no task, message or task key; a text over 4,000
                characters.
            SecretInMemory: ``task`` or ``message`` looks like a credential (either may
                be logged); ``sessionId`` has a credential's shape. ``slashCommand``
                is never stored and not checked.
            MemoryTagInvalid, MetadataFilterInvalid: a bad ``tags`` / ``anyTags`` /
                ``meta`` filter; with one, only the facts meeting it are ranked.
        """
        refuse_persons(principal, Forbidden, RUN_START_IS_FOR_AGENTS)
        only = self._only(principal.id, request.tags, request.any_tags, request.meta)
        body_session = check_body_session(request.session_id, self._secrets)
        if body_session is not None and run.session_id not in (None, body_session):
            raise InvalidRequest(
                f"sessionId {body_session!r} and X-Pinework-Session {run.session_id!r} name "
                "different sessions; send one, or the same in both."
            )
        session_id = body_session or run.session_id
        if not session_id:
            raise InvalidRequest("Send sessionId (or X-Pinework-Session) for run-start recall.")
        _check_length(request.slash_command or "", "slashCommand")
        for name, text in (("task", request.task), ("message", request.message)):
            if text is not None:
                self._check_query(text, name)
        sent = request.task or request.message or run.task_key or ""
        if has_content(request.slash_command):
            return RecallResult(sent, None, [], None, skipped=SKIP_SLASH_COMMAND)
        now = self._clock.now()
        cutoff = now - SESSION_WINDOW
        if request.resumed:
            last = self._recalls.session_recalled_at(principal.id, session_id)
            if last is not None and last >= cutoff:
                return RecallResult(sent, None, [], None, skipped=SKIP_RESUMED_SESSION)
        query = next(
            (text for text in (request.task, request.message, run.task_key) if has_content(text)),
            None,
        )
        if query is None:
            raise InvalidRequest(
                "Send task or message (or X-Pinework-Task): run-start recall scores facts "
                "against it."
            )
        claim = SessionClaim(principal.id, session_id, request.resumed, cutoff)
        run = RunContext(run_id=run.run_id, task_key=run.task_key, session_id=session_id)
        try:
            return self._recall(
                principal, principal.id, query, run, kind="start", session=claim, only=only
            )
        except SessionAlreadyRecalled:
            return RecallResult(query, None, [], None, skipped=SKIP_RESUMED_SESSION)

    def log(
        self, principal: Principal, agent_id: str | None, limit: int, after_id: str | None
    ) -> tuple[list[RecallLogEntry], str | None]:
        """Read an agent's recall log (injection log), newest first.

        Raises:
            MemoryNotOwn, MemoryAgentRequired, InvalidRequest: see ``resolve_agent``.
        """
        agent = resolve_agent(self._directory, principal, agent_id)
        return self._recalls.list_log(agent, limit, after_id)

    def log_entry(
        self, principal: Principal, agent_id: str | None, recall_id: str
    ) -> RecallLogEntry:
        """One entry of an agent's recall log (docs/reference.md#what-a-run-saw).

        Raises:
            RecallNotFound: no such entry in the agent's log, or past its retention.
            MemoryNotOwn, MemoryAgentRequired, InvalidRequest: see ``resolve_agent``.
        """
        agent = resolve_agent(self._directory, principal, agent_id)
        entry = self._recalls.log_entry(agent, recall_id)
        if entry is None:
            raise RecallNotFound(
                f"{recall_id} is not in the recall log of {agent}: it names another "
                "agent's recall, or the log no longer keeps it (docs/reference.md#retention)."
            )
        return entry

    def log_total(
        self, principal: Principal, agent_id: str | None, after_id: str | None, cap: int
    ) -> ListTotal:
        """How many entries the agent's recall log lists and how many are newer than the
        page after ``after_id``; at most ``cap`` read (docs/reference.md#list-totals).

        Raises:
            MemoryNotOwn, MemoryAgentRequired, InvalidRequest: see ``resolve_agent``.
        """
        agent = resolve_agent(self._directory, principal, agent_id)
        return self._recalls.count_log(agent, after_id, cap)

    def _only(
        self,
        agent_id: str,
        all_tags: Sequence[str] | None,
        any_tags: Sequence[str] | None,
        meta: Sequence[str] | None,
    ) -> set[str] | None:
        """The ids of the agent's active facts a recall's filter keeps (the tag and
        metadata indexes, by key), or None when it names nothing (every fact ranks).

        Raises:
            MemoryTagInvalid: see ``tags.tag_filter``.
            MetadataFilterInvalid: see ``metadata_filter.meta_filter``.
        """
        tags = tag_filter(all_tags or (), any_tags or ())
        conditions = meta_filter(meta or ())
        if tags.is_empty and not conditions:
            return None
        return self._memories.tagged_fact_ids(agent_id, tags.all_of, tags.any_of, conditions)

    def _recall(
        self,
        principal: Principal,
        agent_id: str,
        query: str,
        run: RunContext,
        *,
        kind: str,
        session: SessionClaim | None,
        count: bool = True,
        only: set[str] | None = None,
    ) -> RecallResult:
        now = self._clock.now()
        entries = self._index.entries(agent_id, now)
        if entries is not None and only is not None:
            # A tag or metadata filter: only the matching facts are ranked, before the cut.
            entries = [entry for entry in entries if entry.memory_id in only]
        candidates: Sequence[Candidate] | None = None
        if entries is None:
            # An agent from before the index that the backfill has not reached: its
            # facts themselves, as every recall read them before.
            facts = [
                fact
                for fact in self._memories.live_facts(agent_id, recall_counts=False)
                if not fact.is_expired(now) and (only is None or fact.id in only)
            ]
        else:
            facts = [_entry_memory(principal.workspace_id, agent_id, entry) for entry in entries]
            candidates = self._index_candidates(agent_id, entries)
        scoring = self._kept(self.score(query, facts, now, candidates))
        fallback = scoring.fallback
        picked = self._verified(self.within_budget(scoring.ranked), now)
        learned = self.pick_learnings(principal.workspace_id, query, now)
        wiki = self.pick_sections(principal.workspace_id, query, now)
        # Counters are read only for the memories returned (after the cut), before
        # this recall counts them: scoring needs none of them.
        counted = self._memories.with_recall_counts([item.memory for item in picked])
        picked = [
            ScoredMemory(memory, item.score) for memory, item in zip(counted, picked, strict=True)
        ]
        if not count:
            # A preview (docs/reference.md#recall-preview): no log entry, no counters.
            block = self.render_block(agent_id, picked, now, learned, wiki=wiki)
            return RecallResult(
                query, fallback, picked, block, learnings=learned, scoring=scoring, wiki=wiki
            )
        entry = RecallLogEntry(
            id=self._ids.new("rcl"),
            workspace_id=principal.workspace_id,
            agent_id=agent_id,
            kind="start" if kind == "start" else "on_demand",
            session_id=run.session_id,
            run_id=run.run_id,
            task_key=run.task_key,
            query=query,
            fallback=fallback,
            at=now,
            memories=[RecalledMemory(memory_id=i.memory.id, score=i.score) for i in picked],
            learnings=[RecalledLearning(learning_id=i.learning.id, score=i.score) for i in learned],
            sections=[
                RecalledSection(
                    page_id=i.section.page_id,
                    index=i.section.index,
                    anchor=i.section.anchor,
                    score=i.score,
                )
                for i in wiki.sections
            ],
            wiki_failed=wiki.failed,
        )
        self._recalls.commit_recall([i.memory.id for i in picked], entry, now, session)
        picked = [
            ScoredMemory(
                item.memory.model_copy(
                    update={"recall_count": item.memory.recall_count + 1, "last_recalled_at": now}
                ),
                item.score,
            )
            for item in picked
        ]
        block = self.render_block(agent_id, picked, now, learned, wiki=wiki)
        return RecallResult(
            query,
            fallback,
            picked,
            block,
            recall_id=entry.id,
            learnings=learned,
            scoring=scoring,
            wiki=wiki,
        )

    def _index_candidates(self, agent_id: str, entries: Sequence[RecallEntry]) -> PartialCandidates:
        """The scorer's candidates from index entries: each with its sentence stand-in,
        the full embeddings of those with word pieces fetched when the scorer's second
        stage asks (``PartialCandidates``), by id (one BatchGetItem per 100)."""
        stand_ins = [sentence_stand_in(entry.sentence, entry.embedding_size) for entry in entries]
        partial = [
            position
            for position, (entry, stand_in) in enumerate(zip(entries, stand_ins, strict=True))
            if stand_in is not None and entry.embedding_size > len(stand_in)
        ]

        def fetch(positions: Sequence[int]) -> dict[int, bytes | None]:
            stored = self._memories.stored_embeddings([entries[p].memory_id for p in positions])
            return {p: stored.get(entries[p].memory_id) for p in positions}

        return PartialCandidates(
            (
                Candidate(entry.text, entry.created_at, stand_in)
                for entry, stand_in in zip(entries, stand_ins, strict=True)
            ),
            partial,
            fetch,
        )

    def _verified(self, picked: Sequence[ScoredMemory], now: datetime) -> list[ScoredMemory]:
        """``picked`` as their memory items say now (one strongly consistent read): only
        those still an active, unexpired fact of the same text, so a recall never
        returns a fact archived or vetoed after the index was read
        (docs/issues.md#issue-23-item-1)."""
        current = {
            memory.id: memory for memory in self._memories.get_many([i.memory.id for i in picked])
        }
        kept = []
        for item in picked:
            memory = current.get(item.memory.id)
            if (
                memory is not None
                and memory.kind is MemoryKind.FACT
                and memory.status is MemoryStatus.ACTIVE
                and not memory.is_expired(now)
                and memory.text == item.memory.text
            ):
                kept.append(ScoredMemory(memory, item.score))
        return kept

    def kept_scoring(self, query: str, facts: list[Memory], now: datetime) -> Scoring:
        """``score`` then the cut (``_kept``): what a recall ranks before the budgets, for
        facts a caller supplies (the as-of preview, docs/reference.md#as-of-a-moment)."""
        return self._kept(self.score(query, facts, now))

    @staticmethod
    def _kept(scoring: Scoring) -> Scoring:
        """Only the facts of ``scoring`` scoring >= 0.5, at most ``MAX_KEPT`` of them
        whatever the scorer (ties at the boundary: the newer first, as ``score`` orders
        them); on a fallback the newest facts, unscored, for the budgets to cut
        (docs/reference.md#8-recall)."""
        if scoring.fallback is not None:
            return scoring
        kept = [item for item in scoring.ranked if (item.score or 0.0) >= SCORE_CUTOFF]
        return replace(scoring, ranked=kept[:MAX_KEPT])

    def score_all(
        self,
        query: str,
        facts: list[Memory],
        now: datetime,
        candidates: Sequence[Candidate] | None = None,
    ) -> tuple[list[ScoredMemory], str | None]:
        """``score``'s facts and fallback (the recall preview's view)."""
        scoring = self.score(query, facts, now, candidates)
        return scoring.ranked, scoring.fallback

    def score(
        self,
        query: str,
        facts: list[Memory],
        now: datetime,
        candidates: Sequence[Candidate] | None = None,
    ) -> Scoring:
        """Score every fact against ``query``, best first (ties: newer first), or, when
        the scorer fails or its deadline passes, the facts newest first unscored with
        ``fallback: "newest"`` (docs/reference.md#8-recall). Nothing is counted or logged.

        A score is rounded to 4 decimals after the cut is applied: a fact the scorer put
        just below 0.5 (``cut.capped``'s ties) shows as 0.4999, never as 0.5.

        Args:
            facts: live, unexpired facts, newest first (``live_facts`` order).
            candidates: what the scorer reads of ``facts``, one each in the same order
                (default: their text, creation time and stored embedding).
        """
        newest = [ScoredMemory(fact, None) for fact in facts]  # live_facts is newest first
        if not facts or not has_content(query):
            return Scoring([])
        if candidates is None:
            candidates = [Candidate(fact.text, fact.created_at, fact.embedding) for fact in facts]
        with scoring(self._budget_seconds) as run:
            try:
                scores = self._scorer.score(query, candidates, now)
            except DeadlinePassed as passed:
                logger.warning(
                    "recall scorer stopped at its %.3fs budget before %s; newest facts instead",
                    self._budget_seconds,
                    passed.stage,
                )
                return self._fallback(newest, run, passed.stage)
            except Exception:
                logger.exception("recall scorer failed; newest facts instead")
                return self._fallback(newest, run, None)
        if len(scores) != len(facts):
            logger.error("recall scorer returned %d scores for %d facts", len(scores), len(facts))
            return self._fallback(newest, run, None)
        scores = keyed_scores(query, [fact.text for fact in facts], scores)
        scored = [
            ScoredMemory(fact, _shown(float(score)))
            for fact, score in zip(facts, scores, strict=True)
        ]
        # Best first; among equal scores the newer fact (larger ULID) first.
        scored.sort(key=lambda item: item.memory.id, reverse=True)
        scored.sort(key=lambda item: item.score or 0.0, reverse=True)
        return Scoring(scored, None, run.reranker, None, self._spent(run))

    def _fallback(self, newest: list[ScoredMemory], run: ScoringRun, stage: str | None) -> Scoring:
        """The newest facts unscored, and how far the scorer got."""
        return Scoring(newest, FALLBACK_NEWEST, run.reranker, stage, self._spent(run))

    def _spent(self, run: ScoringRun) -> float:
        """Wall seconds since ``run`` started."""
        return round(self._budget_seconds - run.left(), 4)

    def warm_up(self) -> None:
        """Load what the scorer loads on first use (the embedder, the reranker's weights)
        by scoring one made-up fact: a server calls it as it starts, so that its first
        recall does not spend its time budget on loading. Stores nothing; a failure is
        logged, not raised (the first recall then loads, or falls back, as usual)."""
        now = self._clock.now()
        try:
            self._scorer.score("warm up", [Candidate("warm up", now)], now)
        except Exception:
            logger.exception("recall warm-up failed; the first recall loads the scorer")

    def within_budget(self, ranked: Sequence[ScoredMemory]) -> list[ScoredMemory]:
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

    def _check_query(self, query: str, name: str = "query") -> None:
        """A recall text that may be scored and logged: at most 4,000 characters
        (``InvalidRequest``), not a credential (``SecretInMemory``)."""
        _check_length(query, name)
        check_no_secret(query, what=name, secrets=self._secrets)

    def check_query(self, query: str, name: str = "query") -> None:
        """Refuse a recall text as a recall would (docs/reference.md#5-limits,
        docs/reference.md#8-recall): over 4,000 characters (``InvalidRequest``), or a credential
        (``SecretInMemory``); the recall preview checks its task with it."""
        self._check_query(query, name)

    def pick_learnings(self, workspace_id: str, query: str, now: datetime) -> list[ScoredLearning]:
        """The workspace's active learnings for ``query`` (docs/reference.md#learnings-in-recall):
        scored like facts with the same 0.5 cut, best first, or newest first unscored
        when scoring fails; then at most ``MAX_RECALLED_LEARNINGS`` lines and
        ``MAX_LEARNING_TOKENS`` tokens. Nothing is counted."""
        if self._learnings is None or not has_content(query):
            return []
        active = self._learnings(workspace_id)
        if not active:
            return []
        newest = [ScoredLearning(learning, None) for learning in active]
        scores = self._shared_scores(
            query,
            [Candidate(item.text, item.proposed_at, item.embedding) for item in active],
            now,
            "learnings",
        )
        if scores is None:
            ranked = newest
        else:
            scored = [
                ScoredLearning(learning, score)
                for learning, score in zip(active, scores, strict=True)
            ]
            scored.sort(key=lambda item: item.learning.id, reverse=True)
            scored.sort(key=lambda item: item.score or 0.0, reverse=True)
            ranked = [item for item in scored if (item.score or 0.0) >= SCORE_CUTOFF]
        picked: list[ScoredLearning] = []
        used = 0
        for item in ranked:
            if len(picked) == MAX_RECALLED_LEARNINGS:
                break
            cost = self._tokens.count(item.learning.line())
            if used + cost > MAX_LEARNING_TOKENS:
                continue
            picked.append(item)
            used += cost
        return picked

    def _shared_scores(
        self, query: str, candidates: Sequence[Candidate], now: datetime, what: str
    ) -> list[float] | None:
        """The scorer's scores of a workspace's shared candidates (learnings, wiki
        sections) for ``query``, as ``score`` shows a fact's (identifier queries' rule,
        4 decimals), under the recall's time budget; None when it failed, ran out of
        time or answered the wrong number of scores (logged)."""
        try:
            with scoring(self._budget_seconds):
                raw = self._scorer.score(query, candidates, now)
        except DeadlinePassed:
            logger.warning("%s scorer stopped at its %.3fs budget", what, self._budget_seconds)
            return None
        except Exception:
            logger.exception("%s scorer failed", what)
            return None
        if len(raw) != len(candidates):
            logger.error("%s scorer returned %d scores for %d", what, len(raw), len(candidates))
            return None
        keyed = keyed_scores(query, [candidate.text for candidate in candidates], raw)
        return [_shown(float(score)) for score in keyed]

    def pick_sections(self, workspace_id: str, query: str, now: datetime) -> WikiPick:
        """The workspace's wiki sections for ``query`` (docs/reference.md#wiki-in-recall):
        the first stage's shortlist of its indexed sections (``SectionIndexer.candidates``:
        at most ``SHORTLIST_SECTIONS``, nearest by stored sentence vector) scored like a
        fact (its heading path and text, its stored embedding) with the same 0.5 cut and
        ``MAX_KEPT``, best first (ties: page id and position); then, of those whose page
        is published at the section's version now (one read by key a page looked at), at
        most ``MAX_RECALLED_SECTIONS`` and ``MAX_SECTION_TOKENS`` tokens of their block
        lines. When scoring fails, none (``failed``): a page is never shown unscored.
        Nothing is counted."""
        if self._wiki is None or not has_content(query):
            return WikiPick()
        indexed, considered = self._wiki.candidates(workspace_id, query)
        if not considered:
            return WikiPick()
        candidates = [Candidate(item.scored_text, now, item.embedding) for item in indexed]
        scores = self._shared_scores(query, candidates, now, "wiki sections")
        if scores is None:
            return WikiPick(indexed=True, failed=True, considered=considered)
        ranked = sorted(
            (
                ScoredSection(section, score)
                for section, score in zip(indexed, scores, strict=True)
                if score >= SCORE_CUTOFF
            ),
            key=lambda item: (-item.score, item.section.page_id, item.section.index),
        )[:MAX_KEPT]
        versions: dict[str, int | None] = {}
        picked: list[ScoredSection] = []
        used = 0
        for item in ranked:
            if len(picked) == MAX_RECALLED_SECTIONS:
                break
            page_id = item.section.page_id
            if page_id not in versions:
                versions[page_id] = self._wiki.published_version(workspace_id, page_id)
            if versions[page_id] != item.section.version:
                continue  # archived or changed since it was indexed
            cost = self._tokens.count("\n".join(section_lines(item.section)))
            if used + cost > MAX_SECTION_TOKENS:
                continue
            picked.append(item)
            used += cost
        return WikiPick(picked, indexed=True, considered=considered)

    def render_block(
        self,
        agent_id: str,
        picked: Sequence[ScoredMemory],
        now: datetime,
        learnings: Sequence[ScoredLearning] = (),
        day_rows: Callable[[str], Memory | None] | None = None,
        wiki: WikiPick | None = None,
    ) -> str:
        """The ``--- WIKI ---`` part when the workspace has indexed sections (``wiki``):
        the ``--- LEARNINGS ---`` block of ``learnings`` (when there are any; it is the
        block's first part when the workspace has no published page), then the wiki's
        sections, two lines each, or the one line saying they could not be scored; then
        the ``--- MEMORY ---`` block of ``picked`` and the agent's day log of today and
        yesterday (docs/reference.md#8-recall, docs/reference.md#learnings-in-recall,
        docs/reference.md#wiki-in-recall).

        ``day_rows``: the live day row of a date (``YYYY-MM-DD``) or None; default: the
        stored ones (an as-of preview passes the rows as they were,
        docs/reference.md#as-of-a-moment)."""
        lines: list[str] = []
        in_wiki = wiki is not None and (wiki.indexed or wiki.failed)
        if in_wiki:
            lines.append(WIKI_HEADER)
        if learnings:
            lines += [LEARNINGS_HEADER, *(item.learning.line() for item in learnings)]
            lines.append(LEARNINGS_FOOTER)
        if wiki is not None and in_wiki:
            for item in wiki.sections:
                lines += section_lines(item.section)
            if wiki.failed:
                lines.append(WIKI_NOT_SCORED)
        lines += [BLOCK_HEADER, *(memory_line(item.memory) for item in picked)]
        day_lines = self._day_log_lines(now, day_rows or self._live_day_row(agent_id))
        if day_lines:
            lines += [DAY_LOG_HEADER, *day_lines]
        lines.append(BLOCK_FOOTER)
        return "\n".join(lines)

    def _live_day_row(self, agent_id: str) -> Callable[[str], Memory | None]:
        def row(date: str) -> Memory | None:
            row_id = self._memories.live_day_row_id(agent_id, date)
            return None if row_id is None else self._memories.get(row_id)

        return row

    def _day_log_lines(self, now: datetime, day_rows: Callable[[str], Memory | None]) -> list[str]:
        """Today's and yesterday's lines, newest first, trimmed oldest-first to 2,000 tokens."""
        newest_first: list[str] = []
        today = now.astimezone(UTC).date()
        for day in (today, today - timedelta(days=1)):
            row = day_rows(day.isoformat())
            if row is None or row.status is not MemoryStatus.ACTIVE:
                continue
            newest_first += [
                f"{day.isoformat()} {block_text(line)}" for line in reversed(row.text.split("\n"))
            ]
        kept: list[str] = []
        used = 0
        for line in newest_first:
            cost = self._tokens.count(line)
            if used + cost > MAX_DAY_LOG_TOKENS:
                break
            kept.append(line)
            used += cost
        return kept


def _entry_memory(workspace_id: str, agent_id: str, entry: RecallEntry) -> Memory:
    """A stand-in memory of an index entry for ranking and budgets (id, text, times);
    the memories a recall returns are read in full (``RecallService._verified``).
    Built without validation (``model_construct``): the entry's fields are typed already,
    and a recall builds one per live fact."""
    return Memory.model_construct(
        id=entry.memory_id,
        workspace_id=workspace_id,
        agent_id=agent_id,
        kind=MemoryKind.FACT,
        text=entry.text,
        expires_at=entry.expires_at,
        created_at=entry.created_at,
        updated_at=entry.created_at,
        status=MemoryStatus.ACTIVE,
        recall_count=0,
        version=entry.version,
    )


def _shown(score: float) -> float:
    """A score as recall shows it: 4 decimals, rounded down below ``SCORE_CUTOFF`` so that
    rounding never lifts a fact the scorer left out (0.49996) to the cut."""
    shown = round(score, 4)
    if score < SCORE_CUTOFF <= shown:
        return SCORE_CUTOFF - 0.0001
    return shown


def _check_length(query: str, name: str) -> None:
    """Refuse a recall text over ``RECALL_QUERY_MAX_CHARS`` (``InvalidRequest``)."""
    if len(query) > RECALL_QUERY_MAX_CHARS:
        raise InvalidRequest(
            f"The {name} has {len(query)} characters; the limit is {RECALL_QUERY_MAX_CHARS}."
        )
