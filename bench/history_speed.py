"""Bounded work per page (docs/reference.md#history-diff): every dashboard page's time with 100
maximal edit records on one day row and 100 on one fact, on the embedded DynamoDB (moto).

The workspace is ``bench/dashboard_speed.py``'s (its ``build``, smaller by default); then
a person edits one day row 100 times, each time to an unrelated 8,000-character text
(the day log's cap), and one fact 100 times to unrelated 500-character texts: the
worst case for a word diff. Each page is asked through the app as in
``dashboard_speed.py`` (median seconds, the part outside DynamoDB calls as "app s",
requests, size); the two memory pages show those 100 records. The word diff of one
8,000-character pair without a bound (``difflib``, as before) is timed once at the end
with ``--unbounded``.

Usage: ``.venv/bin/python bench/history_speed.py [--memories 1000] [--agents 5] [--unbounded]``
"""

from __future__ import annotations

import argparse
import difflib
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.dashboard_speed import Bench, agent_pages, build, time_pages
from chalicelib import wiring
from chalicelib.limits import DAY_LOG_MAX_CHARS, FACT_MAX_CHARS
from chalicelib.models.memory import MemoryKind
from chalicelib.models.requests import EditRequest
from chalicelib.web.diff import _TOKENS
from infra.local_dynamodb import embedded_for_bench

EDITS = 100


def unrelated_text(rng: random.Random, chars: int) -> str:
    """``chars`` characters of words no other call shares the order of."""
    words: list[str] = []
    while sum(len(word) + 1 for word in words) < chars:
        words.append(f"w{rng.randrange(100_000)}")
    return " ".join(words)[:chars]


def edit_many(bench: Bench, memory_id: str, chars: int, rng: random.Random) -> None:
    """``EDITS`` edits of one memory by the person, each to an unrelated text."""
    for _ in range(EDITS):
        request = EditRequest.model_validate({"text": unrelated_text(rng, chars)})
        bench.services.memories.edit(bench.person, memory_id, request)


def unbounded_seconds(rng: random.Random) -> float:
    """``difflib`` over the tokens of one unrelated maximal pair (the diff before)."""
    old = _TOKENS.findall(unrelated_text(rng, DAY_LOG_MAX_CHARS))
    new = _TOKENS.findall(unrelated_text(rng, DAY_LOG_MAX_CHARS))
    started = time.perf_counter()
    difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    return time.perf_counter() - started


def main() -> None:
    """Load, edit, then time each page."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--agents", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--unbounded", action="store_true")
    parser.add_argument(
        "--serial-overview",
        action="store_true",
        help="read the overview's agents one at a time, so its app time shows",
    )
    args = parser.parse_args()
    rng = random.Random(21)
    with embedded_for_bench() as endpoint:
        bench = build(endpoint, args.memories, args.agents, 1 if args.serial_overview else 8)
        try:
            day = next(m for m in bench.memories if m.kind is MemoryKind.DAY)
            fact = next(m for m in bench.memories if m.kind is MemoryKind.FACT)
            started = time.perf_counter()
            edit_many(bench, day.id, DAY_LOG_MAX_CHARS, rng)
            edit_many(bench, fact.id, FACT_MAX_CHARS, rng)
            print(f"stored {2 * EDITS} edit records in {time.perf_counter() - started:.1f} s")
            pages = [
                *agent_pages(bench),
                (f"day row, {EDITS} 8,000-char edits", f"/memories/{day.id}"),
                (f"fact, {EDITS} 500-char edits", f"/memories/{fact.id}"),
            ]
            time_pages(bench, pages, args.repeat)
        finally:
            wiring.install(None)
    if args.unbounded:
        print(f"one unbounded 8,000-char word diff (difflib): {unbounded_seconds(rng):.1f} s")


if __name__ == "__main__":
    main()
