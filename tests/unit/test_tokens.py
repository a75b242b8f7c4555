"""Tests for chalicelib.services.recall.tokens: real cl100k counts, offline (SPEC §5)."""

import random
from collections.abc import Callable
from typing import Any

import bpe_openai
import pytest

from chalicelib.services.recall.tokens import Cl100kTokenCounter, TokenCounter


@pytest.fixture(scope="module")
def counter() -> Cl100kTokenCounter:
    return Cl100kTokenCounter()


@pytest.fixture(scope="module")
def encoding() -> Any:
    return bpe_openai.get_encoding("cl100k_base")


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("hello world", 2),
        ("Hello, world!", 4),
        ("The quick brown fox jumps over the lazy dog.", 10),
        ("   ", 1),
    ],
)
def test_counts_known_strings(counter: Cl100kTokenCounter, text: str, tokens: int) -> None:
    assert counter.count(text) == tokens


def test_counter_satisfies_the_protocol(counter: Cl100kTokenCounter) -> None:
    tokens: TokenCounter = counter
    assert tokens.count("hello world") == 2


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("你好世界", 5), ("こんにちは世界", 4), ("🎉🎉🎉", 9), ("👨\u200d👩\u200d👧\u200d👦", 18)],
)
def test_cjk_and_emoji_cost_more_than_characters_over_four(
    counter: Cl100kTokenCounter, text: str, tokens: int
) -> None:
    # The characters / 4 rule of thumb undercounts these scripts several times over.
    assert counter.count(text) == tokens
    assert tokens > 2 * len(text) / 4


def test_special_token_text_is_counted_as_ordinary_text(counter: Cl100kTokenCounter) -> None:
    # As a control token it would be 1; as text it is "<", "|", "endo", "ft", "ext", "|", ">".
    assert counter.count("<|endoftext|>") == 7
    assert counter.count("before <|fim_prefix|> after <|endofprompt|>") > 3


def test_lone_surrogate_does_not_raise(counter: Cl100kTokenCounter) -> None:
    assert counter.count("a\ud83db") >= 2


def test_counting_matches_the_encoding_on_long_mixed_text(
    counter: Cl100kTokenCounter, encoding: Any
) -> None:
    # Over 50,000 characters the counter works in pieces; the total must not change.
    rng = random.Random("pinework-tokens")
    words = ["deploy", "the", "billing", "service", "42", "1999", "naïve", "咖啡", "🎉", "x_y"]
    gaps = [" ", "  ", "\n", " \n ", "\t", ", ", "!! ", "\n\n", "   "]
    text = "".join(rng.choice(words) + rng.choice(gaps) for _ in range(40_000))
    assert len(text) > 150_000
    assert counter.count(text) == len(encoding.encode_ordinary(text))


def test_very_long_text_without_spaces_does_not_raise(counter: Cl100kTokenCounter) -> None:
    # bpe-openai alone rejects 1,000,000+ characters and 200,000+ tokens.
    assert counter.count("x" * 1_200_000) > 100_000
    assert counter.count("🎉" * 100_000) == 300_000


def test_encoding_is_loaded_lazily_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real: Callable[[str], Any] = bpe_openai.get_encoding

    def counting_get_encoding(name: str) -> Any:
        calls.append(name)
        return real(name)

    monkeypatch.setattr(bpe_openai, "get_encoding", counting_get_encoding)
    fresh = Cl100kTokenCounter()
    assert calls == []
    assert fresh.count("hello world") == 2
    assert fresh.count("hello again") == 2
    assert calls == ["cl100k_base"]
