"""Parity of the hand-written WordPiece tokenizer (``chalicelib/services/recall/wordpiece.py``)
with transformers' classic Python ``BertTokenizer`` (``BertTokenizerLegacy`` in
transformers 5; docs/conventions.md#rule-12) over the shipped MiniLM vocabulary: the same ids on
a varied corpus of more than a thousand strings, with literal special tokens read as
plain text (the one deliberate difference, see the module doc)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from chalicelib.services.recall.embedding import VOCAB_FILE
from chalicelib.services.recall.wordpiece import MAX_TOKENS, WordPieceTokenizer, basic_words

transformers_bert = pytest.importorskip("transformers.models.bert.tokenization_bert_legacy")

SPECIAL = ("[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]")
SENTENCES = [
    "The billing service deploys every Friday at 5 pm from the release branch.",
    "Caroline adopted a guinea pig named Oscar last spring.",
    "Use pnpm, not npm, in the web/ folder; the lockfile is pnpm-lock.yaml.",
    "Melanie goes camping in the mountains with her kids every summer.",
    "The staging database is Postgres 15 on port 5433 (not 5432).",
    "Priya prefers short pull requests with one reviewer.",
    "Don't run the migration on Mondays: the reporting job locks the table.",
    "John's team won the regional basketball final in March 2023.",
    "The API key for the weather service lives in the vault under /ops/weather.",
    "We agreed to keep the feature flag until the Q3 review.",
    "Gina opened an online clothing store after losing her job.",
    "The checkout times out when customers pay by card; investigate the Stripe webhook.",
    "Nate's favourite game is Xenoblade Chronicles, and he streams on weekends.",
    "The on-call rotation changes on Tuesday mornings at 09:00 UTC.",
    "Build artifacts older than 30 days are deleted by the nightly cleanup.",
    "Joanna wrote a screenplay about a family reunion in Montréal.",
    "Ask before force-pushing to main — it breaks the mirror.",
    "The customer's invoice #4821 was refunded on 2024-02-11.",
    "Maria volunteers at the homeless shelter twice a month.",
    "Tim is learning the violin and practises after dinner.",
]
FRAGMENTS = {
    "code": [
        "def f(x):\n\treturn x ** 2  # square",
        "if (a && b) { return a->next; }",
        "SELECT * FROM users WHERE id = 42;",
        '{"key": "value", "n": [1, 2.5e-3]}',
        "git commit -m 'fix: handle\\ttabs'",
        "for i in range(10):\n    print(i)",
        "export PATH=$HOME/bin:$PATH",
        "curl -X POST https://api.example.com/v1/items?x=1&y=2",
        "a_b_c = foo.bar()[0]",
        '<div class="x">Hello</div>',
        "x := <-ch // go",
        'fn main() { println!("{}", 1); }',
        "kubectl get pods -n prod\t|\tgrep api",
        "C:\\Users\\me\\file.txt",
        "~/.config/pinework.toml",
        "user@example.com",
        "v1.2.3-rc.1+build.5",
        "0x7fffffff",
        "#!/usr/bin/env bash",
        "#include <stdio.h>\r\nint main(void) { return 0; }\r\n",
    ],
    "cjk": [
        "中文测试",
        "我喜欢吃苹果。",
        "東京は日本の首都です",
        "ひらがなとカタカナ",
        "한국어 문장입니다",
        "漢字かな交じり文",
        "\uf900\uf901 compat",
        "\U00020000\U00020001 ext-B",
        "中文English混合",
        "全角ＡＢＣ１２３",
        "「引用」『二重』",
        "ｶﾀｶﾅ半角",
        "서울에서 만나요",
    ],
    "emoji": [
        "🎉 party",
        "👍🏽 ok",
        "👨\u200d👩\u200d👧\u200d👦 family",
        "🇧🇷🇺🇸 flags",
        "❤️ love",
        "☕️ coffee",
        "🚀🔥💯",
        "😀😃😄😁",
        "✔︎ done",
        "🧑\u200d💻 dev",
        "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f scotland",
    ],
    "accents": [
        "café naïve résumé",
        "Crème Brûlée",
        "São Paulo, Açaí",
        "Zürich Straße",
        "cafe\u0301 decomposed",
        "ÉCOLE NORMALE",
        "Ångström \u212b",
        "İstanbul ıi",  # noqa: RUF001 (look-alikes on purpose)
        "ΟΔΟΣ σοφία",
        "Ελληνικά",
        "Привет, мир!",
        "Ёлка",
        "ﬁnance ﬂow ligatures",
        "Dvořák Łódź",
        "ñandú pingüino",
        "A\u030a double mark",
        "x\u0302\u0323 stacked",
    ],
    "scripts": [
        "مرحبا بالعالم",
        "שלום עולם",
        "नमस्ते दुनिया",
        "สวัสดีครับ",
        "Γειά σου",  # noqa: RUF001 (look-alikes on purpose)
        "ქართული",
        "Հայերեն",
        "ᚠᚢᚦ runes",
        "𝐁𝐨𝐥𝐝 math",  # noqa: RUF001 (look-alikes on purpose)
        "①②③ ⅷ ½",
    ],
    "space": [
        "a\tb",
        "line1\nline2",
        "win\r\nline",
        "a\x0bb\x0cc",
        "nb\u00a0sp",
        "en\u2002em\u2003thin\u2009",
        "ideo\u3000space",
        "ls\u2028ps\u2029",
        "nel\u0085x",
        "  lead and trail  ",
        "\t\tindented",
        "multi\n\n\nblank",
        "mixed \t \n  gaps",
        "\u1680ogham",
        "\u202fnnbsp",
        "\r\r\rreturns",
    ],
    "control": [
        "nul\x00byte",
        "bell\x07",
        "esc\x1b[31mred\x1b[0m",
        "del\x7f",
        "c1\x80\x9f",
        "zw\u200bsp",
        "zwj\u200dx",
        "bom\ufeffx",
        "rtl\u202eevil\u202c",
        "soft\u00adhyphen",
        "pua\ue000\uf8ff",
        "unassigned\u0378\U000e0001",
        "repl\ufffdchar",
        "lrm\u200ex",
        "wj\u2060x",
        "tag\U000e0041",
        "fs\x1cgs\x1drs\x1eus\x1f",
        "vs16\ufe0f",
        "combining\u0301 alone \u0301",
    ],
    "punctuation": [
        "«guillemets» „quotes“",
        "em—dash – en",  # noqa: RUF001 (look-alikes on purpose)
        "ellipsis… ¿qué? ¡sí!",
        "€100 £5 ¥3 $4",
        "§ ¶ † ‡ •",
        "a/b\\c|d",
        "100% (approx.)",
        "C++ & C#",
        "^caret `tick` ~tilde",
        "¬¦¨¯´¸",  # noqa: RUF001 (look-alikes on purpose)
        "→ ⇒ ∀ ∃ ≤",
        "【注意】※",
    ],
    "special": [
        "[CLS] start",
        "mask [MASK] here",
        "[SEP]",
        "[UNK] token",
        "[PAD]",
        "[mask] lower",
        "[CLS][SEP]",
        "x[UNK]y",
    ],
    "long": [
        "a" * 101,
        "a" * 100,
        "supercalifragilisticexpialidocious" * 3,
        "x" * 99,
        "pneumonoultramicroscopicsilicovolcanoconiosis",
        "ab" * 60 + " short",
        "https://example.com/" + "path/" * 30,
        "é" * 101,
    ],
}
SEPARATORS = [" ", "\t", "\n", "\r\n", "  ", " \t ", "\u00a0", "", ". ", "\n\n"]


def corpus() -> list[str]:
    """1,200 strings (deterministic): every fragment, then random mixes of sentences
    and fragments with varied separators, case and multi-line layouts."""
    shuffler = random.Random(17)
    texts = list(SENTENCES) + [text for pool in FRAGMENTS.values() for text in pool]
    pools = list(FRAGMENTS.values())
    while len(texts) < 1200:
        parts = [shuffler.choice(SENTENCES)] if shuffler.random() < 0.6 else []
        parts += [shuffler.choice(shuffler.choice(pools)) for _ in range(shuffler.randint(1, 4))]
        shuffler.shuffle(parts)
        text = shuffler.choice(SEPARATORS).join(parts)
        if shuffler.random() < 0.2:
            text = text.upper() if shuffler.random() < 0.5 else text.title()
        if shuffler.random() < 0.15:  # a multi-line fact or task
            text = "\n".join(f"- {part}" for part in parts)
        if shuffler.random() < 0.05:  # a long text: truncation at 256 pieces
            text = " ".join([text] * 40)
        texts.append(text)
    return texts


CORPUS = corpus()


@pytest.fixture(scope="module")
def ours() -> WordPieceTokenizer:
    return WordPieceTokenizer(VOCAB_FILE.read_text(encoding="utf-8").split("\n"))


@pytest.fixture(scope="module")
def reference() -> object:
    return transformers_bert.BertTokenizerLegacy(vocab_file=str(VOCAB_FILE), do_lower_case=True)


def plain_text_ids(reference: object) -> Callable[[str], list[int]]:
    """The classic BertTokenizer's ids with no special-token split (its BasicTokenizer,
    then its WordpieceTokenizer; what ``split_special_tokens=True`` means, a flag the
    transformers 5 legacy class ignores)."""
    basic = reference.basic_tokenizer  # type: ignore[attr-defined]
    wordpiece = reference.wordpiece_tokenizer  # type: ignore[attr-defined]

    def ids(text: str) -> list[int]:
        pieces = [piece for word in basic.tokenize(text) for piece in wordpiece.tokenize(word)]
        return [
            reference.cls_token_id,  # type: ignore[attr-defined]
            *reference.convert_tokens_to_ids(pieces),  # type: ignore[attr-defined]
            reference.sep_token_id,  # type: ignore[attr-defined]
        ]

    return ids


def test_the_corpus_is_varied() -> None:
    assert len(CORPUS) >= 1000
    assert sum("\t" in text for text in CORPUS) >= 50
    assert sum("\n" in text for text in CORPUS) >= 100
    assert sum(any(s in text for s in SPECIAL) for text in CORPUS) >= 50
    assert sum(any(0x3040 <= ord(c) <= 0x30FF for c in text) for text in CORPUS) >= 50  # kana
    assert sum(any(0xAC00 <= ord(c) <= 0xD7A3 for c in text) for text in CORPUS) >= 20  # Hangul
    assert sum("\u200d" in text for text in CORPUS) >= 20  # emoji ZWJ sequences
    assert sum(len(text) > 2000 for text in CORPUS) >= 20  # past 256 word pieces


def test_same_ids_as_the_classic_bert_tokenizer(
    ours: WordPieceTokenizer, reference: object
) -> None:
    expected = plain_text_ids(reference)
    differing = [text for text in CORPUS if ours.encode(text, 10**9) != expected(text)]
    assert differing == []


def test_same_ids_as_the_full_class_where_no_special_token_is_written(
    ours: WordPieceTokenizer, reference: object
) -> None:
    plain = [text for text in CORPUS if not any(s in text for s in SPECIAL)]
    encode = reference.encode  # type: ignore[attr-defined]
    differing = [text for text in plain if ours.encode(text, 10**9) != encode(text)]
    assert len(plain) >= 900 and differing == []


def test_truncated_at_256_pieces_like_transformers(
    ours: WordPieceTokenizer, reference: object
) -> None:
    expected = plain_text_ids(reference)
    long = [text for text in CORPUS if len(expected(text)) > MAX_TOKENS]
    assert len(long) >= 20
    for text in long:
        full = expected(text)
        assert ours.encode(text) == [*full[: MAX_TOKENS - 1], full[-1]]


def test_special_token_literals_are_plain_text(ours: WordPieceTokenizer) -> None:
    assert ours.encode("[MASK]") == ours.encode("[ mask ]")
    assert ours.unk_id not in ours.encode("x [UNK] y")
    assert ours.encode("[CLS]").count(ours.cls_id) == 1


def test_line_breaks_and_tabs_are_spaces_and_controls_vanish() -> None:
    assert basic_words("a\tb\nc\r\nd") == ["a", "b", "c", "d"]
    assert basic_words("naïve\tcafé") == ["naive", "cafe"]
    assert basic_words("bell\x07 pua\ue000x un\u0378y") == ["bell", "puax", "uny"]
    assert basic_words("zw\u200bj") == ["zwj"]
