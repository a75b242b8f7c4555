"""Parity of the vendored cl100k_base (tiktoken + chalicelib/data/cl100k_base.tiktoken)
with bpe-openai, the tokenizer the service used before (docs/conventions.md#rule-12): the same
token ids, and the same counts through ``Cl100kTokenCounter``, on a varied corpus."""

from __future__ import annotations

import random
import unicodedata
from typing import Any

import bpe_openai
import pytest

from chalicelib.services.recall.tokens import Cl100kTokenCounter, Encoding, load_cl100k

CODE = [
    "def count(self, text: str) -> int:\n    return sum(len(p) for p in pieces(text))\n",
    "for (let i = 0; i < xs.length; i++) { total += xs[i] * 2; }",
    'SELECT id, "status" FROM memories WHERE agent_id = $1 AND ttl > now();',
    'fn main() {\n\tprintln!("{:?}", vec![1, 2, 3]);\n}\n',
    "#include <stdio.h>\r\nint main(void) { return 0; }\r\n",
    "curl -sS -X POST https://api.example.com/v1/items?limit=50&page=2 -H 'Accept: */*'",
    "kubectl -n prod rollout restart deploy/billing-api && kubectl get pods -w",
    "x = {'a': [1, 2.5e-3, None], \"b\": (True, False)}  # noqa: E501",
    '<div class="card"><span>&nbsp;Total:&nbsp;42&euro;</span></div>',
    '    if err != nil {\n        return fmt.Errorf("open %s: %w", path, err)\n    }',
]
WORDS = [
    "deploy",
    "the",
    "billing",
    "service",
    "on",
    "Tuesdays",
    "don't",
    "I'LL",
    "we're",
    "naïve",
    "café",
    "Straße",
    "résumé",
    "Ångström",
    "über",
    "façade",
    "coöperate",
    "咖啡",
    "東京都",
    "こんにちは",
    "서울",
    "日本語のテキスト",
    "中文字符串",
    "Привет",
    "мир",
    "Ελληνικά",
    "עברית",
    "العربية",
    "हिन्दी",
    "ภาษาไทย",
    "Tiếng Việt",
    "42",
    "1999",
    "3.14159",
    "0x1F",
    "1e-9",
    "v2.4.6",
    "2026-11-30T12:00:00Z",
    "🎉",
    "👍🏽",
    "👨\u200d👩\u200d👧\u200d👦",
    "🇫🇷",
    "🏳️\u200d🌈",
    "❤️",
    "∑",
    "→",
    "≠",
    "<|endoftext|>",
    "<|fim_prefix|>",
    "snake_case_name",
    "camelCaseName",
    "kebab-case",
    "https://example.com/a?b=c#d",
    "user@example.com",
    "C:\\Users\\ana\\file.txt",
]
EMOJI = ["🎉", "👍🏽", "👨\u200d👩\u200d👧\u200d👦", "🇫🇷", "🏳️\u200d🌈", "❤️", "∑", "→", "≠"]
ACCENTED = ["naïve", "café", "Straße", "résumé", "Ångström", "über", "façade", "coöperate"]
GAPS = [" ", "  ", "   ", "\t", "\n", "\r\n", " \n ", "\n\n", "\u00a0", "\u3000", ", ", ". ", "!? "]


def corpus() -> list[str]:
    """1,200 deterministic strings: code, CJK, emoji, whitespace runs, accents
    (composed and decomposed), long words, digits, and mixtures of them."""
    rng = random.Random("pinework-cl100k-parity")
    texts: list[str] = [*CODE, "", " ", "\n", "a", "ab"]
    while len(texts) < 1_200:
        kind = len(texts) % 8
        if kind == 0:  # mixed prose
            texts.append(
                "".join(rng.choice(WORDS) + rng.choice(GAPS) for _ in range(rng.randint(1, 40)))
            )
        elif kind == 1:  # CJK runs without spaces
            texts.append(
                "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(rng.randint(1, 400)))
            )
        elif kind == 2:  # emoji runs, with skin tones and joiners
            texts.append("".join(rng.choice(EMOJI) for _ in range(rng.randint(1, 60))))
        elif kind == 3:  # whitespace runs around words
            texts.append(
                "".join(
                    rng.choice(GAPS) * rng.randint(1, 30) + rng.choice(WORDS)
                    for _ in range(rng.randint(1, 10))
                )
            )
        elif kind == 4:  # accents, decomposed (NFD) half the time
            text = " ".join(rng.choice(ACCENTED) for _ in range(rng.randint(1, 20)))
            texts.append(unicodedata.normalize("NFD", text) if rng.random() < 0.5 else text)
        elif kind == 5:  # long words and long digit runs
            letters = "abcdefghijklmnopqrstuvwxyzäöüß"
            word = "".join(rng.choice(letters) for _ in range(rng.randint(50, 900)))
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 200)))
            texts.append(f"{word} {digits}")
        elif kind == 6:  # code with random edits
            snippet = rng.choice(CODE)
            cut = rng.randint(0, len(snippet))
            texts.append(snippet[:cut] + rng.choice(WORDS) + snippet[cut:])
        else:  # random code points from many blocks
            blocks = [
                (0x20, 0x7E),
                (0xA0, 0x24F),
                (0x370, 0x6FF),
                (0x900, 0xE7F),
                (0x1F300, 0x1FAFF),
            ]
            texts.append(
                "".join(chr(rng.randint(*rng.choice(blocks))) for _ in range(rng.randint(1, 120)))
            )
    return texts


@pytest.fixture(scope="module")
def ours() -> Encoding:
    return load_cl100k()


@pytest.fixture(scope="module")
def reference() -> Any:
    return bpe_openai.get_encoding("cl100k_base")


def test_the_corpus_is_varied_and_large_enough() -> None:
    texts = corpus()
    assert len(texts) >= 1_000
    assert any(len(text) > 900 for text in texts)
    assert any("\u3000" in text or "\t" * 5 in text for text in texts)
    assert any(unicodedata.normalize("NFC", text) != text for text in texts)


def test_token_ids_match_bpe_openai(ours: Encoding, reference: Any) -> None:
    mismatches = [
        text for text in corpus() if ours.encode_ordinary(text) != reference.encode_ordinary(text)
    ]
    assert mismatches == []


def test_counts_match_bpe_openai_through_the_counter(reference: Any) -> None:
    counter = Cl100kTokenCounter()
    texts = corpus()
    ours_counts = [counter.count(text) for text in texts]
    assert ours_counts == [len(reference.encode_ordinary(text)) for text in texts]
    assert sum(ours_counts) > 50_000
