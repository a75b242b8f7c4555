"""Measure SecretDetector false positives and speed on ordinary memory texts.

Every ``text`` in a recall-eval ``memories.jsonl`` file (ordinary conversation facts, so
every hit is a false positive) goes through ``SecretDetector().find_secret``. The script
prints the count and rate of flagged texts, lists them, and prints the mean time per call.
A ``queries.jsonl`` file works too (its ``question`` fields: recall queries are checked
since docs/issues.md#issue-14). It also counts the flagged texts among the same texts written in
full-width letters and with zero-width spaces between words (the detector reads text
as it shows, docs/issues.md#issue-14), and with ``shapes_only`` (the check on identifiers).

With ``--code`` it measures real code and docs instead (``bench/secrets_code_corpus.py``:
the sources of the packages in ``.venv`` with a declared licence, and any ``--root``,
as memory-sized texts of at most 480 characters): per file type (Python, JavaScript,
YAML, shell, Markdown, lock/checksum files) and per part (tuning, held out: split by
package), the share of lines refused. A flagged text counts the lines refused on their
own, or one line when only the lines together are refused. Only the tuning part's flagged
lines are listed (``--show``). It also prints the catch rate on the secret benchmark
(``tests/secret_corpus.py``, each case alone and inside prose), which must stay 100 %.

Usage::

    .venv/bin/python bench/secrets_false_positives.py [PATH_TO_MEMORIES_JSONL]
    .venv/bin/python bench/secrets_false_positives.py --code [--lines N] [--root DIR] [--show N]

PATH defaults to the ``memories.jsonl`` of the benchmark's development half, where
docs/reference.md#recall-benchmark says. The exit status is 1 when more than 1 % of texts
are flagged; with ``--code``, when more than 0.1 % of the lines of a part are flagged or
a benchmark case is missed.
"""

import argparse
import json
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.secrets import SecretDetector  # noqa: E402

MAX_CODE_LINE_RATE = 0.001
CODE_LINES_PER_PART = 20_000
DEFAULT_PATH = REPO_ROOT / ".." / "shared" / "recall-eval" / "dev" / "memories.jsonl"
MAX_FLAGGED_RATE = 0.01
REPEATS = 5


def load_texts(path: Path) -> list[str]:
    """Read the ``text`` field of every JSON line in ``path``.

    Args:
        path: A JSON-lines file whose records carry a ``text`` string.

    Returns:
        The texts (``text``, else ``question``), in file order (blank lines are skipped).
    """
    with path.open(encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    return [record.get("text", record.get("question", "")) for record in records]


def full_width(text: str) -> str:
    """``text`` with printable ASCII written as full-width forms (U+FF01..U+FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its report.

    Args:
        argv: Command-line arguments (defaults to ``sys.argv[1:]``).

    Returns:
        The process exit status: 0 when at most 1 % of texts are flagged, else 1.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--code", action="store_true", help="measure on real code and docs")
    parser.add_argument("--lines", type=int, default=CODE_LINES_PER_PART)
    parser.add_argument("--root", action="append", default=[], help="DIR or DIR=SPDX-ID")
    parser.add_argument("--show", type=int, default=40, help="tuning-part flags listed")
    args = parser.parse_args(argv)
    if args.code:
        return code_main(args.lines, args.root, args.show)

    texts = load_texts(args.path)
    if not texts:
        print(f"no texts in {args.path}")
        return 1
    detector = SecretDetector()

    flagged = [(kind, text) for text in texts if (kind := detector.find_secret(text))]
    variants = {
        "full-width": [full_width(text) for text in texts],
        "zero-width spaces": [text.replace(" ", " \u200b") for text in texts],
    }
    variant_flags = {
        name: sum(detector.find_secret(text) is not None for text in changed)
        for name, changed in variants.items()
    }
    shapes_flagged = sum(detector.find_secret(text, shapes_only=True) is not None for text in texts)

    calls = 0
    start = time.perf_counter()
    for _ in range(REPEATS):
        for text in texts:
            detector.find_secret(text)
            calls += 1
    mean_us = (time.perf_counter() - start) / calls * 1e6

    probe = (" ".join(texts) * 2)[:500]
    probe_start = time.perf_counter()
    for _ in range(1000):
        detector.find_secret(probe)
    probe_us = (time.perf_counter() - probe_start) / 1000 * 1e6

    rate = len(flagged) / len(texts)
    mean_len = sum(map(len, texts)) / len(texts)
    print(f"file:     {args.path.resolve()}")
    print(f"texts:    {len(texts)} (mean {mean_len:.0f} chars)")
    print(f"flagged:  {len(flagged)} ({rate:.2%}; target <= {MAX_FLAGGED_RATE:.0%})")
    for kind, text in flagged:
        print(f"  [{kind}] {text}")
    for name, count in variant_flags.items():
        print(f"flagged:  {count} of the same texts in {name}")
    print(f"flagged:  {shapes_flagged} with shapes_only (identifier check)")
    print(f"time:     {mean_us:.1f} us/call mean over {calls} calls")
    print(f"time:     {probe_us:.1f} us/call on a 500-char text")
    return 0 if rate <= MAX_FLAGGED_RATE else 1


def benchmark_catch_rate(detector: SecretDetector) -> tuple[int, int, list[str]]:
    """Run every case of the secret benchmark (``tests/secret_corpus.py``), alone and
    inside prose; return (caught with the expected kind, cases, missed case ids)."""
    from tests.secret_corpus import SECRETS, rng_for

    caught, missed = 0, []
    for case, factory, kind in SECRETS:
        secret = factory(rng_for(case))
        for text in (secret, f"Caroline said on 2023-05-08 that she keeps this:\n{secret}\nThanks"):
            if detector.find_secret(text) == kind:
                caught += 1
            else:
                missed.append(case)
    return caught, 2 * len(SECRETS), missed


def flagged_lines(detector: SecretDetector, group: list[str]) -> list[tuple[str, str]]:
    """(kind, line) for the lines of a memory text that are refused; the lines refused on
    their own, or the first line when only the lines together are refused."""
    kind = detector.find_secret("\n".join(group))
    if kind is None:
        return []
    alone = [(k, line) for line in group if (k := detector.find_secret(line)) is not None]
    return alone or [(kind, group[0])]


def code_main(budget: int, roots: list[str], show: int) -> int:
    """Measure refused lines on real code and docs (``--code``); print the table."""
    from bench.secrets_code_corpus import (
        TYPES,
        default_site_packages,
        root_files,
        sample,
        venv_files,
    )

    files = list(venv_files(default_site_packages()))
    for root in roots:
        files += list(root_files(root))
    parts = sample(files, budget)
    detector = SecretDetector()
    worst = 0.0
    listed: list[tuple[str, str, str]] = []
    print(f"corpus:   {len(files)} files; up to {budget} lines per type and part")
    print(f"{'type':<11} {'part':<9} {'lines':>7} {'texts':>6} {'refused':>8} {'rate':>8}")
    start = time.perf_counter()
    for kind in TYPES:
        for held_out in (False, True):
            groups = parts.get((kind, held_out), [])
            lines = sum(map(len, groups))
            refused = 0
            for group in groups:
                found = flagged_lines(detector, group)
                refused += len(found)
                if not held_out:
                    listed += [(kind, k, line) for k, line in found]
            rate = refused / lines if lines else 0.0
            worst = max(worst, rate)
            part = "held-out" if held_out else "tuning"
            print(f"{kind:<11} {part:<9} {lines:>7} {len(groups):>6} {refused:>8} {rate:>8.3%}")
    elapsed = time.perf_counter() - start
    for file_kind, kind, line in listed[:show]:
        print(f"  {file_kind} [{kind}] {line.strip()[:160]}")
    caught, cases, missed = benchmark_catch_rate(detector)
    print(f"time:     {elapsed:.1f} s for the scan")
    print(f"worst:    {worst:.3%} of lines (target < {MAX_CODE_LINE_RATE:.1%})")
    print(f"benchmark: {caught}/{cases} cases caught with their kind; missed: {missed or 'none'}")
    return 0 if worst < MAX_CODE_LINE_RATE and not missed else 1


if __name__ == "__main__":
    sys.exit(main())
