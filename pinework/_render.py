"""Human-readable text for the CLI: one line per memory, a block for one memory; and
the one door every CLI output goes through (``echo``), which never lets a control
character, terminal escape or invisible format character of stored data reach the
terminal (docs/reference.md#12-cli).

``--json`` output is the server's JSON as received, written by ``to_json``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import typer

from pinework.models import AuditRecord, Learning, Memory, ScoredLearning, ScoredMemory

TEXT_WIDTH = 72
"""Characters of a memory's text shown on a list line before it is cut with ``…``."""


UNSAFE_CHARACTERS = (
    "\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\xad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890-\\u0891"
    "\\u08e2\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb"
    "\\U000110bd\\U000110cd\\U00013430-\\U0001343f\\U0001bca0-\\U0001bca3"
    "\\U0001d173-\\U0001d17a\\U000e0000-\\U000e007f"
)
"""A character class of the code points that act on a terminal or hide themselves:
Unicode's control (Cc: C0 but line feed and tab, DEL, C1), format (Cf: bidi
overrides and isolates, zero-width characters, U+200E/F, the BOM, the soft hyphen,
tag characters) and line and paragraph separators (Zl, Zp), written out (computing
them from ``unicodedata`` costs 0.6 s at start); whole blocks where Unicode keeps
adding format characters. A test holds it to ``unicodedata``."""
_UNSAFE = re.compile(f"[{UNSAFE_CHARACTERS}]")


def marker(ch: str) -> str:
    """The visible stand-in of one unsafe character: ``⟨U+202E⟩``."""
    return f"⟨U+{ord(ch):04X}⟩"


def terminal_safe(text: str) -> str:
    """``text`` with every control, format and separator character (``UNSAFE_CHARACTERS``)
    written as a visible marker naming it (``\x1b`` becomes ``⟨U+001B⟩``, a
    right-to-left override ``⟨U+202E⟩``), so stored data cannot move the cursor,
    clear the screen, set a title, make a link or reorder what it shows. Line feeds
    and tabs stay. The dashboard marks the same code points
    (``chalicelib.web.render.visible``).
    """
    return _UNSAFE.sub(lambda match: marker(match.group()), text)


def echo(message: object = "", *, err: bool = False) -> None:
    """Print one line through ``terminal_safe`` (stdout, or stderr with ``err``): the
    only way the CLI writes text."""
    typer.echo(terminal_safe(str(message)), err=err)


def _json_escape(match: re.Match[str]) -> str:
    """``\\uXXXX`` (a surrogate pair above U+FFFF) of one unsafe character."""
    encoded = match.group().encode("utf-16-be")
    units = [int.from_bytes(encoded[i : i + 2], "big") for i in range(0, len(encoded), 2)]
    return "".join(f"\\u{unit:04x}" for unit in units)


def to_json(data: Any) -> str:
    """Serialise JSON for stdout: indented, non-ASCII kept as is, except the
    characters ``terminal_safe`` marks, which are written as ``\\uXXXX`` escapes (the
    same JSON value; they only occur inside strings).

    Args:
        data: decoded JSON.

    Returns:
        The JSON text.
    """
    return _UNSAFE.sub(_json_escape, json.dumps(data, indent=2, ensure_ascii=False))


def lines_of(text: str) -> list[str]:
    """``text`` split at line feeds only (``[""]`` for no text, a final line feed
    ends the last line): a carriage return, U+0085, U+2028 and U+2029, which
    ``str.splitlines`` also breaks at, stay in the line and show as markers
    (``terminal_safe``), as on the dashboard (``chalicelib.web.render.visible``)."""
    parts = text.split("\n")
    return parts[:-1] if len(parts) > 1 and parts[-1] == "" else parts


def one_line(text: str, width: int = TEXT_WIDTH) -> str:
    """Fold ``text`` onto one line and cut it to ``width`` characters.

    Args:
        text: any text; newlines become `` ⏎ ``.
        width: the most characters to keep, ``…`` included.

    Returns:
        The folded, possibly shortened text.
    """
    folded = " ⏎ ".join(part.strip(" \t") for part in lines_of(text.strip(" \t\n")))
    return folded if len(folded) <= width else folded[: width - 1] + "…"


def status_label(memory: Memory) -> str:
    """``active``, ``archived``, or either with ``/expired`` appended.

    Args:
        memory: the memory.

    Returns:
        The label.
    """
    return f"{memory.status}/expired" if memory.expired else memory.status


def memory_row(memory: Memory) -> str:
    """One list line: id, kind, status, date, recall count and the text.

    The date is the day row's UTC date, or the UTC creation date of a fact.

    Args:
        memory: the memory.

    Returns:
        The line, without a newline.
    """
    day = memory.date or _utc(memory.created_at).date()
    return (
        f"{memory.id}  {memory.kind:<4}  {status_label(memory):<8}  {day.isoformat()}  "
        f"recalls={memory.recall_count}  {one_line(memory.text)}"
    )


def scored_row(scored: ScoredMemory) -> str:
    """A recall line: the score with two decimals, then :func:`memory_row`.

    Args:
        scored: the scored memory.

    Returns:
        The line.
    """
    score = "  new" if scored.score is None else f"{scored.score:.2f}"
    return f"{score}  {memory_row(scored.memory)}"


def learning_row(learning: Learning) -> str:
    """One learning line: ``lrn_…  active    text`` (the whole text, on one line)."""
    return f"{learning.id}  {learning.state:<9} {' '.join(learning.text.split())}"


def scored_learning_row(scored: ScoredLearning) -> str:
    """A recall's learning line: the score with two decimals (``  new`` unscored), then
    :func:`learning_row` (docs/reference.md#learnings-in-recall)."""
    score = "  new" if scored.score is None else f"{scored.score:.2f}"
    return f"{score}  {learning_row(scored.learning)}"


def memory_block(memory: Memory) -> str:
    """Every field of one memory, one per line, then its full text indented.

    Args:
        memory: the memory.

    Returns:
        The block, without a trailing newline.
    """
    fields: list[tuple[str, object]] = [
        ("id", memory.id),
        ("agent", memory.agent_id),
        ("kind", memory.kind),
        ("date", memory.date),
        ("status", status_label(memory)),
        ("tags", ", ".join(memory.tags) or None),
        (
            "metadata",
            ", ".join(f"{key}={json.dumps(value)}" for key, value in memory.metadata.items())
            or None,
        ),
        ("archive reason", memory.archive_reason),
        ("archived at", memory.archived_at),
        ("expires at", memory.expires_at),
        ("supersedes", memory.supersedes),
        ("superseded by", memory.superseded_by),
        ("run", memory.run_id),
        ("task", memory.task_key),
        ("saved by agent", memory.saved_by_agent_id),
        ("edited by person", memory.edited_by_person_id),
        ("erased by", memory.erased_by),
        ("erased at", memory.erased_at),
        ("erase reason", memory.erase_reason),
        ("recall count", memory.recall_count),
        ("last recalled at", memory.last_recalled_at),
        ("created at", memory.created_at),
        ("updated at", memory.updated_at),
        ("etag", memory.etag),
    ]
    lines = [f"{label + ':':<18}{_value(value)}" for label, value in fields if value is not None]
    lines.append("text:")
    lines.extend(f"  {line}" for line in lines_of(memory.text))
    return "\n".join(lines)


def audit_row(record: AuditRecord) -> str:
    """One history line: when, action, actor, reason, and a ``create``'s evidence
    (on an indented line below, line breaks shown as ``⏎``).

    Args:
        record: the audit record.

    Returns:
        The line.
    """
    actor = f"{record.actor_type}:{record.actor_id}" if record.actor_id else record.actor_type
    line = f"{_value(record.at)}  {record.action:<10}  {actor}"
    if record.reason:
        line = f"{line}  reason={record.reason}"
    appended = record.after.get("line") if isinstance(record.after, dict) else None
    if record.action == "append" and appended:
        line = f"{line}\n    line: {appended}"
    if record.evidence:
        line = f"{line}\n    evidence: {record.evidence.replace(chr(10), ' ⏎ ')}"
    return line


def _value(value: object) -> str:
    """Datetimes as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC); everything else as ``str``."""
    if isinstance(value, dt.datetime):
        return _utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def _utc(value: dt.datetime) -> dt.datetime:
    """The same instant in UTC; a naive value (not sent by a conforming server) is taken as UTC."""
    if value.utcoffset() is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)
