"""A recall's scoring deadline, and what its scorer says about the reranker
(docs/reference.md#8-recall "Bounded work", docs/DECISIONS.md#issue-40-bounded-recall).

The recall service scores on the request's own thread inside ``scoring(seconds)``; the
scorer calls ``check(stage)`` between its stages and between batches of work, and
``check`` raises ``DeadlinePassed`` once the budget is spent, so the work stops there
and the service answers with the newest facts. No thread is left running after the
answer. Outside ``scoring`` (a bench, a script, the warm-up), ``check`` does nothing.

No numpy here: the service imports this without loading the scorer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

RERANKER_RAN = "ran"
"""The cross-encoder read the best facts and its stage set their scores."""
RERANKER_OFF = "off"
"""No reranker is configured (``PINEWORK_RERANKER=off``, or a scorer without one)."""
RERANKER_LOADING = "loading"
"""Its weights were still loading (a new Lambda container); the first stages' scores stand."""
RERANKER_OVER_BUDGET = "over_budget"
"""Its CPU budget (``relevance.RERANK_CPU_SECONDS``) ran out; the first stages' scores stand."""
RERANKER_FAILED = "failed"
"""It raised (logged); the first stages' scores stand."""


class DeadlinePassed(Exception):
    """The recall's scoring budget is spent; ``stage`` names where the scorer stopped."""

    def __init__(self, stage: str) -> None:
        super().__init__(f"recall scoring budget spent before {stage}")
        self.stage = stage


@dataclass
class ScoringRun:
    """One recall's scoring: its deadline and what the scorer reported.

    Attributes:
        deadline: ``time.monotonic()`` past which ``check`` raises.
        reranker: one of the ``RERANKER_*`` values, or ``None`` when the scorer did
            not say (a scorer without a reranker stage, or it stopped before it).
        stage: the last stage the scorer reached (``check``'s argument).
    """

    deadline: float
    reranker: str | None = None
    stage: str = "start"

    def left(self) -> float:
        """Seconds left before the deadline (negative once passed)."""
        return self.deadline - time.monotonic()

    def check(self, stage: str) -> None:
        """Record ``stage`` and raise ``DeadlinePassed(stage)`` if the deadline passed."""
        self.stage = stage
        if time.monotonic() >= self.deadline:
            raise DeadlinePassed(stage)


_CURRENT: ContextVar[ScoringRun | None] = ContextVar("recall_scoring_run", default=None)


@contextmanager
def scoring(seconds: float) -> Iterator[ScoringRun]:
    """The ``ScoringRun`` of a scoring that may take ``seconds``, current inside the block."""
    run = ScoringRun(deadline=time.monotonic() + seconds)
    token = _CURRENT.set(run)
    try:
        yield run
    finally:
        _CURRENT.reset(token)


def check(stage: str) -> None:
    """``ScoringRun.check`` of the current scoring; nothing outside ``scoring``.

    Raises:
        DeadlinePassed: the current scoring's budget is spent.
    """
    run = _CURRENT.get()
    if run is not None:
        run.check(stage)


def seconds_left() -> float | None:
    """Seconds left of the current scoring, ``None`` outside ``scoring``."""
    run = _CURRENT.get()
    return None if run is None else run.left()


def note_reranker(state: str) -> None:
    """Record what the reranker did (a ``RERANKER_*`` value) for the current scoring."""
    run = _CURRENT.get()
    if run is not None:
        run.reranker = state


@contextmanager
def excluded() -> Iterator[None]:
    """Time inside the block does not count against the current scoring's deadline: for
    loading model weights, once per process (a cold start's cost, not the recall's work;
    the function's own timeout still bounds it). Nothing outside ``scoring``."""
    run = _CURRENT.get()
    started = time.monotonic()
    try:
        yield
    finally:
        if run is not None:
            run.deadline += time.monotonic() - started
