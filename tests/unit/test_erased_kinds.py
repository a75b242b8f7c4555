"""The erasure page names what was deleted in a person's words, for every kind of item
the table holds (docs/issues.md#issue-42-item-7)."""

from __future__ import annotations

import re

from chalicelib.storage import keys
from chalicelib.web.views.lifecycle import ERASED_KINDS, erased_kinds


def test_every_partition_of_the_table_has_a_persons_words() -> None:
    documented = set(re.findall(r"^\| [^|]+ \| ``([A-Z]+)#", keys.__doc__ or "", re.MULTILINE))
    assert documented >= {"MEMORY", "VETO", "WORKSPACE", "LEARNINGS"}  # the table was read
    assert documented - {"KVNEW", "UPGRADE"} <= set(ERASED_KINDS)  # never an owner's


def test_counts_are_shown_in_words_most_first_and_unknown_kinds_named() -> None:
    shown = erased_kinds(
        {"WORKSPACE": 1, "VETO": 1, "MEMORY": 12, "TOKEN": 2, "TOKENID": 2, "X": 1}
    )
    assert shown[0] == ("facts and day logs", 12)
    assert ("tokens (two records each)", 4) in shown
    assert ("other records (X)", 1) in shown
    assert not any(label.isupper() for label, _ in shown)
