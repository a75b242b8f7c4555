"""Word-level diffs of a memory's text for its history timeline (docs/reference.md#4-states audit
before/after, §13), with the standard library's ``difflib``."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

_TOKENS = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class DiffPart:
    """A run of text that is the same, deleted or inserted."""

    kind: Literal["same", "del", "ins"]
    text: str


def word_diff(before: str, after: str) -> list[DiffPart]:
    """The parts of ``before`` -> ``after``, word by word (white space kept as is).

    Adjacent parts of one kind are merged, so a replaced phrase reads as one
    deletion followed by one insertion.
    """
    old, new = _TOKENS.findall(before), _TOKENS.findall(after)
    parts: list[DiffPart] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            _add(parts, "same", "".join(old[i1:i2]))
            continue
        if tag in ("replace", "delete"):
            _add(parts, "del", "".join(old[i1:i2]))
        if tag in ("replace", "insert"):
            _add(parts, "ins", "".join(new[j1:j2]))
    return parts


def _add(parts: list[DiffPart], kind: Literal["same", "del", "ins"], text: str) -> None:
    if not text:
        return
    if parts and parts[-1].kind == kind:
        parts[-1] = DiffPart(kind, parts[-1].text + text)
    else:
        parts.append(DiffPart(kind, text))
