"""Measure SecretDetector false positives and speed on ordinary memory texts.

Every ``text`` in a recall-eval ``memories.jsonl`` file (ordinary conversation facts, so
every hit is a false positive) goes through ``SecretDetector().find_secret``. The script
prints the count and rate of flagged texts, lists them, and prints the mean time per call.
A ``queries.jsonl`` file works too (its ``question`` fields: recall queries are checked
since docs/issues.md#issue-14). It also counts the flagged texts among the same texts written in
full-width letters and with zero-width spaces between words (the detector reads text
as it shows, docs/issues.md#issue-14), and with ``shapes_only`` (the check on identifiers).

Usage::

    .venv/bin/python bench/secrets_false_positives.py [PATH_TO_MEMORIES_JSONL]

PATH defaults to the ``memories.jsonl`` of the benchmark's development half, where
docs/reference.md#recall-benchmark says. The exit status is 1 when more than 1 % of texts
are flagged.
"""

import argparse
import json
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.secrets import SecretDetector  # noqa: E402

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
    args = parser.parse_args(argv)

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


if __name__ == "__main__":
    sys.exit(main())
