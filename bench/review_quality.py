"""Measure the review's judgement on labelled pairs of facts (docs/issues.md#issue-14-item-4).

Every pair is two live facts of one agent (``a`` saved a day before ``b``),
embedded with the real MiniLM embedder and judged by the real ``RuleReviewer``
(the same code a nightly review runs). What the review proposes for the pair:

- ``merge``: it would supersede one of them (for a pair that is not a duplicate,
  that is a false merge: data loss);
- ``conflict``: a ``resolve_conflict`` (decided by evidence, or waiting for a
  person: the pairs here carry no evidence, so it waits);
- ``none``: both stay as they are.

Labels: ``duplicate`` (says the same thing: should merge), ``different_detail``
(one detail swapped, or a clause added: must not merge), ``update_conflict`` (a
changed value or a contradiction: must not merge; should reach a person),
``unrelated`` (must not merge; a conflict here is a false alarm).

Every set and split is reported on its own (docs/issues.md#issue-43-item-5): merged / sent to a
person / ignored by kind of pair, paraphrases sent as conflicts, and contradictions
found with and without a duplicate of one side beside them; then the sameness rules
against the learned comparison (MiniLM cosine behind the detail check). Files:
``review_pairs_independent.jsonl`` (written by someone who had not read the rules;
``tune`` chooses, ``heldout`` never tuned on), ``review_pairs_v2.jsonl`` and
``review_pairs.jsonl`` (written for this bench: deploys,
configs, people, schedules, preferences; split ``tune``, the pairs the thresholds
were chosen on; ``heldout``, written apart and never tuned on; and ``subjects``,
pairs whose facts differ in a subject qualifier (environment, region, component,
host, name) as well as a value, with same-subject counterparts and duplicates,
written for the different-subjects rule), plus pairs
built at run time from the recall benchmark's conversations (``--data``, default the
``shared/recall-eval/dev`` folder beside the repository; never copied into it): a
fact against a copy with punctuation, case or a filler word changed
(duplicate), with a speaker's name swapped for another's, a number changed or a
negation added (different detail), or a clause of another fact appended; and two
facts of one conversation (unrelated).

For comparison the old rule (content-word Jaccard >= 0.8 with the same polarity,
which merged the issue's examples) is scored on the same pairs.

Usage::

    .venv/bin/python bench/review_quality.py [--data DIR] [--pairs FILE ...] [--show-misses]
        [--no-contradictions] [--comparison-only]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib.models.memory import Memory, MemoryKind  # noqa: E402
from chalicelib.services.recall.embedding import FloatArray, MiniLMEmbedder  # noqa: E402
from chalicelib.services.review.details import shape  # noqa: E402
from chalicelib.services.review.rule_reviewer import (  # noqa: E402
    ReviewContext,
    RuleReviewer,
    content_words,
    normalize,
)
from chalicelib.services.review.sameness import compare  # noqa: E402

DEFAULT_PAIRS = (
    REPO_ROOT / "bench" / "data" / "review_pairs.jsonl",
    REPO_ROOT / "bench" / "data" / "review_pairs_v2.jsonl",
    REPO_ROOT / "bench" / "data" / "review_pairs_independent.jsonl",
)
INDEPENDENT = "review_pairs_independent.jsonl"
"""The set written by someone who had not read the rules: its tune part chooses the
learned comparison's threshold; its held-out part is never tuned on."""
V2_LABELS = {
    "duplicate": "duplicate",
    "different": "different_detail",
    "two_attributes": "unrelated",
}
"""The second file's labels in this bench's words (docs/issues.md#issue-26-item-1): a pair of
two attributes of one subject must be left alone, as an unrelated pair."""
DEFAULT_DATA = REPO_ROOT / ".." / "shared" / "recall-eval" / "dev"
LABELS = ("duplicate", "different_detail", "update_conflict", "unrelated")
NOW = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
NEGATIONS = frozenset({"not", "no", "never", "none", "cannot", "without", "nobody", "nothing"})


@dataclass(frozen=True)
class Pair:
    """Two facts, ``a`` older than ``b``, with what they are to each other."""

    source: str
    split: str
    label: str
    variant: str
    a: str
    b: str


def written_pairs(path: Path) -> list[Pair]:
    """The hand-written pairs of a data file (none when it is missing): the first file's
    rows name a ``variant``, the second's a ``kind`` and its own labels (``V2_LABELS``)."""
    if not path.exists():
        return []
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        label = V2_LABELS.get(row["label"], row["label"]) if "kind" in row else row["label"]
        variant = row.get("variant") or f"{row['kind']} (v2)"
        pairs.append(Pair(path.name, row["split"], label, variant, row["a"], row["b"]))
    return pairs


def conversation_pairs(directory: Path, per_conversation: int, seed: int) -> list[Pair]:
    """Pairs built from the recall benchmark's facts (see the module docstring)."""
    facts_file = directory / "memories.jsonl"
    if not facts_file.exists():
        return []
    by_conversation: dict[str, list[dict[str, str]]] = defaultdict(list)
    for line in facts_file.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        by_conversation[row["conv"]].append(row)
    chance = random.Random(seed)
    pairs: list[Pair] = []
    for conversation, facts in sorted(by_conversation.items()):
        speakers = sorted({fact["speaker"] for fact in facts})
        picked = chance.sample(facts, min(per_conversation, len(facts)))
        for number, fact in enumerate(picked):
            text = fact["text"]
            other = chance.choice([f for f in facts if f["id"] != fact["id"]])["text"]
            maker = (_duplicate, _name_swap, _number_swap, _negation, _clause, _unrelated)[
                number % 6
            ]
            made = maker(text, other, speakers, chance)
            if made is not None:
                label, variant, changed = made
                pairs.append(
                    Pair(
                        f"conversation {conversation}",
                        "conversations",
                        label,
                        variant,
                        text,
                        changed,
                    )
                )
    return pairs


def _duplicate(
    text: str, other: str, speakers: list[str], chance: random.Random
) -> tuple[str, str, str] | None:
    variants = [
        text.rstrip(".") + "!",
        text.lower(),
        text.replace(" the ", " the ", 1).rstrip(".") + ".",
        re.sub(r"^(\w+) ", r"\1 also ", text, count=1),
        text.replace(" is ", " is still ", 1) if " is " in text else text.upper(),
    ]
    return "duplicate", "copy with case, punctuation or a filler word", chance.choice(variants)


def _name_swap(
    text: str, other: str, speakers: list[str], chance: random.Random
) -> tuple[str, str, str] | None:
    present = [name for name in speakers if re.search(rf"\b{re.escape(name)}\b", text)]
    if not present or len(speakers) < 2:
        return None
    name = present[0]
    replacement = next(s for s in speakers if s != name)
    return "different_detail", "name", re.sub(rf"\b{re.escape(name)}\b", replacement, text, count=1)


def _number_swap(
    text: str, other: str, speakers: list[str], chance: random.Random
) -> tuple[str, str, str] | None:
    match = re.search(r"\b\d+\b", text)
    if match is None:
        words = {"two": "three", "three": "four", "four": "five", "five": "six", "one": "two"}
        found = next((w for w in words if re.search(rf"\b{w}\b", text)), None)
        if found is None:
            return None
        return "different_detail", "number", re.sub(rf"\b{found}\b", words[found], text, count=1)
    value = int(match.group(0))
    return (
        "different_detail",
        "number",
        text[: match.start()] + str(value + 1) + text[match.end() :],
    )


def _negation(
    text: str, other: str, speakers: list[str], chance: random.Random
) -> tuple[str, str, str] | None:
    for verb in (" is ", " was ", " has ", " can ", " will ", " does "):
        if verb in text:
            return "update_conflict", "negation", text.replace(verb, f"{verb}not ", 1)
    return None


def _clause(
    text: str, other: str, speakers: list[str], chance: random.Random
) -> tuple[str, str, str] | None:
    clause = other.rstrip(".")
    return (
        "different_detail",
        "added clause",
        text.rstrip(".") + ", and " + clause[0].lower() + clause[1:] + ".",
    )


def _unrelated(
    text: str, other: str, speakers: list[str], chance: random.Random
) -> tuple[str, str, str] | None:
    return "unrelated", "two facts of one conversation", other


def fact(number: int, text: str, embedding: bytes, created: datetime) -> Memory:
    """A live, unexpired, recently saved fact of one agent."""
    return Memory(
        id=f"mem_01KBENCH{number:018d}",
        workspace_id="wsp_bench",
        agent_id="agt_bench",
        kind=MemoryKind.FACT,
        text=text,
        embedding=embedding,
        expires_at=NOW + timedelta(days=80),
        created_at=created,
        updated_at=created,
    )


def judge(pairs: list[Pair], embedder: MiniLMEmbedder) -> list[str]:
    """What the rule reviewer proposes for each pair: ``merge``, ``conflict`` or ``none``."""
    texts = sorted({text for pair in pairs for text in (pair.a, pair.b)})
    embedded = dict(zip(texts, embedder.embed(texts), strict=True))
    reviewer = RuleReviewer()
    outcomes = []
    for number, pair in enumerate(pairs):
        older = fact(2 * number, pair.a, embedded[pair.a], NOW - timedelta(days=3))
        newer = fact(2 * number + 1, pair.b, embedded[pair.b], NOW - timedelta(days=2))
        actions = reviewer.propose(
            ReviewContext("agt_bench", "2026-11-30", NOW, [newer, older])
        ).actions
        kinds = {action.action for action in actions}
        outcomes.append(
            "merge" if "merge" in kinds else "conflict" if "resolve_conflict" in kinds else "none"
        )
    return outcomes


def old_rule_merges(pair: Pair) -> bool:
    """The rule docs/issues.md#issue-14 replaced: same normalized text, or content-word Jaccard >=
    0.8 with the same polarity."""
    if normalize(pair.a) == normalize(pair.b):
        return True
    left, right = content_words(pair.a), content_words(pair.b)
    union = left | right
    same_polarity = bool(set(normalize(pair.a).split()) & NEGATIONS) == bool(
        set(normalize(pair.b).split()) & NEGATIONS
    )
    return bool(union) and same_polarity and len(left & right) / len(union) >= 0.8


def report(title: str, pairs: list[Pair], outcomes: list[str]) -> dict[str, int]:
    """Print one table (per label) and return its totals."""
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    old: Counter[str] = Counter()
    for pair, outcome in zip(pairs, outcomes, strict=True):
        rows[pair.label][outcome] += 1
        rows[pair.label]["n"] += 1
        old[pair.label] += old_rule_merges(pair)
    print(f"\n{title} ({len(pairs)} pairs)")
    print(
        f"{'label':<17} {'n':>4} {'merged':>7} {'conflict':>9} {'none':>5} {'old rule merged':>16}"
    )
    for label in LABELS:
        row = rows.get(label)
        if not row:
            continue
        print(
            f"{label:<17} {row['n']:>4} {row['merge']:>7} {row['conflict']:>9} {row['none']:>5}"
            f" {old[label]:>16}"
        )
    duplicates = rows["duplicate"]["n"]
    false_merges = sum(rows[label]["merge"] for label in LABELS if label != "duplicate")
    old_false = sum(old[label] for label in LABELS if label != "duplicate")
    share = rows["duplicate"]["merge"] / duplicates if duplicates else 0.0
    heading = f"{'label / kind':<60} {'n':>4} {'merged':>7} {'person':>7} {'ignored':>8}"
    print(f"\nby kind of pair:\n  {heading}")
    by_kind: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for pair, outcome in zip(pairs, outcomes, strict=True):
        by_kind[(pair.label, pair.variant)][outcome] += 1
        by_kind[(pair.label, pair.variant)]["n"] += 1
    for (label, variant), row in sorted(by_kind.items()):
        name = f"{label} / {variant}"[:60]
        print(f"  {name:<60} {row['n']:>4} {row['merge']:>7} {row['conflict']:>7} {row['none']:>8}")
    print(f"false merges (not duplicates, merged): {false_merges}   [old rule: {old_false}]")
    print(f"true duplicates merged: {rows['duplicate']['merge']} of {duplicates} ({share:.0%})")
    flagged = rows["update_conflict"]["conflict"]
    print(
        f"updates/conflicts put in front of a person: {flagged} of {rows['update_conflict']['n']}"
        f"; unrelated pairs flagged as conflicts: {rows['unrelated']['conflict']}"
        f"; paraphrases (duplicates) sent as conflicts: {rows['duplicate']['conflict']}"
    )
    return {"false_merges": false_merges, "duplicates": duplicates}


def learned_duplicate(pair: Pair, vectors: dict[str, FloatArray], threshold: float) -> bool:
    """The learned comparison weighed against the rules
    (docs/DECISIONS.md#one-readable-sameness-judgment-issue-43): duplicates when the
    detail check passes (equal negations, quoted strings and detail values) and the
    MiniLM cosine reaches ``threshold``."""
    left, right = shape(pair.a), shape(pair.b)
    if left.negations != right.negations or sorted(left.quoted) != sorted(right.quoted):
        return False
    if Counter(t.value for t in left.tokens if t.is_detail) != Counter(
        t.value for t in right.tokens if t.is_detail
    ):
        return False
    return float(vectors[pair.a] @ vectors[pair.b]) >= threshold


LEARNED_THRESHOLDS = (0.80, 0.85, 0.90, 0.95, 0.98)


def meaning_comparison(sets: dict[str, list[Pair]], embedder: MiniLMEmbedder) -> None:
    """Rules against the learned comparison, per set: duplicates merged / false merges,
    the learned one at each of ``LEARNED_THRESHOLDS`` (read its threshold off the
    independent set's tune part; its held-out part only confirms)."""
    texts = sorted({text for pairs in sets.values() for p in pairs for text in (p.a, p.b)})
    vectors = dict(zip(texts, embedder.embed_matrix(texts), strict=True))
    print("\nthe meaning step: duplicates merged / false merges, rules vs learned")
    header = "".join(f" {'cos>=' + str(t):>12}" for t in LEARNED_THRESHOLDS)
    print(f"  {'set':<44} {'dups':>5} {'rules':>9}{header}")
    for name, pairs in sets.items():
        dups = [p for p in pairs if p.label == "duplicate"]
        others = [p for p in pairs if p.label != "duplicate"]
        rules = sum(compare(p.a, p.b).kind == "duplicate" for p in dups)
        rules_fm = sum(compare(p.a, p.b).kind == "duplicate" for p in others)
        cells = ""
        for threshold in LEARNED_THRESHOLDS:
            merged = sum(learned_duplicate(p, vectors, threshold) for p in dups)
            wrong = sum(learned_duplicate(p, vectors, threshold) for p in others)
            cells += f" {f'{merged} / {wrong}':>12}"
        print(f"  {name:<44} {len(dups):>5} {f'{rules} / {rules_fm}':>9}{cells}")


def contradictions(pairs: list[Pair], embedder: MiniLMEmbedder) -> None:
    """Contradictions found alone and with a duplicate of one side beside them: every
    pair labelled ``different`` (one detail changed) is reviewed as two facts, then as
    three (a "Note that" copy of the first added); both should reach a person."""
    different = [p for p in pairs if p.label in ("different_detail", "update_conflict")]
    texts = sorted({t for p in different for t in (p.a, p.b, _noted(p.a))})
    embedded = dict(zip(texts, embedder.embed(texts), strict=True))
    reviewer = RuleReviewer()
    alone = beside = merged_beside = 0
    for number, pair in enumerate(different):
        older = fact(3 * number, pair.a, embedded[pair.a], NOW - timedelta(days=3))
        newer = fact(3 * number + 1, pair.b, embedded[pair.b], NOW - timedelta(days=2))
        copy = fact(
            3 * number + 2, _noted(pair.a), embedded[_noted(pair.a)], NOW - timedelta(days=1)
        )
        first = reviewer.propose(ReviewContext("agt_bench", "2026-11-30", NOW, [newer, older]))
        second = reviewer.propose(
            ReviewContext("agt_bench", "2026-11-30", NOW, [copy, newer, older])
        )
        alone += any(a.action == "resolve_conflict" for a in first.actions)
        beside += any(a.action == "resolve_conflict" for a in second.actions)
        merged_beside += any(a.action == "merge" for a in second.actions)
    print(
        f"contradictions sent to a person: {alone} of {len(different)} alone, {beside} of "
        f"{len(different)} with a duplicate of one side beside them ({merged_beside} "
        "duplicates merged)"
    )


def _noted(text: str) -> str:
    return "Note that " + text[:1].lower() + text[1:] if text[1:2].islower() else "Note: " + text


def main() -> int:
    """Run every set of pairs through the real reviewer and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pairs", type=Path, nargs="+", default=list(DEFAULT_PAIRS), help="labelled pair files"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--per-conversation", type=int, default=60)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--show-misses", action="store_true", help="print every wrong outcome")
    parser.add_argument("--no-contradictions", action="store_true")
    parser.add_argument(
        "--comparison-only", action="store_true", help="only rules vs the learned comparison"
    )
    args = parser.parse_args()
    sets: dict[str, list[Pair]] = {}
    for path in args.pairs:
        for pair in written_pairs(path):
            sets.setdefault(f"{path.name} {pair.split}", []).append(pair)
    built = conversation_pairs(args.data.resolve(), args.per_conversation, args.seed)
    if built:
        sets["recall conversations (built)"] = built
    else:
        print(f"(no conversation pairs: {args.data} has no memories.jsonl)")
    embedder = MiniLMEmbedder()
    started = time.perf_counter()
    false_merges = 0
    for name, pairs in {} if args.comparison_only else sets.items():
        outcomes = judge(pairs, embedder)
        totals = report(name + (" (never tuned on)" if "heldout" in name else ""), pairs, outcomes)
        false_merges += totals["false_merges"]
        if not args.no_contradictions:
            contradictions(pairs, embedder)
        if args.show_misses:
            for pair, outcome in zip(pairs, outcomes, strict=True):
                wrong = (pair.label == "duplicate") != (outcome == "merge") or (
                    pair.label == "unrelated" and outcome != "none"
                )
                if wrong:
                    print(f"  {pair.label}/{pair.variant} -> {outcome}: {pair.a!r} | {pair.b!r}")
    meaning_comparison(sets, embedder)
    print(
        f"\n{time.perf_counter() - started:.1f} s (noisy: a shared machine); target: zero false"
        " merges -> " + ("met" if false_merges == 0 else f"NOT met ({false_merges})")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
