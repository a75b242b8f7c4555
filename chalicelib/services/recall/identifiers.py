"""Queries made only of ticket keys (docs/reference.md#identifier-queries): ``PIN-42``,
``ABC-7``, the form an agent's ``X-Pinework-Task`` usually takes and the default recall
query when no other is sent. Such a query asks for what is known about those tickets, so
it finds the facts that name one of them, and only those: the models read ``PIN-999`` as
close to ``PIN-812``, which it is not."""

from __future__ import annotations

import re
from collections.abc import Sequence

from chalicelib.limits import MAX_KEPT, SCORE_CUTOFF

_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]*-[0-9]+")
_SEPARATORS = re.compile(r"[\s,;]+")


def ticket_keys(query: str) -> frozenset[str] | None:
    """The ticket keys of a query made only of them (upper-cased), or None when it holds
    anything else (words, a bare number, nothing)."""
    tokens = [token for token in _SEPARATORS.split(query.strip()) if token]
    if not tokens or not all(_KEY.fullmatch(token) for token in tokens):
        return None
    return frozenset(token.upper() for token in tokens)


def names_a_key(text: str, keys: frozenset[str]) -> bool:
    """Whether ``text`` names one of ``keys`` as a whole key (any case): ``PIN-42`` is
    in "(source: pin-42)" but not in "PIN-420" or "XPIN-42"."""
    return any(
        re.search(rf"(?<![A-Za-z0-9_-]){re.escape(key)}(?![0-9])", text, re.IGNORECASE)
        for key in keys
    )


def keyed_scores(query: str, texts: Sequence[str], scores: Sequence[float]) -> list[float]:
    """``scores`` under the ticket-key rule: for a query of ticket keys, a text naming one
    of them scores at least ``SCORE_CUTOFF`` (the ``MAX_KEPT`` best of them; any more keep
    their own score, below the cut) and any other scores 0; any other query leaves the
    scores as they are (docs/reference.md#identifier-queries)."""
    keys = ticket_keys(query)
    if keys is None:
        return list(scores)
    named = [index for index, text in enumerate(texts) if names_a_key(text, keys)]
    named.sort(key=lambda index: scores[index], reverse=True)
    kept, naming = set(named[:MAX_KEPT]), set(named)
    below = SCORE_CUTOFF - 0.0001
    return [
        max(float(score), SCORE_CUTOFF)
        if index in kept
        else min(float(score), below)
        if index in naming
        else 0.0
        for index, score in enumerate(scores)
    ]
