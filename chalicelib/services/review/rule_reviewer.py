"""Judgement for the daily review (docs/reference.md#review-steps): the ``Reviewer``
Protocol and its deterministic default, ``RuleReviewer``, which needs no network. Its
rules, each named in the action's reason: merge duplicates (``sameness``), keeping the
best wording (``best_wording``); renew, replace or archive expired facts; then, between
every two groups of duplicates (a lone fact is a group of one), resolve different
details about one subject by evidence or leave them to a person (``conflicts``; facts
about different subjects, ``sameness.different_subjects``, are left alone), so a
duplicate beside one side never hides a contradiction; archive stale facts a newer one
covers; lift lines the agent marked durable. A memory is superseded by at most one
action (a merge's kept fact may also be one side of a conflict) and a merge folds at
most ``MAX_FOLDED`` facts. The rules' thresholds and
measured judgement:
docs/DECISIONS.md#a-review-that-never-destroys-information-issue-14-items-15.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Protocol

from chalicelib.ids import to_rfc3339
from chalicelib.limits import REVIEW_MAX_CONFLICTS
from chalicelib.models.memory import VETOED, Memory, MemoryStatus
from chalicelib.models.review import ReviewAction
from chalicelib.normalized import normalize
from chalicelib.services.review.conflicts import LiveFacts, conflict_action, subject_minimum
from chalicelib.services.review.details import shape
from chalicelib.services.review.meaning import FRAME_VALUES, vocabulary
from chalicelib.services.review.normalize import has_filler
from chalicelib.services.review.sameness import (
    Relation,
    compare,
    duplicate_key,
    is_duplicate,
)
from chalicelib.services.review.vocabulary import NEGATIONS, STOP_WORDS

RECENT_RECALL = timedelta(days=30)
STALE_AGE = timedelta(days=30)
RENEWAL = timedelta(days=90)
MAX_FOLDED = 40
"""Most facts one merge supersedes (its undo fits in one transaction)."""
DURABLE_MARKERS = ("!fact ", "[durable] ")
"""Line prefixes (case-insensitive) by which an agent marks a day-log line durable."""

_DAY_LINE = re.compile(r"^(\d{2}:\d{2}) (?:\[([^\]]+)\] )?(.*)$")


def _bounded_conflicts(
    found: dict[tuple[int, int], Relation], keeper: list[Memory], valued: set[int]
) -> list[ReviewAction]:
    """The conflicts a review proposes from ``found`` (group pairs, in the order found):
    an environment-only pair is left out beside a changed value (``valued``); each group
    in one conflict at most, and at most ``REVIEW_MAX_CONFLICTS`` in all."""
    actions: list[ReviewAction] = []
    taken: set[int] = set()
    for (n, m), relation in found.items():
        if relation.qualifiers_only and {n, m} & valued:
            continue
        if n in taken or m in taken or len(actions) == REVIEW_MAX_CONFLICTS:
            continue
        taken |= {n, m}
        actions.append(conflict_action(keeper[n], keeper[m], relation))
    return actions


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
    """Pluggable judgement of the review (docs/reference.md#9-review,
    docs/conventions.md#rule-7)."""

    name: str

    def propose(self, context: ReviewContext) -> Proposal:
        """Propose actions for one agent; the service checks and applies them."""
        ...


@lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """Normalized words without stop words and negations (what a text talks about)."""
    return frozenset(
        w for w in normalize(text).split() if w not in STOP_WORDS and w not in NEGATIONS
    )


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
    """The line an agent wrote, without the stored ``HH:MM [TASK] `` prefix
    (docs/reference.md#2-concepts)."""
    match = _DAY_LINE.match(line)
    return line if match is None else match.group(3)


def twin_of(text: str, facts: Iterable[Memory]) -> Memory | None:
    """The first fact that already says ``text`` (docs/reference.md#review-step-3): live or archived
    with the same normalized text or a duplicate of it (``sameness``), above all one
    a person vetoed; or a live fact that covers it. Such a text is never lifted."""
    normalized = normalize(text)
    for fact in facts:
        if normalize(fact.text) == normalized or is_duplicate(text, fact.text):
            return fact
        if fact.status is MemoryStatus.ACTIVE and compare(fact.text, text).kind == "covers":
            return fact
    return None


def _strip_marker(body: str, task: str | None) -> tuple[str, str | None] | None:
    for marker in DURABLE_MARKERS:
        if body.lower().startswith(marker):
            text = body[len(marker) :].strip()
            return (text, task) if text else None
    return None


def best_wording(group: Sequence[Memory]) -> Memory:
    """The fact of a group of duplicates whose text a merge keeps
    (docs/issues.md#issue-43-item-3): without a filler ("Note that …"), with the fewest
    words the embedder's vocabulary does not know (a misspelling), the most specific
    (the most distinct values, frame words such as "called" aside), then the most
    recalled, then the newest."""

    def wording(fact: Memory) -> tuple[bool, int, int, int, str]:
        found = shape(fact.text)
        known = vocabulary()
        unknown = sum(
            1
            for token in found.tokens
            if token.kind == "word"
            and token.raw.casefold().isalpha()
            and token.raw.casefold() not in known
        )
        return (
            not has_filler(fact.text),
            -unknown,
            len(set(found.values) - FRAME_VALUES),
            fact.recall_count,
            fact.id,
        )

    return max(group, key=wording)


def _versions(memories: Iterable[Memory]) -> dict[str, int]:
    return {memory.id: memory.version for memory in memories}


class RuleReviewer:
    """The deterministic default reviewer (see the module docstring for its rules)."""

    name = "rules-v2"

    def propose(self, context: ReviewContext) -> Proposal:
        """Apply the rules in order; a memory is used by at most one action."""
        used: set[str] = set()
        live = LiveFacts(context.live)
        groups = self._groups(live)
        actions = self._duplicates(live, groups, used)
        kept = {action.keep_id for action in actions}
        actions += self._expired(context, live, used)
        actions += self._conflicts(context, live, groups, used - kept)
        actions += self._stale(context, live, used)
        lifted, notes = self._lifts(context, live.live, used)
        return Proposal(actions + lifted, notes)

    def _groups(self, live: LiveFacts) -> list[list[Memory]]:
        """The live facts in groups of duplicates (``sameness``), a lone fact a group
        of one, in the order of their first fact."""
        groups: list[list[Memory]] = []
        group_of: dict[str, int] = {}
        by_key: dict[str, list[int]] = {}
        for fact in live.live:
            key = duplicate_key(fact.text)
            # The first group (in order) whose first fact says the same thing: those of
            # the same duplicate key first, then (a typo, a filler, another frame changes
            # the key: docs/issues.md#issue-26-item-1) groups led by a fact sharing at
            # least half of this one's values.
            found = next(
                (
                    g
                    for g in by_key.get(key, [])
                    if live.relation(groups[g][0], fact).kind == "duplicate"
                ),
                None,
            )
            if found is None:
                wanted = max(1, len(set(shape(fact.text).values)) // 2)
                found = next(
                    (
                        group_of[other.id]
                        for other in live.sharing(fact, wanted)
                        if other.id in group_of
                        and groups[group_of[other.id]][0].id == other.id
                        and live.relation(other, fact).kind == "duplicate"
                    ),
                    None,
                )
            if found is None:
                groups.append([fact])
                found = len(groups) - 1
                by_key.setdefault(key, []).append(found)
            else:
                groups[found].append(fact)
            group_of[fact.id] = found
        return groups

    def _duplicates(
        self, live: LiveFacts, groups: list[list[Memory]], used: set[str]
    ) -> list[ReviewAction]:
        actions = []
        for group in groups:
            if len(group) < 2:
                continue
            keep = best_wording(group)
            others = [m for m in group if m.id != keep.id][:MAX_FOLDED]
            folded = [keep, *others]
            used.update(m.id for m in folded)
            why = "; ".join(
                dict.fromkeys(f"{m.id}: {live.relation(keep, m).reason}" for m in others)
            )
            actions.append(
                ReviewAction(
                    id="",
                    action="merge",
                    memory_ids=[m.id for m in others],
                    keep_id=keep.id,
                    reason=(
                        f"{len(folded)} live facts say the same thing ({why}); keeping "
                        f"{keep.id} (the cleanest, most specific wording: no filler, no "
                        "misspelling; then the most recalled, then the newest) and "
                        "superseding the others"
                    ),
                    evidence=[f"{m.id} (recalled {m.recall_count}x): {m.text}" for m in folded],
                    expected_versions=_versions(folded),
                )
            )
        order = {fact.id: number for number, fact in enumerate(live.live)}
        return sorted(actions, key=lambda a: min(order[i] for i in a.expected_versions))

    def _covering(
        self, fact: Memory, live: LiveFacts, now: datetime, used: set[str]
    ) -> Memory | None:
        """A newer live, unexpired fact that says everything ``fact`` says (so it
        shares every one of ``fact``'s values: only those are compared)."""
        values = len(set(shape(fact.text).values))
        return next(
            (
                newer
                for newer in live.sharing(fact, minimum=max(1, values))
                if newer.id not in used
                and newer.created_at > fact.created_at
                and not newer.is_expired(now)
                and live.relation(newer, fact).kind in ("duplicate", "covers")
            ),
            None,
        )

    def _expired(
        self, context: ReviewContext, live: LiveFacts, used: set[str]
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
            newer = self._covering(fact, live, now, used)
            if newer is not None:
                actions.append(
                    ReviewAction(
                        id="",
                        action="replace",
                        memory_ids=[fact.id],
                        keep_id=newer.id,
                        reason=(
                            f"expired and not recalled lately; the newer {newer.id} says "
                            "everything it says"
                        ),
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
        self,
        context: ReviewContext,
        live: LiveFacts,
        groups: list[list[Memory]],
        used: set[str],
    ) -> list[ReviewAction]:
        """One ``resolve_conflict`` for each two groups of duplicates in which a fact of
        one says something different about one subject than a fact of the other,
        between the facts each group keeps (docs/issues.md#issue-43-item-2); each group
        in one conflict of a review at most, and at most ``REVIEW_MAX_CONFLICTS``."""
        now = context.now
        group_of = {fact.id: n for n, group in enumerate(groups) for fact in group}
        keeper = [best_wording(group) for group in groups]
        found: dict[tuple[int, int], Relation] = {}
        for n, group in enumerate(groups):
            if keeper[n].id in used or keeper[n].is_expired(now):
                continue
            for first in group:
                for second in live.sharing(first, minimum=subject_minimum(first)):
                    m = group_of[second.id]
                    other = keeper[m]
                    if m == n or (n, m) in found or (m, n) in found:
                        continue
                    if other.id in used or other.is_expired(now):
                        continue
                    relation = live.relation(first, second)
                    if relation.kind == "different":
                        kept = live.relation(keeper[n], other)
                        found[(n, m)] = kept if kept.kind == "different" else relation
        # A pair that differs only in an environment or region ("prod … 5432" /
        # "staging … 5432") is left out when either side has a value that changed.
        valued = {
            n for pair, relation in found.items() if not relation.qualifiers_only for n in pair
        }
        return _bounded_conflicts(found, keeper, valued)

    def _stale(self, context: ReviewContext, live: LiveFacts, used: set[str]) -> list[ReviewAction]:
        now = context.now
        actions = []
        for fact in live.live:
            if fact.id in used or fact.created_at > now - STALE_AGE:
                continue
            if fact.last_recalled_at is not None and fact.last_recalled_at >= now - RECENT_RECALL:
                continue
            newer = self._covering(fact, live, now, set())
            if newer is None:
                continue
            used.add(fact.id)
            actions.append(
                ReviewAction(
                    id="",
                    action="archive",
                    memory_ids=[fact.id],
                    reason=(
                        f"stale: not recalled in 30 days, and the newer {newer.id} says "
                        "everything it says"
                    ),
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
            normalized = normalize(text)
            if normalized in lifted_texts:
                continue
            twin = twin_of(text, known)
            if twin is not None:
                why = "a person vetoed" if twin.archive_reason == VETOED else "already a fact"
                notes.append(f"not lifted ({why}: {twin.id}): {line}")
                continue
            lifted_texts.add(normalized)
            # A lifted line supersedes a live fact only when it says all that fact
            # says and more; a line with other details is an update a person decides.
            updated = next(
                (f for f in live if f.id not in used and compare(text, f.text).kind == "covers"),
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
                        + ("" if updated is None else f"; it adds to {updated.id}")
                    ),
                    evidence=[line]
                    + ([] if updated is None else [f"{updated.id}: {updated.text}"]),
                    expected_versions={} if updated is None else _versions([updated]),
                )
            )
        return actions, notes
