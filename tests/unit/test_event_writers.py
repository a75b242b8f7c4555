"""Every history record is written with its change event (docs/reference.md#change-events,
docs/issues.md#issue-47-item-1): the Put of a memory's history record is built only by
``storage/events.audited`` (``appended`` for a day line), which add the event's Puts,
and each learning transaction that writes a history record writes its event."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import REPO


def calls(pattern: str) -> dict[str, int]:
    """Files under chalicelib/ and how often ``pattern`` occurs in each."""
    found: dict[str, int] = {}
    for path in sorted(Path(REPO, "chalicelib").rglob("*.py")):
        count = len(re.findall(pattern, path.read_text(encoding="utf-8")))
        if count:
            found[str(path.relative_to(REPO))] = count
    return found


def test_a_memory_history_record_is_put_only_with_its_event() -> None:
    assert calls(r"\baudit_to_item\(") == {
        "chalicelib/storage/events.py": 2,  # audited, appended
        "chalicelib/storage/items.py": 1,  # its definition
    }


def test_each_learning_history_record_goes_with_an_event() -> None:
    source = Path(REPO, "chalicelib/storage/learnings.py").read_text(encoding="utf-8")
    assert source.count("put_new(_audit_item(") == source.count("learning_event(") == 2
