"""The wiki page rules that need no table (docs/reference.md#page-text): slugs made from
titles, tags, and the history's unified diff."""

from __future__ import annotations

import pytest

from chalicelib.errors import InvalidRequest
from chalicelib.services.wiki.pages import check_slug, check_tags, slug_of, text_diff


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("On-call runbook", "on-call-runbook"),
        ("  Ünïcödé — Straße!  ", "unicode-strae"),
        ("API v2: rate limits (draft)", "api-v2-rate-limits-draft"),
        ("word " * 30, "-".join(["word"] * 16)),
    ],
)
def test_a_slug_is_made_from_the_title(title: str, slug: str) -> None:
    made = slug_of(title)
    assert made == slug and len(made) <= 80
    assert check_slug(made) == made


@pytest.mark.parametrize("title", ["日本語", "—", "!!!"])
def test_a_title_with_no_ascii_letter_needs_a_slug(title: str) -> None:
    with pytest.raises(InvalidRequest, match="send a slug"):
        slug_of(title)


@pytest.mark.parametrize("slug", ["", "A", "a_b", "-a", "a-", "a--b", "a b", "a" * 81, "pag_x"])
def test_a_bad_slug_is_refused(slug: str) -> None:
    with pytest.raises(InvalidRequest):
        check_slug(slug)


def test_tags_keep_their_order_and_drop_repeats() -> None:
    assert check_tags(["ops", "on-call", "ops", "a_b"]) == ["ops", "on-call", "a_b"]
    for bad in (["Ops"], ["-x"], [""], ["x" * 41], [f"t{n}" for n in range(11)]):
        with pytest.raises(InvalidRequest):
            check_tags(bad)


def test_the_diff_is_unified_and_empty_when_nothing_changed() -> None:
    old = "# Title\none\ntwo\nthree\n"
    new = "# Title\none\n2\nthree\n"
    diff = text_diff(old, new, before="p.v1", after="p.v2")
    assert diff.splitlines()[:3] == ["--- p.v1", "+++ p.v2", "@@ -1,4 +1,4 @@"]
    assert "-two" in diff.splitlines() and "+2" in diff.splitlines()
    assert text_diff(old, old, before="p.v1", after="p.v2") == ""
