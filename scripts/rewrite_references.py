"""Rewrite citations of documents outside the repository into links to docs inside it.

    python scripts/rewrite_references.py            # rewrite every tracked text file
    python scripts/rewrite_references.py --check    # list what would change; exit 1 if any
    python scripts/rewrite_references.py FILE ...   # only these files

What it rewrites (idempotent: a second run changes nothing):

* ``SPEC §N`` and its forms (``SPEC §N–M``, ``SPEC §N, §M``, ``SPEC §9 step 5``,
  ``SPEC §7's "who"``, ``SPEC §7 auth``, ``SPEC §6 ``code```, ``SPEC §4 rules``,
  ``SPEC §5 lists``, ``SPEC §7 /routines``) into links to ``docs/reference.md``
  anchors (``docs/conventions.md#references`` explains the form); ``[§N]`` in
  markdown too;
* ``issue N``, ``issue N item M``, ``issue N items M and K`` into links to
  ``docs/issues.md`` anchors;
* ``STYLE.md rule N`` / ``STYLE.md: …`` / ``STYLE.md`` and ``PITFALLS: …`` /
  ``PITFALLS`` into ``docs/conventions.md`` anchors; ``seed 000`` / ``seed 001``
  into the reference sections they described.

In Python files the link is the bare path and anchor (``docs/reference.md#8-recall``),
in comments, docstrings and other strings alike; comment and docstring lines that
grow past 100 characters are wrapped. Other strings (user-facing messages) are
rewritten too, and listed on stderr so a person can check their wording and
length. In markdown the link is ``[§8](docs/reference.md#8-recall)``, relative to
the file. Finally the xfail mark of ``tests/unit/test_doc_references.py`` is
lifted (``REWRITE_PENDING = False``), since its checks hold from then on.
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parents[1]
LINE_LIMIT = 100

SECTIONS = {
    1: "1-overview",
    2: "2-concepts",
    3: "3-the-memory-object",
    4: "4-states",
    5: "5-limits",
    6: "6-errors",
    7: "7-http-api",
    8: "8-recall",
    9: "9-review",
    10: "10-key-value",
    11: "11-mcp",
    12: "12-cli",
    13: "13-dashboard",
    14: "14-operations",
}
"""The reference's numbered sections: what ``SPEC §N`` meant, by anchor."""

sys.path.insert(0, str(REPO))
from chalicelib.errors import STATUS_BY_CODE  # noqa: E402

ERROR_CODES = frozenset(STATUS_BY_CODE)
"""Codes that ``SPEC §6 ``code``` may name (each has an ``error-<code>`` anchor)."""

PITFALL_ANCHORS = {
    "limit before filter": "limit-before-filter",
    "gsis": "gsis",
    "time": "time",
}

SKIPPED = (
    "chalicelib/data/",
    "scripts/rewrite_references.py",
    "tests/unit/test_doc_references.py",
    "tests/unit/test_rewrite_references.py",
    "docs/issues.md",
)
"""Files never rewritten: binary data, this tool, its tests and the issue index."""

TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".yml", ".yaml", ".sh"}
TEXT_NAMES = {"Makefile", "run"}

PENDING_FLAG = "tests/unit/test_doc_references.py"


# What a citation is.

_SECTION = r"§\s?(?P<{n}>\d{{1,2}})(?:\s?[\u2013-]\s?(?P<{n}_end>\d{{1,2}}))?"
_QUALIFIER = (
    r"(?P<{n}_q>"
    r"'s \"who\"|\s\"who\""
    r"|\sstep\s(?P<{n}_step>[1-5])\b"
    r"|\sauth\b"
    r"|\srules\b"
    r"|\slists\b"
    r"|\s``/routines…``|\s``/routines``|\s/routines…|\s/routines\b"
    r"|\s``/reviews``|\s/reviews\b"
    r"|\s``(?P<{n}_code>[a-z_]+)``|\s`(?P<{n}_code2>[a-z_]+)`"
    r")?"
)


def _section_pattern(name: str) -> str:
    return _SECTION.format(n=name) + _QUALIFIER.format(n=name)


SPEC = re.compile(
    r"SPEC\s"
    + _section_pattern("a")
    + r"(?P<more>(?:(?:,\s|;\s|\sand\s|\sor\s)"
    + r"§\s?\d{1,2}(?:\s?[\u2013-]\s?\d{1,2})?"
    + _QUALIFIER.format(n="x")
    .replace("?P<x_q>", "?:")
    .replace("?P<x_step>", "?:")
    .replace("?P<x_code>", "?:")
    .replace("?P<x_code2>", "?:")
    + r")*)"
)
"""``SPEC §N`` with its qualifier, and the ``, §M`` citations that follow it."""

ONE_SECTION = re.compile(_section_pattern("a"))
BRACKETED = re.compile(r"(?<!\])\[" + _section_pattern("a") + r"\](?!\()")
"""``[§N]`` in markdown (not a link already)."""

ISSUE = re.compile(
    r"\b(?P<word>[Ii]ssue)\s(?P<n>\d{1,3})\b"
    r"(?:,?\s(?:item|items)\s(?P<items>\d{1,2}[a-z]?(?:(?:,\s|\sand\s)\d{1,2}[a-z]?)*))?"
)
STYLE = re.compile(
    r"STYLE\.md(?:\s(?:rule|rules)\s(?P<rule>\d{1,2})(?:\s?[\u2013-]\s?(?P<rule_end>\d{1,2}))?"
    r"|(?P<colon>:))?"
)
PITFALLS = re.compile(r"\bPITFALLS\b(?::\s(?P<topic>Limit before filter|GSIs|Time)\b)?")
SEED = re.compile(r"\bseed\s(?P<seed>00[01])\b")


@dataclass(frozen=True)
class Link:
    """One link target (a repository path and an anchor) with its markdown text."""

    path: str
    anchor: str
    text: str

    def python(self) -> str:
        """The bare form used in code: ``docs/reference.md#8-recall``."""
        return f"{self.path}#{self.anchor}"

    def markdown(self, from_file: str) -> str:
        """``[text](relative/path#anchor)`` as seen from ``from_file``."""
        return f"[{self.text}]({relative(self.path, from_file)}#{self.anchor})"


def relative(target: str, from_file: str) -> str:
    """``target`` (a repository path) relative to the folder of ``from_file``."""
    origin = PurePosixPath(from_file).parent.parts
    parts = PurePosixPath(target).parts
    common = 0
    while common < min(len(origin), len(parts)) and origin[common] == parts[common]:
        common += 1
    return "/".join([".."] * (len(origin) - common) + list(parts[common:])) or target


_QUALIFIED_ANCHORS: tuple[tuple[int, Callable[[str], bool], str, str], ...] = (
    (7, lambda qualifier: '"who"' in qualifier, "who-may-call", '§7 "who"'),
    (7, lambda qualifier: qualifier.strip() == "auth", "authentication", "§7 auth"),
    (4, lambda qualifier: qualifier.strip() == "rules", "unarchive-rules", "§4 rules"),
    (5, lambda qualifier: qualifier.strip() == "lists", "lists", "§5 lists"),
    (7, lambda qualifier: "/routines" in qualifier, "routes-routines", "§7 /routines"),
    (7, lambda qualifier: "/reviews" in qualifier, "routes-reviews", "§7 /reviews"),
)
"""Citations whose qualifier names a narrower anchor: (section, does the qualifier
name it, anchor, link text), tried in order."""


def section_links(match: re.Match[str], name: str = "a") -> list[Link]:
    """The links of one ``§N`` citation (two for a range)."""
    number = int(match.group(name))
    end = match.group(f"{name}_end")
    qualifier = match.group(f"{name}_q") or ""
    anchor = SECTIONS.get(number)
    if anchor is None:
        raise ValueError(f"no reference section {number}: {match.group(0)!r}")
    text = f"§{number}"
    step = match.group(f"{name}_step")
    code = match.group(f"{name}_code") or match.group(f"{name}_code2")
    if end is not None:
        last = SECTIONS.get(int(end))
        if last is None:
            raise ValueError(f"no reference section {end}: {match.group(0)!r}")
        return [
            Link("docs/reference.md", anchor, text),
            Link("docs/reference.md", last, f"§{int(end)}"),
        ]
    if step is not None and number == 9:
        return [Link("docs/reference.md", f"review-step-{step}", f"§9 step {step}")]
    for section, applies, special, label in _QUALIFIED_ANCHORS:
        if number == section and applies(qualifier):
            return [Link("docs/reference.md", special, label)]
    if code is not None and number == 6 and code in ERROR_CODES:
        return [Link("docs/reference.md", f"error-{code}", f"§6 {code}")]
    return [Link("docs/reference.md", anchor, text)]


def _consumed_qualifier(match: re.Match[str], links: list[Link], name: str = "a") -> str:
    """The qualifier text left in place after the link (when the anchor did not use it)."""
    qualifier = match.group(f"{name}_q") or ""
    if not qualifier:
        return ""
    used = links[0].anchor != SECTIONS.get(int(match.group(name)))
    if used:
        return ""
    return qualifier


def render(links: list[Link], kind: str, from_file: str) -> str:
    """Links joined: a range as "A to B" (code) or "A–B" (markdown)."""
    if kind == "md":
        if len(links) == 2:
            return f"{links[0].markdown(from_file)}\u2013{links[1].markdown(from_file)}"
        return links[0].markdown(from_file)
    if len(links) == 2:
        return f"{links[0].python()} to {links[1].python()}"
    return links[0].python()


def rewrite_spec(text: str, kind: str, from_file: str) -> str:
    """Every ``SPEC §…`` citation of ``text`` as links."""

    def replace(match: re.Match[str]) -> str:
        first = ONE_SECTION.match(match.group(0)[len("SPEC ") :])
        assert first is not None
        links = section_links(first)
        out = render(links, kind, from_file) + _consumed_qualifier(first, links)
        more = match.group("more") or ""
        position = 0
        rendered: list[str] = []
        for follow in ONE_SECTION.finditer(more):
            rendered.append(more[position : follow.start()])
            follow_links = section_links(follow)
            rendered.append(
                render(follow_links, kind, from_file) + _consumed_qualifier(follow, follow_links)
            )
            position = follow.end()
        rendered.append(more[position:])
        return out + "".join(rendered)

    return SPEC.sub(replace, text)


def rewrite_bracketed(text: str, from_file: str) -> str:
    """Markdown ``[§N]`` citations as links."""

    def replace(match: re.Match[str]) -> str:
        links = section_links(match)
        return render(links, "md", from_file) if len(links) == 2 else links[0].markdown(from_file)

    return BRACKETED.sub(replace, text)


def issue_links(match: re.Match[str]) -> list[Link]:
    """The links of one issue citation (one per item, or the issue alone)."""
    number = match.group("n")
    items = match.group("items")
    word = match.group("word")
    if not items:
        return [Link("docs/issues.md", f"issue-{number}", f"{word} {number}")]
    found = re.findall(r"\d{1,2}[a-z]?", items)
    return [
        Link("docs/issues.md", f"issue-{number}-item-{item}", f"{word} {number} item {item}")
        for item in found
    ]


def rewrite_issues(text: str, kind: str, from_file: str) -> str:
    """Every ``issue N (item M)`` citation of ``text`` as links (not those in links)."""
    protected = _protected_spans(text) if kind == "md" else []

    def replace(match: re.Match[str]) -> str:
        if any(start <= match.start() < end for start, end in protected):
            return match.group(0)
        links = issue_links(match)
        if kind == "md":
            rendered = [link.markdown(from_file) for link in links]
        else:
            rendered = [link.python() for link in links]
        return (
            rendered[0] if len(rendered) == 1 else ", ".join(rendered[:-1]) + " and " + rendered[-1]
        )

    return ISSUE.sub(replace, text)


_MD_LINK = re.compile(r"\[[^\]\n]*\]\([^)\s]*\)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _protected_spans(text: str) -> list[tuple[int, int]]:
    """Markdown links and code spans: never rewritten inside."""
    return [m.span() for m in _MD_LINK.finditer(text)] + [
        m.span() for m in _CODE_SPAN.finditer(text)
    ]


def rewrite_conventions(text: str, kind: str, from_file: str) -> str:
    """``STYLE.md …``, ``PITFALLS …`` and ``seed 00N`` citations as links."""

    def style(match: re.Match[str]) -> str:
        rule, end = match.group("rule"), match.group("rule_end")
        if rule and end:
            links = [
                Link("docs/conventions.md", f"rule-{rule}", f"rule {rule}"),
                Link("docs/conventions.md", f"rule-{end}", f"rule {end}"),
            ]
        elif rule:
            links = [Link("docs/conventions.md", f"rule-{rule}", f"rule {rule}")]
        elif match.group("colon"):
            links = [Link("docs/conventions.md", "layers", "conventions")]
            return render(links, kind, from_file) + ":"
        else:
            links = [Link("docs/conventions.md", "layers", "conventions")]
        return render(links, kind, from_file)

    def pitfalls(match: re.Match[str]) -> str:
        topic = match.group("topic")
        anchor = PITFALL_ANCHORS[topic.lower()] if topic else "pitfalls"
        return render([Link("docs/conventions.md", anchor, topic or "pitfalls")], kind, from_file)

    def seed(match: re.Match[str]) -> str:
        # The two documents the product was first described in: agent memory (000)
        # and the key-value tools (001).
        if match.group("seed") == "001":
            link = Link("docs/reference.md", "10-key-value", "the key-value product")
        else:
            link = Link("docs/reference.md", "1-overview", "the agent-memory product")
        return render([link], kind, from_file)

    text = STYLE.sub(style, text)
    text = PITFALLS.sub(pitfalls, text)
    text = SEED.sub(seed, text)
    return _dedupe(text)


def _dedupe(text: str) -> str:
    """``X, X`` (a citation that became the same link twice) as ``X``."""
    return re.sub(r"(docs/[a-z]+\.md#[\w-]+)(?:, \1)+\b", r"\1", text)


def rewrite_text(text: str, kind: str, from_file: str) -> str:
    """All the rewrites on one piece of text (``kind``: ``md`` or ``py``)."""
    text = rewrite_spec(text, kind, from_file)
    if kind == "md":
        text = rewrite_bracketed(text, from_file)
    text = rewrite_issues(text, kind, from_file)
    return rewrite_conventions(text, kind, from_file)


# Python: rewrite inside comments and strings, then wrap what grew too long.


def rewrite_python(source: str, path: str, warn: Callable[[str], None]) -> str:
    """Rewrite the citations in a Python file's comments and strings, wrapping the
    comments and docstrings that grow past the line limit."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    previous = None
    for token in tokens:
        if token.type in (tokenize.COMMENT, tokenize.STRING):
            new = rewrite_text(token.string, "py", path)
            if new != token.string:
                start = offsets[token.start[0] - 1] + token.start[1]
                end = offsets[token.end[0] - 1] + token.end[1]
                role = _role(token, previous)
                if role == "docstring":
                    new = wrap_docstring(new, token.start[1])
                elif role == "comment" and token.line.strip().startswith("#"):
                    new = wrap_comment(new, token.start[1])
                else:
                    what = "an inline comment" if role == "comment" else "a string"
                    warn(f"{path}:{token.start[0]}: rewrote {what} (check it reads well)")
                edits.append((start, end, new))
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token
    out = source
    for start, end, new in reversed(edits):
        out = out[:start] + new + out[end:]
    return move_long_inline_comments(out, path, warn) if edits else out


def _role(token: tokenize.TokenInfo, previous: tokenize.TokenInfo | None) -> str:
    if token.type == tokenize.COMMENT:
        return "comment"
    if previous is None or previous.type in (
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
    ):
        return "docstring"
    return "message"


_ENTRY = re.compile(r"^[A-Za-z_][\w.,]*(?:, [A-Za-z_][\w.]*)*:\s")
"""A Google-style docstring entry (``Raises:`` and ``Args:`` items)."""


def _cut(line: str, limit: int, floor: int) -> int | None:
    """Where to cut ``line`` (a space at most ``limit`` in, after ``floor``), if anywhere."""
    cut = line.rfind(" ", floor + 1, limit + 1)
    return cut if cut > floor else None


def wrap_docstring(text: str, column: int) -> str:
    """Wrap the lines of a docstring token (starting at ``column``) past the limit.

    The rest of a cut line goes in front of the next line when that line continues
    the same paragraph at the same indentation, else on a new line below it.
    """
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        lead = column if index == 0 else 0
        if lead + len(line) <= LINE_LIMIT:
            index += 1
            continue
        body = line.lstrip()
        indent = " " * column if index == 0 else line[: len(line) - len(body)]
        floor = len(line) - len(body) + (3 if index == 0 else 0)
        cut = _cut(line, LINE_LIMIT - lead, floor)
        if cut is None:
            index += 1
            continue
        head, tail = line[:cut].rstrip(), line[cut + 1 :]
        continuation = indent + ("    " if index > 0 and _ENTRY.match(body) else "")
        lines[index] = head
        following = lines[index + 1] if index + 1 < len(lines) else None
        if following is not None and _continues(following, continuation):
            lines[index + 1] = continuation + tail + " " + following[len(continuation) :]
        else:
            lines.insert(index + 1, continuation + tail)
        index += 1
    return "\n".join(lines)


def _continues(following: str, continuation: str) -> bool:
    """Whether ``following`` continues the paragraph a cut line belongs to."""
    if not following.startswith(continuation):
        return False
    body = following[len(continuation) :]
    if not body.strip() or body[0] == " " or body.lstrip().startswith('"""'):
        return False
    if body[0] in "*-#`>|" or _ENTRY.match(body) or re.match(r"\d+\.\s", body):
        return False
    return not body.rstrip().endswith(":")


def wrap_comment(text: str, column: int) -> str:
    """Wrap a whole-line comment (starting at ``column``) into several comment lines."""
    lines = [text]
    while column + len(lines[-1]) > LINE_LIMIT:
        last = lines[-1]
        cut = _cut(last, LINE_LIMIT - column, 2)
        if cut is None:
            break
        lines[-1:] = [last[:cut].rstrip(), "# " + last[cut + 1 :]]
    return ("\n" + " " * column).join(lines)


def move_long_inline_comments(source: str, path: str, warn: Callable[[str], None]) -> str:
    """Put an inline comment that makes its line too long on its own line(s) above."""
    lines = source.split("\n")
    moves: list[tuple[int, int]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT or token.line.strip().startswith("#"):
            continue
        number = token.start[0]
        if len(lines[number - 1]) > LINE_LIMIT and "docs/" in token.string:
            moves.append((number, token.start[1]))
    for number, column in reversed(moves):
        line = lines[number - 1]
        code = line[:column].rstrip()
        indent = line[: len(line) - len(line.lstrip())]
        comment = wrap_comment(line[column:], len(indent))
        lines[number - 1 : number] = [indent + comment, code]
        if len(code) > LINE_LIMIT:
            warn(f"{path}:{number}: line is {len(code)} characters; wrap it by hand")
    return "\n".join(lines)


# Files.


def text_files(paths: list[str]) -> list[str]:
    """The files to rewrite: the given ones, or every tracked and new text file."""
    if not paths:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        paths = sorted(set(listed))
    chosen = []
    for path in paths:
        relative_path = (
            str(Path(path).resolve().relative_to(REPO)) if Path(path).is_absolute() else path
        )
        if relative_path.startswith(SKIPPED) or not (REPO / relative_path).is_file():
            continue
        name = PurePosixPath(relative_path).name
        if PurePosixPath(relative_path).suffix in TEXT_SUFFIXES or name in TEXT_NAMES:
            chosen.append(relative_path)
    return chosen


def rewrite_file(path: str, warn: Callable[[str], None]) -> str | None:
    """The rewritten content of ``path``, or None when nothing changes."""
    original = (REPO / path).read_text(encoding="utf-8")
    if path.endswith(".py"):
        new = rewrite_python(original, path, warn)
    elif path.endswith(".md"):
        new = rewrite_text(original, "md", path)
    else:
        new = rewrite_text(original, "py", path)
    return None if new == original else new


def lift_pending_flag() -> bool:
    """Set ``REWRITE_PENDING = False`` in the reference checker; True if it changed."""
    flag = REPO / PENDING_FLAG
    if not flag.exists():
        return False
    text = flag.read_text(encoding="utf-8")
    new = text.replace("REWRITE_PENDING = True", "REWRITE_PENDING = False")
    if new == text:
        return False
    flag.write_text(new, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or, with ``--check``, list) the files; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="files to rewrite (default: all)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if needed")
    args = parser.parse_args(argv)
    warnings: list[str] = []
    changed = []
    for path in text_files(args.paths):
        new = rewrite_file(path, warnings.append)
        if new is None:
            continue
        changed.append(path)
        if not args.check:
            (REPO / path).write_text(new, encoding="utf-8")
    for warning in warnings:
        print("warning:", warning, file=sys.stderr)
    for path in changed:
        print(("would rewrite " if args.check else "rewrote ") + path)
    if args.check:
        return 1 if changed else 0
    if not args.paths and lift_pending_flag():
        print(f"lifted the xfail mark of {PENDING_FLAG}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
