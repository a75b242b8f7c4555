"""References that resolve (issue 16 item 1): no file of the repository cites a document
outside it, every ``docs/….md#anchor`` and markdown link resolves to a heading or an
anchor, and every issue citation is a link into docs/issues.md.

The first two checks wait for ``scripts/rewrite_references.py`` to have run
(``REWRITE_PENDING``; the script lifts the mark when it runs). Link resolution holds
always.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path, PurePosixPath

import pytest

from tests.helpers import HEADING, MD_LINK, REPO, anchors, slug

REWRITE_PENDING = False
"""True until ``scripts/rewrite_references.py`` has rewritten the old citations."""

pending = pytest.mark.xfail(
    REWRITE_PENDING,
    strict=True,
    reason=(
        "the repository still cites SPEC sections, workplace documents and unlinked "
        "issues; run `python scripts/rewrite_references.py` (it lifts this mark)"
    ),
)

EXEMPT = {
    "tests/unit/test_doc_references.py",
    "tests/unit/test_rewrite_references.py",
    "scripts/rewrite_references.py",
}
"""Files that quote the old forms on purpose (the checker, the rewriter and its tests)."""

OUTSIDE = [
    (re.compile(r"SPEC\s?§"), "a SPEC section (link docs/reference.md#… instead)"),
    (re.compile(r"\bSPEC\.md\b"), "the workplace's SPEC.md"),
    (re.compile(r"\.\./shared/"), "a file outside the repository (../shared/)"),
    (re.compile(r"\bworkplace's\b"), "the workplace's documents"),
    (re.compile(r"\bSTYLE\.md\b"), "STYLE.md (link docs/conventions.md#… instead)"),
    (re.compile(r"\bPITFALLS\b"), "PITFALLS (link docs/conventions.md#pitfalls instead)"),
    (re.compile(r"\bseeds?[ /]00\d"), "a seed document (link docs/reference.md#… instead)"),
]
UNLINKED_SECTION = re.compile(r"(?<!\])\[§\s?\d{1,2}[^\]]*\](?!\()")
ISSUE = re.compile(r"\b[Ii]ssues?\s\d{1,3}\b")
DOC_TOKEN = re.compile(r"(?<![\w/.-])(?P<path>docs/[\w.-]+\.md)(?:#(?P<anchor>[\w-]+))?")


@cache
def repository_files() -> tuple[str, ...]:
    """Every tracked or new text file of the repository (not the model's data)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    files = []
    for path in sorted(set(listed)):
        if path.startswith("chalicelib/data/") or not (REPO / path).is_file():
            continue
        try:
            (REPO / path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        files.append(path)
    return tuple(files)


def text_of(path: str) -> str:
    return (REPO / path).read_text(encoding="utf-8")


def broken_links() -> list[str]:
    """Every ``docs/….md#anchor`` token and relative markdown link that does not resolve."""
    problems = []
    for path in repository_files():
        if path in EXEMPT:
            continue
        text = text_of(path)
        targets: list[tuple[str, str | None]] = [
            (match.group("path"), match.group("anchor")) for match in DOC_TOKEN.finditer(text)
        ]
        if path.endswith(".md"):
            for match in MD_LINK.finditer(text):
                target = match.group("target")
                if re.match(r"[a-z]+:", target) or target.startswith("<"):
                    continue
                file_part, _, anchor = target.partition("#")
                resolved = (
                    path
                    if not file_part
                    else str(PurePosixPath(path).parent / file_part).replace("\\", "/")
                )
                resolved = str(Path(resolved)).replace("\\", "/")
                resolved = str((REPO / resolved).resolve().relative_to(REPO.resolve()))
                targets.append((resolved, anchor or None))
        for target, anchor in targets:
            if not (REPO / target).is_file():
                problems.append(f"{path}: {target} does not exist")
            elif anchor and target.endswith(".md") and anchor not in anchors(target):
                problems.append(f"{path}: {target}#{anchor} names no heading or anchor")
    return problems


def outside_references() -> list[str]:
    problems = []
    for path in repository_files():
        if path in EXEMPT:
            continue
        for number, line in enumerate(text_of(path).splitlines(), start=1):
            for pattern, what in OUTSIDE:
                if pattern.search(line):
                    problems.append(f"{path}:{number}: {what}: {line.strip()[:120]}")
            if path.endswith(".md") and UNLINKED_SECTION.search(line):
                problems.append(f"{path}:{number}: an unlinked [§N]: {line.strip()[:120]}")
    return problems


def unlinked_issues() -> list[str]:
    problems = []
    for path in repository_files():
        if path in EXEMPT or path == "docs/issues.md":
            continue
        text = text_of(path)
        linked = (
            [match.span("text") for match in MD_LINK.finditer(text)] if path.endswith(".md") else []
        )
        for match in ISSUE.finditer(text):
            if any(start <= match.start() < end for start, end in linked):
                continue
            number = text.count("\n", 0, match.start()) + 1
            problems.append(f"{path}:{number}: {match.group(0)!r} is not a link to docs/issues.md")
    return problems


def test_every_document_link_resolves() -> None:
    assert broken_links() == []


def test_the_reference_keeps_the_numbered_sections() -> None:
    titles = [
        heading.group("title")
        for line in text_of("docs/reference.md").splitlines()
        if (heading := HEADING.match(line)) and len(heading.group("hashes")) == 2
    ]
    numbered = [title.split(".")[0] for title in titles if re.match(r"\d+\. ", title)]
    # 1-14 always; the specification's later sections (15 learnings, 16 data lifecycle,
    # 17 scale and abuse) appear in its order as they are built
    assert numbered[:14] == [str(number) for number in range(1, 15)]
    later = [int(number) for number in numbered[14:]]
    assert later == sorted(set(later)) and all(15 <= number <= 17 for number in later)


@pending
def test_nothing_cites_a_document_outside_the_repository() -> None:
    assert outside_references() == []


@pending
def test_every_issue_citation_is_a_link() -> None:
    assert unlinked_issues() == []


def test_the_checks_see_what_they_must(tmp_path: Path) -> None:
    assert slug("Key-value meta-tools ([issue 5](issues.md#issue-5))") == (
        "key-value-meta-tools-issue-5"
    )
    assert slug("8. Recall") == "8-recall"
    assert "10-key-value" in anchors("docs/reference.md")
    assert "error-memory_day_full" in anchors("docs/reference.md")
    assert "issue-4-item-6" in anchors("docs/issues.md")
    assert ISSUE.search("(issue 4 item 6)") and not ISSUE.search("docs/issues.md#issue-4-item-6")
    assert UNLINKED_SECTION.search("nothing [§7].") and not UNLINKED_SECTION.search(
        "[§7](reference.md#7-http-api)"
    )
    assert any(p.search("Recall (SPEC §8)") for p, _ in OUTSIDE)
    assert not any(p.search("Recall (docs/reference.md#8-recall)") for p, _ in OUTSIDE)
