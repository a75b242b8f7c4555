"""Tests for chalicelib.services.recall.tokens: real cl100k counts, offline
(docs/reference.md#5-limits).

bpe-openai (the tokenizer used before tiktoken, a dev dependency) is the reference."""

import random
from pathlib import Path
from typing import Any

import bpe_openai
import pytest

from chalicelib.services.recall.tokens import (
    PIECE_MAX_CHARS,
    VOCABULARY_PATH,
    Cl100kTokenCounter,
    Encoding,
    TokenCounter,
    load_cl100k,
    pieces,
)


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
    # Over 1,000 characters the counter works in pieces; the total must not change.
    rng = random.Random("pinework-tokens")
    words = ["deploy", "the", "billing", "service", "42", "1999", "naïve", "咖啡", "🎉", "x_y"]
    gaps = [" ", "  ", "\n", " \n ", "\t", ", ", "!! ", "\n\n", "   "]
    text = "".join(rng.choice(words) + rng.choice(gaps) for _ in range(40_000))
    assert len(text) > 150_000
    assert counter.count(text) == len(encoding.encode_ordinary(text))


def test_very_long_text_without_spaces_does_not_raise(counter: Cl100kTokenCounter) -> None:
    # One pre-token of a million characters would take tiktoken minutes; pieces do not.
    assert counter.count("x" * 1_200_000) > 100_000
    assert counter.count("🎉" * 100_000) == 300_000


def test_encoding_is_loaded_lazily_once() -> None:
    calls: list[str] = []

    def counting_load() -> Encoding:
        calls.append("load")
        return load_cl100k()

    fresh = Cl100kTokenCounter(counting_load)
    assert calls == []
    assert fresh.count("hello world") == 2
    assert fresh.count("hello again") == 2
    assert calls == ["load"]


class RecordingEncoding:
    """The real encoding, remembering the length of every text it was given."""

    def __init__(self, inner: Encoding) -> None:
        self.inner = inner
        self.lengths: list[int] = []

    def encode_ordinary(self, text: str) -> list[int]:
        self.lengths.append(len(text))
        return self.inner.encode_ordinary(text)


def test_a_long_run_without_spaces_reaches_the_encoder_in_capped_pieces(encoding: Any) -> None:
    # tiktoken 0.11 is quadratic on one long pre-token (80,000 CJK characters: 35 s);
    # an 8,000-character CJK run (a whole day log's worth) must arrive in short pieces.
    rng = random.Random("pinework-cjk-run")
    run = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(8_000))
    recording = RecordingEncoding(load_cl100k())
    counter = Cl100kTokenCounter(lambda: recording)
    counted = counter.count(run)
    assert max(recording.lengths) <= PIECE_MAX_CHARS
    assert sum(recording.lengths) == len(run) and len(recording.lengths) >= 8
    # Cut inside one pre-token, each of the 7 cuts may change a merge at its edge.
    whole = len(encoding.encode_ordinary(run))
    assert abs(counted - whole) <= 2 * (len(recording.lengths) - 1)


def test_pieces_cut_before_a_word_and_join_back() -> None:
    text = "alpha beta  gamma delta"
    assert pieces(text, 11) == ["alpha", " beta ", " gamma", " delta"]
    assert "".join(pieces("x" * 25, 10)) == "x" * 25
    assert [len(piece) for piece in pieces("x" * 25, 10)] == [10, 10, 5]


def test_a_vocabulary_file_with_another_hash_is_refused(tmp_path: Path) -> None:
    forged = tmp_path / "cl100k_base.tiktoken"
    forged.write_bytes(VOCABULARY_PATH.read_bytes().replace(b" 0\n", b" 1\n", 1))
    with pytest.raises(ValueError, match="SHA-256"):
        load_cl100k(forged)
