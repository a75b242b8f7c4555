"""Long technical memories for recall benches
(docs/DECISIONS.md#issue-40-bounded-recall): code-heavy facts of
at most 480 characters, cut from the Python sources and docs of packages in the
project's own virtual environment whose licence allows it (MIT, BSD, Apache-2.0; each
package's licence is read from its installed metadata and a package without one of
those is skipped), and the tasks an agent would recall them for.

``memories(count)`` gives ``count`` distinct texts, each "In <package>/<file>: " and a
run of whole source lines (a line longer than the room left is cut), as a coding
agent's notes about the code it read look. ``tasks(texts, count)`` builds recall
queries from identifiers of some of those texts: a short question, a task of several
clauses (the scorer's most costly query: one pass per clause) and a long task pasted
with a traceback-like tail, in turn. ``near_duplicates(count)`` gives the near-identical
store a user reported: ``count`` facts of about 330 characters that differ only in a
number and a name.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

MAX_CHARS = 480
PACKAGES = ("httpx", "pydantic", "click", "flask", "attrs", "anyio", "h11", "werkzeug", "boto3")
"""Packages read, in order (each checked for an allowed licence first)."""
ALLOWED = ("MIT", "BSD", "Apache")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{4,}")


def licence(package: str) -> str | None:
    """The package's licence as its metadata names it (``License-Expression``, else
    ``License``, else its ``License ::`` classifiers), or ``None`` when not installed."""
    try:
        meta = metadata.metadata(package)
    except metadata.PackageNotFoundError:
        return None
    named = meta.get("License-Expression") or meta.get("License") or ""
    classifiers = " ".join(c for c in meta.get_all("Classifier") or [] if "License ::" in c)
    return f"{named} {classifiers}".strip() or None


def _sources() -> Iterator[tuple[str, Path]]:
    """(``package/relative path``, file) of every ``.py``/``.md``/``.rst`` file of the
    allowed packages, in a fixed order."""
    for package in PACKAGES:
        named = licence(package)
        if named is None or not any(word in named for word in ALLOWED):
            continue
        files = metadata.files(package) or []
        for entry in sorted(files, key=str):
            if entry.suffix not in (".py", ".md", ".rst") or ".dist-info" in str(entry):
                continue
            path = Path(str(entry.locate()))
            if path.is_file():
                yield str(entry), path


def _chunks(name: str, path: Path) -> Iterator[str]:
    """The file as memories: "In name: " and whole lines up to ``MAX_CHARS``."""
    lead = f"In {name}: "
    current = lead
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        if len(current) + len(line) + 1 > MAX_CHARS:
            if len(current) > len(lead) + 120:
                yield current
            current = lead
        current += (line if current == lead else "\n" + line)[: MAX_CHARS - len(current)]
    if len(current) > len(lead) + 120:
        yield current


def memories(count: int, seed: int = 40) -> list[str]:
    """``count`` distinct code-heavy memories of at most ``MAX_CHARS`` characters,
    drawn at random (``seed``) from every chunk of the sources.

    Raises:
        ValueError: the sources give fewer than ``count`` distinct chunks.
    """
    found = list(dict.fromkeys(text for name, path in _sources() for text in _chunks(name, path)))
    if len(found) < count:
        raise ValueError(f"only {len(found)} chunks of allowed sources, {count} asked")
    return random.Random(seed).sample(found, count)


def _identifiers(text: str) -> list[str]:
    """The text's longer identifiers, each once, in order."""
    return list(dict.fromkeys(_IDENTIFIER.findall(text.split(": ", 1)[-1])))


def tasks(texts: list[str], count: int, seed: int = 41) -> list[str]:
    """``count`` recall queries about ``texts``: in turn a question, a task of several
    clauses about three texts, and a long task ending in a traceback-like tail."""
    rng = random.Random(seed)
    found: list[str] = []
    while len(found) < count:
        picked = [_identifiers(text) or ["request"] for text in rng.sample(texts, 3)]
        words = [rng.choice(names) for names in picked]
        kind = len(found) % 3
        if kind == 0:
            found.append(f"How does {words[0]} work and where is it set?")
        elif kind == 1:
            found.append(
                f"Fix the bug in {words[0]}, update {words[1]} to match, add a test for "
                f"{words[2]}; then run the suite and check the docs of {picked[0][-1]}."
            )
        else:
            tail = "\n".join(f'  File "app.py", line {10 + n}, in {w}' for n, w in enumerate(words))
            found.append(
                f"The deploy failed after the change to {words[0]}. Find why {words[1]} "
                f"raised and what we decided about {words[2]}.\nTraceback (most recent "
                f"call last):\n{tail}\nValueError: {picked[1][0]} is not valid"
            )
    return found


def near_duplicates(count: int) -> list[str]:
    """``count`` facts of about 330 characters that differ only in a build number and a
    branch name (the near-identical store a user reported)."""
    return [
        (
            f"Build {4100 + number} of branch feature/cache-{number % 17}: the integration "
            "suite passed on the staging cluster after retrying the flaky payment webhook "
            "test twice; the container image was pushed to the registry, the migration "
            "0042_add_index ran without locking the orders table, and the canary stayed "
            "at 5 % for ten minutes with p95 latency under 180 ms before full rollout."
        )
        for number in range(count)
    ]
