"""Judgement for the daily review (SPEC §9): the ``Reviewer`` Protocol and the
deterministic default, ``RuleReviewer``, which needs no network.

Rules of ``RuleReviewer`` (each action names the rule in its reason):

1. **Duplicates**: live facts with the same normalized text, or whose content
   words overlap by Jaccard >= 0.8 with the same polarity, are merged into one:
   the most recalled, then the newest, is kept; the others are superseded by it.
2. **Expired** (``expiresAt`` passed): recalled in the last 30 days → renewed to
   its old expiry + 90 days (or now + 90 days when that is still past); else,
   if a newer live fact covers it (>= 60 % of its content words) → replaced
   (superseded) by that fact; else archived with reason ``expired``.
3. **Conflicts**: two live facts with the same content words (Jaccard >= 0.8)
   but opposite polarity (one says "not"/"never"/"no") → the one its source
   run's evidence supports is kept; the other is superseded. An ``evidence``
   excerpt (of either fact of the pair) supports a fact when it holds >= 50 %
   of the fact's content words with the fact's polarity, so evidence saved with
   one fact but saying the opposite supports the other. Most supported wins;
   then the one saved by an agent's run (run id and agent); then the newer.
4. **Stale**: a live fact not recalled in 30 days and older than 30 days is
   archived (``stale: …``) when a newer live fact covers it.
5. **Lift**: a line of the reviewed day's log that the agent marked durable
   (``!fact <text>`` or ``[durable] <text>`` as the line's start) becomes a fact,
   superseding the live fact it updates (same subject, Jaccard >= 0.5). A text
   that equals or nearly equals (>= 0.8) any existing fact, live or archived —
   above all one a person vetoed — is never lifted.

A memory takes part in at most one action.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Protocol

from chalicelib.ids import to_rfc3339
from chalicelib.models.memory import VETOED, Memory, MemoryStatus
from chalicelib.models.review import ReviewAction

RECENT_RECALL = timedelta(days=30)
STALE_AGE = timedelta(days=30)
RENEWAL = timedelta(days=90)
DUPLICATE_SIMILARITY = 0.8
COVER_SHARE = 0.6
EVIDENCE_SHARE = 0.5
"""Share of a fact's content words its ``evidence`` must hold to support it."""
UPDATE_SIMILARITY = 0.5
DURABLE_MARKERS = ("!fact ", "[durable] ")
"""Line prefixes (case-insensitive) by which an agent marks a day-log line durable."""

_EVIDENCE_EXCERPT = 300
"""Characters of a fact's evidence quoted in a plan (the full text is in its history)."""
_NEGATIONS = frozenset({"not", "no", "never", "none", "cannot", "without", "nobody", "nothing"})
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "and",
        "or",
        "it",
        "its",
        "this",
        "that",
        "with",
        "by",
        "as",
        "from",
        "we",
        "our",
        "you",
        "your",
        "they",
        "their",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "should",
        "can",
        "could",
    ]
)
_DAY_LINE = re.compile(r"^(\d{2}:\d{2}) (?:\[([^\]]+)\] )?(.*)$")


@dataclass(frozen=True)
class ReviewContext:
    """What a reviewer sees of one agent.

    Attributes:
        agent_id: the agent.
        date: the reviewed UTC date (yesterday of the run), ``YYYY-MM-DD``.
        now: the review's time.
        facts: every fact of the agent, live and archived, newest first.
        day_lines: the stored lines of the reviewed date's day log.
    """

    agent_id: str
    date: str
    now: datetime
    facts: Sequence[Memory]
    day_lines: Sequence[str] = field(default_factory=tuple)

    @property
    def live(self) -> list[Memory]:
        """The active facts, newest first."""
        return [fact for fact in self.facts if fact.status is MemoryStatus.ACTIVE]


@dataclass(frozen=True)
class Proposal:
    """A reviewer's answer: the actions (ids assigned later) and notes for the report.

    ``judged_by`` names who made the plan when it is not the reviewer itself (the
    Bedrock reviewer's fallback to the rules); the report's ``reviewer`` shows it.
    """

    actions: list[ReviewAction]
    notes: list[str]
    judged_by: str | None = None


class Reviewer(Protocol):
    """Pluggable judgement of the review (SPEC §9, STYLE.md rule 7)."""

    name: str

    def propose(self, context: ReviewContext) -> Proposal:
        """Propose actions for one agent; the service checks and applies them."""
        ...


@lru_cache(maxsize=65536)
def normalize(text: str) -> str:
    """NFKC, case-folded, ``n't`` → `` not``, punctuation dropped, spaces collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("n't", " not")
    return " ".join(re.findall(r"\w+", folded))


@lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """Normalized words without stop words and negations (the fact's subject)."""
    return frozenset(w for w in normalize(text).split() if w not in _STOP and w not in _NEGATIONS)


@lru_cache(maxsize=65536)
def negated(text: str) -> bool:
    """True when the text says "not", "no", "never", … (its polarity)."""
    return any(word in _NEGATIONS for word in normalize(text).split())


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    """|A ∩ B| / |A ∪ B| (0 when both are empty)."""
    union = left | right
    return len(left & right) / len(union) if union else 0.0


def covers(newer: Memory, older: Memory) -> bool:
    """True when ``newer`` was created later and holds >= 60 % of ``older``'s words
    with the same polarity."""
    old_words = content_words(older.text)
    if newer.created_at <= older.created_at or not old_words:
        return False
    if negated(newer.text) != negated(older.text):
        return False
    return len(old_words & content_words(newer.text)) / len(old_words) >= COVER_SHARE


def durable_text(line: str) -> tuple[str, str | None] | None:
    """The fact a stored day line (``HH:MM [TASK] line``) marks durable, and the
    line's task key; None when the line carries no marker."""
    match = _DAY_LINE.match(line)
    if match is None:
        return _strip_marker(line, None)
    after_time = line[len(match.group(1)) + 1 :]
    # "[durable] x" with no task reads like a task key: try the marker first.
    return _strip_marker(after_time, None) or _strip_marker(match.group(3), match.group(2))


def day_line_body(line: str) -> str:
    """The line an agent wrote, without the stored ``HH:MM [TASK] `` prefix (SPEC §2)."""
    match = _DAY_LINE.match(line)
    return line if match is None else match.group(3)


def twin_of(text: str, facts: Iterable[Memory]) -> Memory | None:
    """The first fact, live or archived, that says ``text`` again (same normalized
    text, or content words overlapping by Jaccard >= 0.8); such a text is never
    lifted, above all when a person vetoed the twin (SPEC §9 step 3)."""
    normalized, words = normalize(text), content_words(text)
    return next(
        (
            fact
            for fact in facts
            if normalize(fact.text) == normalized
            or jaccard(content_words(fact.text), words) >= DUPLICATE_SIMILARITY
        ),
        None,
    )


def _strip_marker(body: str, task: str | None) -> tuple[str, str | None] | None:
    for marker in DURABLE_MARKERS:
        if body.lower().startswith(marker):
            text = body[len(marker) :].strip()
            return (text, task) if text else None
    return None


def _versions(memories: Iterable[Memory]) -> dict[str, int]:
    return {memory.id: memory.version for memory in memories}


class _WordIndex:
    """The live facts by content word, so each rule compares a fact only with the
    facts sharing a word with it, not with all of them (every rule needs shared
    words: Jaccard >= 0.5, covering >= 60 %). Same answers as comparing all
    pairs, in the same order; O(n · facts per word) instead of O(n²)."""

    def __init__(self, live: Sequence[Memory]) -> None:
        self.live = list(live)
        self._position = {fact.id: number for number, fact in enumerate(self.live)}
        self._by_word: dict[str, list[int]] = {}
        for number, fact in enumerate(self.live):
            for word in content_words(fact.text):
                self._by_word.setdefault(word, []).append(number)

    def sharing(self, words: frozenset[str], after: str | None = None) -> list[Memory]:
        """The live facts (in ``live`` order) holding any of ``words``; only those
        after the fact ``after`` when given."""
        start = -1 if after is None else self._position[after]
        found = {n for word in words for n in self._by_word.get(word, ()) if n > start}
        return [self.live[n] for n in sorted(found)]


class RuleReviewer:
    """The deterministic default reviewer (see the module docstring for its rules)."""

    name = "rules-v1"

    def propose(self, context: ReviewContext) -> Proposal:
        """Apply the rules in order; a memory is used by at most one action."""
        used: set[str] = set()
        actions: list[ReviewAction] = []
        notes: list[str] = []
        live = _WordIndex(context.live)
        actions += self._duplicates(live.live, used)
        actions += self._expired(context, live, used)
        actions += self._conflicts(context, live, used)
        actions += self._stale(context, live, used)
        lifted, lift_notes = self._lifts(context, live.live, used)
        return Proposal(actions + lifted, notes + lift_notes)

    def _duplicates(self, live: list[Memory], used: set[str]) -> list[ReviewAction]:
        groups: list[list[Memory]] = []
        by_text: dict[str, int] = {}
        by_word: dict[str, list[int]] = {}
        for fact in live:
            words, polarity, text = (
                content_words(fact.text),
                negated(fact.text),
                normalize(fact.text),
            )
            # The first group (in order) whose first fact says the same thing.
            candidates = {n for word in words for n in by_word.get(word, ())}
            if text in by_text:
                candidates.add(by_text[text])
            for number in sorted(candidates):
                first = groups[number][0]
                same = normalize(first.text) == text
                similar = (
                    negated(first.text) == polarity
                    and jaccard(content_words(first.text), words) >= DUPLICATE_SIMILARITY
                )
                if same or similar:
                    groups[number].append(fact)
                    break
            else:
                by_text.setdefault(text, len(groups))
                for word in words:
                    by_word.setdefault(word, []).append(len(groups))
                groups.append([fact])
        actions = []
        for group in groups:
            if len(group) < 2:
                continue
            keep = max(group, key=lambda m: (m.recall_count, m.id))
            others = [m for m in group if m.id != keep.id]
            used.update(m.id for m in group)
            actions.append(
                ReviewAction(
                    id="",
                    action="merge",
                    memory_ids=[m.id for m in others],
                    keep_id=keep.id,
                    reason=(
                        f"{len(group)} live facts say the same thing; keeping {keep.id} "
                        "(most recalled, then newest) and superseding the others"
                    ),
                    evidence=[f"{m.id} (recalled {m.recall_count}x): {m.text}" for m in group],
                    expected_versions=_versions(group),
                )
            )
        return actions

    def _expired(
        self, context: ReviewContext, live: _WordIndex, used: set[str]
    ) -> list[ReviewAction]:
        now = context.now
        actions = []
        for fact in live.live:
            if fact.id in used or not fact.is_expired(now):
                continue
            recalled = fact.last_recalled_at is not None and (
                fact.last_recalled_at >= now - RECENT_RECALL
            )
            seen = f"expired {to_rfc3339(fact.expires_at)}"
            last = "never" if fact.last_recalled_at is None else to_rfc3339(fact.last_recalled_at)
            evidence = [f"{fact.id}: {fact.text}", seen, f"last recalled: {last}"]
            used.add(fact.id)
            if recalled:
                renewed = fact.expires_at + RENEWAL
                if renewed <= now:
                    renewed = now + RENEWAL
                actions.append(
                    ReviewAction(
                        id="",
                        action="renew",
                        memory_ids=[fact.id],
                        expires_at=renewed,
                        reason="expired but recalled in the last 30 days: renewed for 90 days",
                        evidence=evidence,
                        expected_versions=_versions([fact]),
                    )
                )
                continue
            newer = next(
                (
                    n
                    for n in live.sharing(content_words(fact.text))
                    if n.id not in used and not n.is_expired(now) and covers(n, fact)
                ),
                None,
            )
            if newer is not None:
                actions.append(
                    ReviewAction(
                        id="",
                        action="replace",
                        memory_ids=[fact.id],
                        keep_id=newer.id,
                        reason=f"expired and not recalled lately; the newer {newer.id} covers it",
                        evidence=[*evidence, f"{newer.id}: {newer.text}"],
                        expected_versions=_versions([fact, newer]),
                    )
                )
                continue
            actions.append(
                ReviewAction(
                    id="",
                    action="archive",
                    memory_ids=[fact.id],
                    reason="expired",
                    evidence=evidence,
                    expected_versions=_versions([fact]),
                )
            )
        return actions

    def _conflicts(
        self, context: ReviewContext, live: _WordIndex, used: set[str]
    ) -> list[ReviewAction]:
        actions = []
        now = context.now
        for first in live.live:
            if first.id in used or first.is_expired(now):
                continue
            for second in live.sharing(content_words(first.text), after=first.id):
                if second.is_expired(now):
                    continue
                if first.id in used or second.id in used:
                    continue
                if negated(first.text) == negated(second.text):
                    continue
                if jaccard(content_words(first.text), content_words(second.text)) < 0.8:
                    continue
                pair = (first, second)
                keep, drop = sorted(pair, key=lambda m: _support(m, pair), reverse=True)
                used.update((first.id, second.id))
                actions.append(
                    ReviewAction(
                        id="",
                        action="resolve_conflict",
                        memory_ids=[drop.id],
                        keep_id=keep.id,
                        reason=(
                            f"{keep.id} and {drop.id} contradict each other; keeping "
                            f"{keep.id}: {_support_reason(keep, drop)}"
                        ),
                        evidence=[_provenance(keep), _provenance(drop)],
                        expected_versions=_versions([keep, drop]),
                    )
                )
        return actions

    def _stale(
        self, context: ReviewContext, live: _WordIndex, used: set[str]
    ) -> list[ReviewAction]:
        now = context.now
        actions = []
        for fact in live.live:
            if fact.id in used or fact.created_at > now - STALE_AGE:
                continue
            if fact.last_recalled_at is not None and fact.last_recalled_at >= now - RECENT_RECALL:
                continue
            newer = next(
                (
                    n
                    for n in live.sharing(content_words(fact.text))
                    if n.id != fact.id and not n.is_expired(now) and covers(n, fact)
                ),
                None,
            )
            if newer is None:
                continue
            used.add(fact.id)
            actions.append(
                ReviewAction(
                    id="",
                    action="archive",
                    memory_ids=[fact.id],
                    reason=f"stale: not recalled in 30 days and covered by the newer {newer.id}",
                    evidence=[f"{fact.id}: {fact.text}", f"{newer.id}: {newer.text}"],
                    expected_versions=_versions([fact]),
                )
            )
        return actions

    def _lifts(
        self, context: ReviewContext, live: list[Memory], used: set[str]
    ) -> tuple[list[ReviewAction], list[str]]:
        actions: list[ReviewAction] = []
        notes: list[str] = []
        known = list(context.facts)
        lifted_texts: set[str] = set()
        for line in context.day_lines:
            found = durable_text(line)
            if found is None:
                continue
            text, _task = found
            normalized, words = normalize(text), content_words(text)
            if normalized in lifted_texts:
                continue
            twin = twin_of(text, known)
            if twin is not None:
                why = "a person vetoed" if twin.archive_reason == VETOED else "already a fact"
                notes.append(f"not lifted ({why}: {twin.id}): {line}")
                continue
            lifted_texts.add(normalized)
            updated = next(
                (
                    f
                    for f in live
                    if f.id not in used
                    and negated(f.text) == negated(text)
                    and jaccard(content_words(f.text), words) >= UPDATE_SIMILARITY
                ),
                None,
            )
            if updated is not None:
                used.add(updated.id)
            actions.append(
                ReviewAction(
                    id="",
                    action="lift",
                    memory_ids=[] if updated is None else [updated.id],
                    text=text,
                    supersedes=None if updated is None else updated.id,
                    reason=(
                        f"marked durable in the day log of {context.date}"
                        + ("" if updated is None else f"; it updates {updated.id}")
                    ),
                    evidence=[line]
                    + ([] if updated is None else [f"{updated.id}: {updated.text}"]),
                    expected_versions={} if updated is None else _versions([updated]),
                )
            )
        return actions, notes


def evidence_supports(evidence: str | None, fact: Memory) -> bool:
    """True when an evidence excerpt supports ``fact`` (SPEC §9 step 5): it holds
    >= 50 % of the fact's content words and has the fact's polarity."""
    words = content_words(fact.text)
    if not evidence or not words:
        return False
    held = len(words & content_words(evidence)) / len(words)
    return held >= EVIDENCE_SHARE and negated(evidence) == negated(fact.text)


def _support(fact: Memory, pair: tuple[Memory, Memory]) -> tuple[int, int, str]:
    """Rank in a conflict: evidence of the pair that supports it, run provenance, newest."""
    backed = sum(evidence_supports(member.evidence, fact) for member in pair)
    from_run = 1 if fact.run_id and fact.saved_by_agent_id else 0
    return (backed, from_run, fact.id)


def _support_reason(keep: Memory, drop: Memory) -> str:
    pair = (keep, drop)
    kept, dropped = _support(keep, pair), _support(drop, pair)
    if kept[0] > dropped[0]:
        sources = [m.id for m in pair if evidence_supports(m.evidence, keep)]
        return (
            f"the saved evidence of {', '.join(sources)} supports it "
            "(it holds the fact's key terms with the same polarity)"
        )
    if kept[1] > dropped[1]:
        return f"it was saved by run {keep.run_id}, the other has no run evidence"
    return "neither has stronger evidence, so the newer one wins"


def _provenance(memory: Memory) -> str:
    source = f"run {memory.run_id}" if memory.run_id else "no run"
    line = f"{memory.id} ({source}, saved {to_rfc3339(memory.created_at)}): {memory.text}"
    if memory.evidence:
        excerpt = " ".join(memory.evidence.split())
        if len(excerpt) > _EVIDENCE_EXCERPT:
            excerpt = excerpt[: _EVIDENCE_EXCERPT - 1] + "…"
        line += f" | evidence: {excerpt}"
    return line
