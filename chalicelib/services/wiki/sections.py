"""A published wiki page split into sections (docs/reference.md#page-sections,
docs/issues.md#issue-45 item 2): what recall scores and what the block shows of a page.

A page is cut at its ATX headings (``#`` to ``######``, up to three spaces of indent,
never inside a fenced code block of backticks or tildes). Text before the first heading
is a section under the page title alone. Each section carries its heading path (the
page title, then every enclosing heading, a first-level heading that repeats the title
left out) and the anchor of its heading (GitHub's rule: lowercase, punctuation dropped,
spaces as hyphens, ``-1``, ``-2`` … on repeats; empty for the text before the first
heading). A section whose text holds more tokens than the bound is split between
paragraphs (blank lines), then between lines, then inside a line (at white space when it
can, else between characters); the parts keep the heading path and anchor and are told
apart by their ``index``. Headings are not section text (they are the path); blank lines
only separate paragraphs. A section with no text (a heading followed by another) is left
out. Setext headings (underlined with ``===`` or ``---``) are read as text.

Pure: no storage, no model. Token counts come from the caller (``TokenCounter.count``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MIN_SECTION_TOKENS = 8
"""The smallest bound ``split_sections`` accepts (one character is at most a few tokens)."""

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True)
class Section:
    """One section of a page.

    Attributes:
        index: its position among the page's sections, from 0 (what the recall log and
            the section index key it by).
        anchor: its heading's anchor (``restart-the-worker``), ``""`` before the first
            heading; the parts of one split section share it.
        heading_path: the page title, then each enclosing heading, outermost first.
        text: its lines, joined by line feeds (no heading line; no blank line first or
            last).
        continues: its first line is the rest of the previous section's last line (a
            line longer than the bound, cut inside).
    """

    index: int
    anchor: str
    heading_path: tuple[str, ...]
    text: str
    continues: bool = False


@dataclass
class _Raw:
    """A heading's text before it is cut to the bound."""

    anchor: str
    path: tuple[str, ...]
    lines: list[str]


def split_sections(
    title: str, text: str, *, max_tokens: int, count: Callable[[str], int]
) -> list[Section]:
    """The sections of a page (module docstring), in page order.

    Args:
        title: the page title (the first element of every heading path).
        text: the page's Markdown.
        max_tokens: the bound on ``count(section.text)``, at least ``MIN_SECTION_TOKENS``.
        count: tokens of a text.

    Returns:
        The sections, each ``count(text) <= max_tokens``; together their lines hold every
        non-blank line of ``text`` that is not a heading, once, in order (a line cut
        inside is the concatenation of the parts, the later ones ``continues``).

    Raises:
        ValueError: ``max_tokens`` is below ``MIN_SECTION_TOKENS``.
    """
    if max_tokens < MIN_SECTION_TOKENS:
        raise ValueError(f"max_tokens must be at least {MIN_SECTION_TOKENS}")
    sections: list[Section] = []
    for raw in _by_heading(title, text):
        for body, continues in _bounded(raw.lines, max_tokens, count):
            sections.append(Section(len(sections), raw.anchor, raw.path, body, continues))
    return sections


def heading_anchor(heading: str) -> str:
    """A heading's anchor before repeats are numbered (GitHub's rule): lowercase,
    every character but letters, digits, spaces, ``-`` and ``_`` dropped, spaces as
    hyphens."""
    kept = "".join(
        char
        for char in heading.strip().lower()
        if char in " -_" or unicodedata.category(char)[0] in "LN"
    )
    return kept.replace(" ", "-")


def _by_heading(title: str, text: str) -> list[_Raw]:
    """The page's text grouped under its headings (not yet bounded)."""
    raws = [_Raw("", (title,), [])]
    stack: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    fence: tuple[str, int] | None = None
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if _closes(opened, fence):
                fence = None
            raws[-1].lines.append(line)
            continue
        if opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            fence = (opened.group(1)[0], len(opened.group(1)))
            raws[-1].lines.append(line)
            continue
        heading = _HEADING.match(line)
        if heading is None:
            raws[-1].lines.append(line)
            continue
        level = len(heading.group(1))
        name = _CLOSING_HASHES.sub("", (heading.group(2) or "").strip()).strip()
        stack = [(at, named) for at, named in stack if at < level]
        if not (level == 1 and not stack and name.casefold() == title.strip().casefold()):
            stack.append((level, name))
        base = heading_anchor(name)
        repeats = seen.get(base, 0)
        seen[base] = repeats + 1
        anchor = base if repeats == 0 else f"{base}-{repeats}"
        raws.append(_Raw(anchor, (title, *(named for _, named in stack)), []))
    return raws


def _closes(opened: re.Match[str] | None, fence: tuple[str, int]) -> bool:
    """Whether a fence line closes ``fence`` (its character, at least as long, nothing
    after it)."""
    return (
        opened is not None
        and opened.group(1)[0] == fence[0]
        and len(opened.group(1)) >= fence[1]
        and not opened.group(2).strip()
    )


def _paragraphs(lines: Sequence[str]) -> list[list[str]]:
    """Runs of non-blank lines."""
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return [paragraph for paragraph in paragraphs if paragraph]


def _bounded(
    lines: Sequence[str], max_tokens: int, count: Callable[[str], int]
) -> list[tuple[str, bool]]:
    """A heading's lines as texts within the bound, each with whether it continues the
    one before: whole paragraphs packed greedily, a paragraph over the bound by whole
    lines, a line over it cut inside (``_cut_line``)."""
    parts: list[tuple[str, bool]] = []
    current: list[str] = []
    continues = False

    def flush() -> None:
        nonlocal continues
        if current:
            parts.append(("\n".join(current), continues))
            current.clear()
        continues = False

    for paragraph in _paragraphs(lines):
        joined = "\n".join(paragraph)
        if current and count("\n".join([*current, "", joined])) <= max_tokens:
            current += ["", *paragraph]
            continue
        flush()
        if count(joined) <= max_tokens:
            current += paragraph
            continue
        for line in paragraph:
            if current and count("\n".join([*current, line])) <= max_tokens:
                current.append(line)
                continue
            flush()
            if count(line) <= max_tokens:
                current.append(line)
                continue
            pieces = _cut_line(line, max_tokens, count)
            parts += [(piece, at > 0) for at, piece in enumerate(pieces[:-1])]
            current.append(pieces[-1])
            continues = True
    flush()
    return parts


def _cut_line(line: str, max_tokens: int, count: Callable[[str], int]) -> list[str]:
    """``line`` in pieces of at most ``max_tokens`` each, concatenating to it: each piece
    the longest prefix that fits, ended after white space when there is some in its
    second half; at least one character."""
    pieces: list[str] = []
    rest = line
    while rest:
        if count(rest) <= max_tokens:
            pieces.append(rest)
            break
        low, high = 1, len(rest)
        while low < high:  # the longest prefix within the bound (counts grow with length)
            middle = (low + high + 1) // 2
            if count(rest[:middle]) <= max_tokens:
                low = middle
            else:
                high = middle - 1
        while low > 1 and count(rest[:low]) > max_tokens:
            low -= 1  # a tokenizer whose counts do not grow with every prefix
        space = max(rest.rfind(" ", 0, low), rest.rfind("\t", 0, low))
        end = space + 1 if space + 1 > low // 2 else low
        if count(rest[:end]) > max_tokens:
            end = low
        pieces.append(rest[:end])
        rest = rest[end:]
    return pieces
