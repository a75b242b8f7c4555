"""Look-alike text (docs/issues.md#issue-14): the hand-written TR39 skeleton and default-ignorable
set, checked against libraries (house rule: a stand-in gets a parity test) — the
``confusables`` package (which ships the same Unicode data file) and ``regex``'s
``Default_Ignorable_Code_Point`` property."""

from __future__ import annotations

import importlib.resources
import random
import unicodedata

import confusables
import pytest
import regex

from chalicelib.models.memory import RESERVED_ARCHIVE_REASONS
from chalicelib.services.lookalike import (
    CONFUSABLES_FILE,
    ascii_visible_form,
    is_default_ignorable,
    reserved_form,
    skeleton,
    visible_form,
)
from chalicelib.services.memory.reasons import is_reserved_reason


def _unicode_mappings() -> dict[str, str]:
    """The source -> prototype lines of the vendored confusables.txt."""
    mappings = {}
    for line in CONFUSABLES_FILE.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) >= 3:
            mappings[chr(int(fields[0], 16))] = "".join(chr(int(p, 16)) for p in fields[1].split())
    return mappings


MAPPINGS = _unicode_mappings()


def test_the_vendored_data_is_the_file_the_library_ships() -> None:
    shipped = importlib.resources.files("confusables") / "assets" / "confusables.txt"
    assert CONFUSABLES_FILE.read_bytes() == shipped.read_bytes()
    assert len(MAPPINGS) == 6311  # "# total: 6311"


def test_every_prototype_is_confusable_with_its_source_for_the_library() -> None:
    disagreements = [
        (source, target)
        for source, target in MAPPINGS.items()
        if target not in confusables.confusable_characters(source)
    ]
    assert disagreements == []


def test_skeleton_maps_each_source_to_its_prototype() -> None:
    # TR39: NFD, each code point to its prototype, NFD again.
    for source, target in MAPPINGS.items():
        if unicodedata.normalize("NFD", source) == source:
            assert skeleton(source) == unicodedata.normalize("NFD", target), (source, target)


def _spoofs(word: str) -> list[str]:
    """``word`` with one letter replaced by each code point that Unicode maps to it."""
    by_prototype: dict[str, list[str]] = {}
    for source, target in MAPPINGS.items():
        by_prototype.setdefault(target, []).append(source)
    spoofs = []
    for position, letter in enumerate(word):
        for source in by_prototype.get(letter, []):
            spoofs.append(word[:position] + source + word[position + 1 :])
    return spoofs


@pytest.mark.parametrize("word", sorted(RESERVED_ARCHIVE_REASONS))
def test_every_single_letter_spoof_of_a_reserved_reason_agrees_with_the_library(
    word: str,
) -> None:
    spoofs = _spoofs(word) + _spoofs(word.upper())
    assert len(spoofs) > 300
    ours = {spoof for spoof in spoofs if reserved_form(spoof) == reserved_form(word)}
    theirs = {spoof for spoof in spoofs if confusables.is_confusable(spoof, word)}
    assert ours == set(spoofs)
    assert theirs == set(spoofs)


def test_what_the_skeleton_calls_confusable_the_library_does_too() -> None:
    """On near-miss strings (one letter changed, dropped, doubled or re-cased), every
    pair with equal forms is confusable for the library as well (ours is the stricter
    TR39 relation; the library adds accents, case and leetspeak)."""
    rng = random.Random(14)
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    for word in sorted(RESERVED_ARCHIVE_REASONS):
        near = set()
        for _ in range(2000):
            position = rng.randrange(len(word))
            change = rng.choice(["replace", "drop", "double", "upper"])
            if change == "replace":
                near.add(word[:position] + rng.choice(letters) + word[position + 1 :])
            elif change == "drop":
                near.add(word[:position] + word[position + 1 :])
            elif change == "double":
                near.add(word[:position] + word[position] + word[position:])
            else:
                near.add(word[:position] + word[position].upper() + word[position + 1 :])
        equal = [text for text in near if reserved_form(text) == reserved_form(word)]
        assert equal, "some near miss (a case change) has the word's form"
        assert all(confusables.is_confusable(text, word) for text in equal)
        assert "vetoes" not in equal and "superseder" not in equal


def test_default_ignorables_match_the_unicode_property() -> None:
    prop = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    differing = [
        hex(point)
        for point in range(0x110000)
        if is_default_ignorable(chr(point)) != bool(prop.match(chr(point)))
    ]
    assert differing == []


@pytest.mark.parametrize(
    "reason",
    [
        "superseded",
        "Superseded\u200b",
        "SUPERSEDED",
        " superseded ",
        "supers\u00adeded",
        "Supersed\u0435d",  # Cyrillic е
        "".join(chr(ord(c) + 0xFEE0) for c in "superseded"),  # full width
        "vetoed",
        "v\u0435toed",
        "vet\u043eed",  # Cyrillic о
        "vet0ed",
        "\U0001d42f\U0001d41e\U0001d42d\U0001d428\U0001d41e\U0001d41d",  # mathematical bold
        "ve\u2060toed",  # word joiner
        "v\ufe0fetoed",  # variation selector
    ],
)
def test_look_alikes_of_reserved_reasons_are_reserved(reason: str) -> None:
    assert is_reserved_reason(reason)


@pytest.mark.parametrize(
    "reason", ["stale", "superseded by mem_1", "vetoes", "vetted", "not vetoed", "expired"]
)
def test_other_reasons_are_not_reserved(reason: str) -> None:
    assert not is_reserved_reason(reason)


def test_visible_forms() -> None:
    assert visible_form("\uff21\uff2b\uff29\uff21\u200bkey") == "AKIAkey"  # full-width AKIA
    assert visible_form("plain") == "plain"
    assert ascii_visible_form("\uff21\uff2b\uff29\uff21\u200b\uff19") == "AKIA9"
    assert ascii_visible_form("日本語 \uff53\uff4b\uff0d") == "日本語 sk-"
    # A character whose NFKC form is not ASCII is kept as it is (no growth).
    assert ascii_visible_form("\ufdfa") == "\ufdfa"
    assert len(unicodedata.normalize("NFKC", "\ufdfa")) == 18
