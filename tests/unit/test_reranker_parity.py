"""The numpy reranker (``chalicelib/services/recall/reranker.py``) against the library it
replaces: onnxruntime on the int8 ONNX file the weights were exported from
(``scripts/build_reranker.py``'s ``compare``, which its ``check`` prints; the ONNX file is
kept by ``make``'s ``fetch``: docs/operations.md#reranker-weights).

The tolerance is measured: on ``PAIRS`` the largest difference is 0.27 logit (onnxruntime
quantises activations to uint8, the numpy model keeps them in float32), against logits
from -11 to +7; the test allows 0.4 and asks that each query orders its texts alike."""

from __future__ import annotations

import pytest

from scripts import build_reranker

TOLERANCE = 0.4
"""Largest allowed |onnxruntime - numpy| logit (measured: 0.266)."""


@pytest.fixture(scope="module")
def logits() -> list[tuple[float, float]]:
    """``(onnxruntime, numpy)`` per pair of ``build_reranker.PAIRS``."""
    assert build_reranker.ONNX_FILE.is_file(), (
        f"{build_reranker.ONNX_FILE} is missing: `make test` builds it (or run "
        "`.venv/bin/python scripts/build_reranker.py fetch`)"
    )
    return build_reranker.compare(build_reranker.ONNX_FILE)


def test_numpy_logits_match_onnxruntime_within_the_measured_tolerance(
    logits: list[tuple[float, float]],
) -> None:
    differences = [abs(theirs - ours) for theirs, ours in logits]
    assert max(differences) <= TOLERANCE, list(zip(build_reranker.PAIRS, logits, strict=True))


def test_each_query_orders_its_texts_as_onnxruntime_does(
    logits: list[tuple[float, float]],
) -> None:
    by_query: dict[str, list[tuple[float, float]]] = {}
    for (query, _), pair in zip(build_reranker.PAIRS, logits, strict=True):
        by_query.setdefault(query, []).append(pair)
    for query, scores in by_query.items():
        theirs = sorted(range(len(scores)), key=lambda index: scores[index][0])
        ours = sorted(range(len(scores)), key=lambda index: scores[index][1])
        assert theirs == ours, query
