"""Word-level diffs of a memory's text for its history timeline (docs/reference.md#4-states audit
before/after, docs/reference.md#history-diff), with bounded work.

The diff is Myers' O((N+M)·D) shortest edit script over word and white-space tokens,
after the common start and end are set aside. Its steps are counted against a
``DiffBudget``: one record may spend ``HISTORY_DIFF_MAX_STEPS``, one page
``HISTORY_PAGE_DIFF_MAX_STEPS``; past either the diff stops and answers ``None``, and
the page shows the plain before and after instead. A few edited words in an
8,000-character day row still get a word diff; unrelated maximal texts cost a fixed,
small amount. Measurements:
docs/DECISIONS.md#no-lost-edits-in-the-dashboard-bounded-history-diff-issue-21-items-1-and-6.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from chalicelib.limits import HISTORY_DIFF_MAX_STEPS, HISTORY_PAGE_DIFF_MAX_STEPS

_TOKENS = re.compile(r"\s+|[^\s]+")

Kind = Literal["same", "del", "ins"]


@dataclass(frozen=True)
class DiffPart:
    """A run of text that is the same, deleted or inserted."""

    kind: Kind
    text: str


@dataclass
class DiffBudget:
    """The diff work one page may still do (docs/reference.md#history-diff).

    Attributes:
        remaining: steps left for the page (token comparisons and edit-graph steps).
        per_diff: steps one diff may spend at most.
    """

    remaining: int = HISTORY_PAGE_DIFF_MAX_STEPS
    per_diff: int = HISTORY_DIFF_MAX_STEPS

    def allowance(self) -> int:
        """Steps the next diff may spend: its own bound, or what the page has left."""
        return max(0, min(self.per_diff, self.remaining))


def word_diff(before: str, after: str, budget: DiffBudget | None = None) -> list[DiffPart] | None:
    """The parts of ``before`` -> ``after``, word by word (white space kept as is), or
    ``None`` when the comparison would take more steps than ``budget`` allows
    (docs/reference.md#history-diff).

    Adjacent parts of one kind are merged, so a replaced phrase reads as one
    deletion followed by one insertion. The same-parts are a longest common
    subsequence of the tokens (a shortest edit script).

    Args:
        before: the text before the change.
        after: the text after it.
        budget: the page's budget, charged with the steps spent (a fresh one when
            None); tokenising and setting aside the common start and end cost one
            linear pass besides, uncharged.

    Returns:
        The parts (``same`` and ``del`` rebuild ``before``; ``same`` and ``ins``
        rebuild ``after``), or ``None`` past the bound.
    """
    old, new = _TOKENS.findall(before), _TOKENS.findall(after)
    head = _common_prefix(old, new)
    tail = _common_prefix(old[head:][::-1], new[head:][::-1])
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    budget = budget if budget is not None else DiffBudget()
    script, steps = _edit_script(middle_old, middle_new, budget.allowance())
    budget.remaining -= steps
    if script is None:
        return None
    parts: list[DiffPart] = []
    _add(parts, "same", "".join(old[:head]))
    for kind, token in script:
        _add(parts, kind, token)
    _add(parts, "same", "".join(old[len(old) - tail :]))
    return _joined_changes(parts)


def _common_prefix(old: Sequence[str], new: Sequence[str]) -> int:
    size = 0
    for first, second in zip(old, new, strict=False):
        if first != second:
            break
        size += 1
    return size


def _edit_script(
    old: list[str], new: list[str], max_steps: int
) -> tuple[list[tuple[Kind, str]] | None, int]:
    """Myers' greedy forward search, keeping each round's frontier to trace back;
    the script (None past ``max_steps``) and the steps spent."""
    size_old, size_new = len(old), len(new)
    frontier: dict[int, int] = {1: 0}
    rounds: list[dict[int, int]] = []
    steps = 0
    for distance in range(size_old + size_new + 1):
        rounds.append(dict(frontier))
        steps += distance + 1  # the copy above, and the round's diagonals below
        for diagonal in range(-distance, distance + 1, 2):
            x = _start(frontier, diagonal, distance)
            y = x - diagonal
            while x < size_old and y < size_new and old[x] == new[y]:
                x, y = x + 1, y + 1
                steps += 1
            frontier[diagonal] = x
            if x >= size_old and y >= size_new:
                return _trace_back(old, new, rounds), steps
            if steps > max_steps:
                return None, steps
    return None, steps  # pragma: no cover - the search ends by distance size_old + size_new


def _start(frontier: dict[int, int], diagonal: int, distance: int) -> int:
    """Where diagonal ``diagonal`` starts this round: below (an insertion) or right of
    (a deletion) the furthest point of a neighbouring diagonal."""
    if diagonal == -distance or (
        diagonal != distance and frontier[diagonal - 1] < frontier[diagonal + 1]
    ):
        return frontier[diagonal + 1]
    return frontier[diagonal - 1] + 1


def _trace_back(
    old: list[str], new: list[str], rounds: list[dict[int, int]]
) -> list[tuple[Kind, str]]:
    x, y = len(old), len(new)
    script: list[tuple[Kind, str]] = []
    for distance in range(len(rounds) - 1, -1, -1):
        frontier = rounds[distance]
        diagonal = x - y
        if diagonal == -distance or (
            diagonal != distance and frontier[diagonal - 1] < frontier[diagonal + 1]
        ):
            previous = diagonal + 1
        else:
            previous = diagonal - 1
        previous_x = frontier[previous]
        previous_y = previous_x - previous
        while x > previous_x and y > previous_y:
            x, y = x - 1, y - 1
            script.append(("same", old[x]))
        if distance > 0:
            if x == previous_x:
                script.append(("ins", new[y - 1]))
            else:
                script.append(("del", old[x - 1]))
        x, y = previous_x, previous_y
    script.reverse()
    return script


def _joined_changes(parts: list[DiffPart]) -> list[DiffPart]:
    """White space alone between two changes joins them: ``a b`` -> ``c d`` reads as
    one deletion and one insertion, not four pieces around a kept space."""
    joined: list[DiffPart] = []
    deleted, inserted = "", ""
    for index, part in enumerate(parts):
        between = 0 < index < len(parts) - 1 and not part.text.strip()
        if part.kind == "same" and not between:
            _add(joined, "del", deleted)
            _add(joined, "ins", inserted)
            deleted, inserted = "", ""
            _add(joined, "same", part.text)
            continue
        if part.kind != "ins":
            deleted += part.text
        if part.kind != "del":
            inserted += part.text
    _add(joined, "del", deleted)
    _add(joined, "ins", inserted)
    return joined


def _add(parts: list[DiffPart], kind: Kind, text: str) -> None:
    if not text:
        return
    if parts and parts[-1].kind == kind:
        parts[-1] = DiffPart(kind, parts[-1].text + text)
    else:
        parts.append(DiffPart(kind, text))
