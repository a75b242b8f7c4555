"""Step 3 of the sameness judgment: ``meaning.read_alike`` (docs/reference.md#review-step-1)."""

from __future__ import annotations

import pytest

from chalicelib.services.review.details import Token, shape
from chalicelib.services.review.meaning import edits, read_alike, typo_pair


def reading(a: str, b: str):  # type: ignore[no-untyped-def]
    return read_alike(shape(a), shape(b))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a fronted phrase, a clause moved to the end
        ("Every Friday the audit log is exported", "The audit log is exported every Friday"),
        # "X is Y" read as "Y is X", with a phrase moved
        (
            "Rosa is the release captain for the mobile app this sprint",
            "This sprint, the release captain for the mobile app is Rosa",
        ),
        # a passive read as its active
        ("The billing cron was written by Tomas", "Tomas wrote the billing cron"),
        # "only" anywhere
        ("Invoices are exported to the archive only", "Invoices are only exported to the archive"),
    ],
)
def test_the_same_words_in_an_order_that_keeps_the_roles(a: str, b: str) -> None:
    found = reading(a, b)
    assert found.complete and found.same_order


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Kofi mentors Lin on the data team", "Lin mentors Kofi on the data team"),
        (
            "Logs are shipped from the edge to the core",
            "Logs are shipped from the core to the edge",
        ),
        ("Ruth is Omar's deputy", "Omar is Ruth's deputy"),
        ("The sync job is run before the backup", "The backup is run before the sync job"),
        ("Ines is managed by Paul", "Ines manages Paul"),
    ],
)
def test_the_same_words_with_roles_swapped(a: str, b: str) -> None:
    found = reading(a, b)
    assert found.complete and not found.same_order and found.roles_swapped


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a count and a thing trade places: no two values of one kind exchanged
        (
            "The cache cluster in eu-west-1 has 6 shards",
            "There are 6 shards in the eu-west-1 cache cluster",
        ),
        # two pairs of words moved at once
        (
            "The web tier runs in Frankfurt and the batch tier in Dublin",
            "The batch tier runs in Dublin and the web tier in Frankfurt",
        ),
    ],
)
def test_an_order_no_reading_explains_is_reordered_not_swapped(a: str, b: str) -> None:
    found = reading(a, b)
    assert found.complete and not found.same_order
    assert found.reordered and not found.roles_swapped


def test_a_misspelt_frame_word_or_inflected_word_still_pairs() -> None:
    # "prefers" stands outside the order on both sides, misspelt or not
    frame = reading("The data team prefers Parquet", "The data team prefrs Parquet")
    assert frame.same_order and frame.typos
    # "approves" is a real word with an ending: "aproved" is its misspelling (in a passive)
    inflected = reading("Priya approves every refund", "Every refund is aproved by Priya")
    assert inflected.complete and inflected.same_order and inflected.typos
    # an ending English would not write makes no real word: "acess" is not "aces" + "s"
    assert typo_pair(shape("acess").tokens[0], shape("access").tokens[0])
    # two real words with endings are never one misspelt
    assert not typo_pair(shape("lines").tokens[0], shape("limes").tokens[0])


def test_a_particle_written_as_its_own_word_joins_the_closed_word() -> None:
    found = reading("Run the set up script first", "Run the setup script first")
    assert found.complete and found.same_order and found.joined


def test_a_word_written_apart_hyphenated_or_closed() -> None:
    assert reading("The roll-out starts at noon", "The rollout starts at noon").joined
    assert reading("The data base is backed up", "The database is backed up").same_order
    assert reading("Ping the on-call engineer", "Ping the oncall engineer").same_order
    # a short handle is its spelling
    assert not reading("Her handle is kim-ops", "Her handle is kimops").complete


def test_frame_words_are_set_aside() -> None:
    found = reading("The shared drive is called vault-9", "The shared drive, vault-9")
    assert found.complete and found.frame == ("call",)


def test_misspellings() -> None:
    def word(text: str) -> Token:
        return Token(text, "word", text)

    assert typo_pair(word("reciept"), word("receipt"))  # a swap, one real word
    assert typo_pair(word("deploymnt"), word("deployment"))
    assert not typo_pair(word("stale"), word("stable"))  # two real words
    assert not typo_pair(word("east"), word("west"))  # the first letter
    assert not typo_pair(word("prod"), word("dev"))
    assert not typo_pair(word("linker"), word("linter"))  # one letter replaced, short
    assert edits("form", "from") == (1, "swap")
    assert edits("cat", "cart") == (1, "insert")
    assert reading("The reciept is mailed", "The receipt is mailed").typos


def test_a_word_only_one_side_says_is_not_the_same_content() -> None:
    assert not reading("The cache is warmed at boot", "The cache is warmed at boot daily").complete
