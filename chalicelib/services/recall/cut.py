"""Recall's cut (docs/reference.md#8-recall: a fact is kept when its score is >= 0.5): where it sits
on the relevance model's probability ``p``, query by query.

The model (``relevance.RelevanceScorer``) gives each candidate fact a calibrated
probability ``p`` that it holds evidence for the query. The cut on ``p`` is relative
to the query's best candidate, with a floor::

    cut = max(floor, relative * p_max)

``p_max`` is the best ``p`` among the query's candidates (after the clause-by-clause
pass). A query unrelated to the store (``unrelated.unrelated``) has the higher floor
``floor_if_unrelated``: ``max(floor_if_unrelated, relative * p_max)``. The score is
``p`` with its odds divided by those of the cut, ``sigmoid(logit p - logit cut)``:
the order is the order of ``p``, and the score is >= 0.5 exactly when ``p >= cut``.

However loose that cut is, at most ``MAX_KEPT`` facts pass it (``capped``).

Why relative: how sure the model is of a store's best facts shifts from one
conversation to another (a store whose best facts score 0.5 keeps many more facts
above an absolute 0.006 than one whose best score 0.3), so an absolute cut tuned on
some conversations keeps far more on others. A cut that follows the best ``p`` keeps
a similar number everywhere; the floor keeps a query that matches nothing well (a
question asked of the wrong store) from keeping dozens of weak facts. Both numbers
are fitted by ``scripts/build_recall_model.py`` (docs/DECISIONS.md, Recall: "The
cut") and live in ``chalicelib/data/recall-relevance.json``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from chalicelib.limits import MAX_KEPT


@dataclass(frozen=True)
class Cut:
    """The cut rule's three numbers (see the module doc).

    Attributes:
        floor: the lowest cut on ``p`` (``c``), in (0, 1).
        relative: the cut's share of the query's best ``p`` (``r``), in [0, 1).
        floor_if_unrelated: the floor for a query unrelated to the store, in (0, 1).
    """

    floor: float
    relative: float
    floor_if_unrelated: float

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Cut:
        """A cut as ``recall-relevance.json`` keeps it (``floor``, ``relative``,
        ``floor_if_unrelated``; other keys ignored).

        Raises:
            KeyError, TypeError, ValueError: a number is missing or is not one.
        """
        return cls(
            floor=float(data["floor"]),
            relative=float(data["relative"]),
            floor_if_unrelated=float(data["floor_if_unrelated"]),
        )

    def probability(self, best: float, unrelated: bool) -> float:
        """The cut on ``p`` for a query whose best candidate has probability ``best``.

        Args:
            best: ``p_max``, in [0, 1].
            unrelated: whether the query is unrelated to the store (higher floor).

        Returns:
            ``max(floor or floor_if_unrelated, relative * best)``.
        """
        return max(self.floor_if_unrelated if unrelated else self.floor, self.relative * best)

    def logit(self, best: float, unrelated: bool) -> float:
        """``logit(probability(best, unrelated))``: subtracted from ``logit p`` to give
        the score's logit."""
        cut = self.probability(best, unrelated)
        return math.log(cut / (1.0 - cut))


def capped(logits: npt.NDArray[np.float64], cut_logit: float) -> float:
    """The cut's logit raised, if need be, so that at most ``MAX_KEPT`` of ``logits`` reach
    it: halfway between the ``MAX_KEPT``-th and the next best logit when more would pass
    (facts tied at that boundary all fall below it).

    Args:
        logits: every candidate's ``logit p``, any order.
        cut_logit: ``Cut.logit`` of the query.

    Returns:
        ``cut_logit``, or the higher cap.
    """
    if len(logits) <= MAX_KEPT or int((logits >= cut_logit).sum()) <= MAX_KEPT:
        return cut_logit
    ordered = np.sort(logits)[::-1]
    inside, outside = float(ordered[MAX_KEPT - 1]), float(ordered[MAX_KEPT])
    if inside == outside:
        return math.nextafter(inside, math.inf)
    return max(cut_logit, (inside + outside) / 2.0)
