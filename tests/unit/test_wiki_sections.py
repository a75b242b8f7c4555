"""A published page's sections (docs/reference.md#page-sections,
docs/issues.md#issue-45-item-2): split by ATX heading outside fenced code, each with its
heading path and anchor, each within the token bound, together holding every non-heading
line once."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.services.recall.tokens import Cl100kTokenCounter
from chalicelib.services.wiki.sections import (
    MIN_SECTION_TOKENS,
    Section,
    heading_anchor,
    split_sections,
)


def words(text: str) -> int:
    """A token counter for the tests: words and line breaks."""
    return len(text.split()) + text.count("\n")


def split(text: str, bound: int = 200, title: str = "Runbook") -> list[Section]:
    return split_sections(title, text, max_tokens=bound, count=words)


def test_headings_make_sections_with_their_path_and_anchor() -> None:
    text = (
        "Intro line.\n\n# Runbook\n\nAbout it.\n## Deploys\nDeploy text.\n"
        "### Staging\nStaging text.\n## Rollback!\nRoll back.\n### Staging\nAgain.\n"
    )
    sections = split(text)
    assert [(s.heading_path, s.anchor, s.text) for s in sections] == [
        (("Runbook",), "", "Intro line."),
        (("Runbook",), "runbook", "About it."),
        (("Runbook", "Deploys"), "deploys", "Deploy text."),
        (("Runbook", "Deploys", "Staging"), "staging", "Staging text."),
        (("Runbook", "Rollback!"), "rollback", "Roll back."),
        (("Runbook", "Rollback!", "Staging"), "staging-1", "Again."),
    ]
    assert [s.index for s in sections] == list(range(6))


def test_hashes_inside_fenced_code_are_text_and_closing_hashes_are_dropped() -> None:
    text = (
        "## Shell ##\n```bash\n# not a heading\n~~~\n## still code\n```\nafter\n"
        "~~~~\n# tilde code\n```\n~~~~\n#nospace is text\n    # indented four is text\n"
    )
    sections = split(text)
    assert len(sections) == 1
    assert sections[0].heading_path == ("Runbook", "Shell")
    assert "# not a heading" in sections[0].text
    assert "## still code" in sections[0].text
    assert "# tilde code" in sections[0].text
    assert "#nospace is text" in sections[0].text
    assert "    # indented four is text" in sections[0].text


def test_an_unclosed_fence_runs_to_the_end() -> None:
    sections = split("# A\ntext\n```\n# B\nmore")
    assert [s.heading_path for s in sections] == [("Runbook", "A")]


def test_a_heading_without_text_is_no_section_but_stays_in_the_path() -> None:
    sections = split("# Ops\n## Deploys\nstep one\n")
    assert [(s.heading_path, s.text) for s in sections] == [
        (("Runbook", "Ops", "Deploys"), "step one")
    ]


def test_a_long_section_is_split_between_paragraphs_then_lines_then_inside_a_line() -> None:
    paragraphs = "\n\n".join(" ".join(f"w{p}x{i}" for i in range(6)) for p in range(5))
    sections = split(f"# Long\n{paragraphs}", bound=14)
    assert all(words(s.text) <= 14 for s in sections)
    # Two paragraphs of 6 words and a blank line fit 14 (6 + 2 breaks + 6); three do not.
    assert [s.text.count("\n\n") for s in sections] == [1, 1, 0]
    assert {s.anchor for s in sections} == {"long"}
    lines = split("# Long\n" + "\n".join(f"a{i} b{i} c{i}" for i in range(10)), bound=9)
    assert all(words(s.text) <= 9 for s in lines)
    assert all(s.text.count("\n") <= 2 for s in lines)
    one_line = " ".join(f"t{i}" for i in range(50))
    cut = split(one_line, bound=10)
    assert [s.continues for s in cut] == [False] + [True] * (len(cut) - 1)
    assert "".join(s.text for s in cut) == one_line
    assert all(words(s.text) <= 10 for s in cut)


def test_a_bound_below_the_minimum_is_refused() -> None:
    with pytest.raises(ValueError):
        split_sections("T", "text", max_tokens=MIN_SECTION_TOKENS - 1, count=words)


def test_anchors_follow_githubs_rule() -> None:
    assert heading_anchor("Restart the Worker (v2)!") == "restart-the-worker-v2"
    assert heading_anchor("Über_cool - yes") == "über_cool---yes"


def test_real_tokenizer_bound_holds_on_code_and_prose() -> None:
    tokens = Cl100kTokenCounter()
    text = "# Deploy\n" + ("Run `make deploy STAGE=prod` then watch the alarms. " * 200)
    text += "\n```python\n" + "x = [i ** 2 for i in range(10)]\n" * 100 + "```\n"
    sections = split_sections("Ops", text, max_tokens=64, count=tokens.count)
    assert len(sections) > 10
    assert all(tokens.count(s.text) <= 64 for s in sections)


_LINE_CHARS = st.characters(
    blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="\x1c\x1d\x1e\x85"
)
_word = st.text(_LINE_CHARS, min_size=1, max_size=12)
_plain_line = (
    st.lists(_word, min_size=1, max_size=30)
    .map(" ".join)
    .filter(lambda line: not line.lstrip(" ").startswith(("#", "```", "~~~")))
)
_block = st.one_of(
    st.tuples(st.just("heading"), st.integers(1, 6), _word),
    st.tuples(st.just("text"), st.lists(st.one_of(_plain_line, st.just("")), max_size=6)),
    st.tuples(st.just("code"), st.lists(st.one_of(_plain_line, st.just("# in code"))), st.just(0)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_block, max_size=12), st.integers(MIN_SECTION_TOKENS, 40))
def test_sections_hold_every_non_heading_line_once_within_the_bound(
    blocks: list[tuple[object, ...]], bound: int
) -> None:
    lines: list[str] = []
    expected: list[str] = []
    for block in blocks:
        if block[0] == "heading":
            lines.append(f"{'#' * int(str(block[1]))} {block[2]}")
        elif block[0] == "text":
            body = [str(line) for line in block[1]]  # type: ignore[attr-defined]
            lines += body
            expected += [line for line in body if line.strip()]
        else:
            body = ["```", *(str(line) for line in block[1]), "```"]  # type: ignore[attr-defined]
            lines += body
            expected += [line for line in body if line.strip()]
    sections = split_sections("Page", "\n".join(lines), max_tokens=bound, count=words)
    got: list[str] = []
    for section in sections:
        assert words(section.text) <= bound
        assert section.heading_path[0] == "Page"
        parts = [line for line in section.text.split("\n") if line.strip() or section.continues]
        if section.continues:
            got[-1] += parts.pop(0)
        got += [line for line in parts if line.strip()]
    assert got == expected
    assert [s.index for s in sections] == list(range(len(sections)))
