"""Behaviour of the calibrated recall scorer and the numpy MiniLM embedder
(docs/reference.md#8-recall)."""

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from chalicelib.services.recall.cut import Cut
from chalicelib.services.recall.embedding import (
    MAX_STORED_TOKENS,
    SENTENCE_BYTES,
    TOKEN_BYTES,
    MiniLMEmbedder,
    WordPieceTokenizer,
    decode,
    encode,
    is_ours,
    token_signs,
)
from chalicelib.services.recall.relevance import (
    MAX_CLAUSES,
    Candidate,
    Coefficients,
    RelevanceScorer,
    clauses,
)
from chalicelib.services.recall.unrelated import names_unknown

NOW = datetime(2025, 6, 1, tzinfo=UTC)
FACTS = [
    "Caroline adopted a guinea pig named Oscar last spring.",
    "Melanie goes camping in the mountains with her kids every summer.",
    "The deploy pipeline for the billing service runs on Fridays.",
    "John plays basketball for his college team and trains daily.",
]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def scorer(embedder: MiniLMEmbedder) -> RelevanceScorer:
    return RelevanceScorer(embedder)


def candidates(embedder: MiniLMEmbedder, texts: list[str], stored: bool = True) -> list[Candidate]:
    embeddings = embedder.embed(texts) if stored else [None] * len(texts)
    return [
        Candidate(text, NOW - timedelta(days=index), embedding)
        for index, (text, embedding) in enumerate(zip(texts, embeddings, strict=True))
    ]


def test_scores_are_in_range_and_ordered(embedder: MiniLMEmbedder, scorer: RelevanceScorer) -> None:
    scores = scorer.score("What pet does Caroline have?", candidates(embedder, FACTS), NOW)
    assert len(scores) == len(FACTS)
    assert all(0.0 <= value <= 1.0 for value in scores)
    assert max(range(len(FACTS)), key=scores.__getitem__) == 0
    camping = scorer.score("Where does Melanie go camping?", candidates(embedder, FACTS), NOW)
    assert max(range(len(FACTS)), key=camping.__getitem__) == 1


def test_empty_cases(embedder: MiniLMEmbedder, scorer: RelevanceScorer) -> None:
    assert scorer.score("anything", [], NOW) == []
    assert scorer.score("   ", candidates(embedder, FACTS), NOW) == [0.0] * len(FACTS)
    single = scorer.score("billing deploys", candidates(embedder, FACTS[2:3]), NOW)
    assert len(single) == 1 and 0.0 <= single[0] <= 1.0


def test_missing_or_foreign_embeddings_match_stored(
    embedder: MiniLMEmbedder, scorer: RelevanceScorer
) -> None:
    query = "When does the billing deploy run?"
    stored = scorer.score(query, candidates(embedder, FACTS), NOW)
    missing = scorer.score(query, candidates(embedder, FACTS, stored=False), NOW)
    mixed_items = candidates(embedder, FACTS)
    mixed_items[1] = Candidate(mixed_items[1].text, mixed_items[1].created_at, b"\x09old")
    mixed_items[3] = Candidate(mixed_items[3].text, mixed_items[3].created_at, None)
    mixed = scorer.score(query, mixed_items, NOW)
    assert np.allclose(stored, missing, atol=0.02)
    assert np.allclose(stored, mixed, atol=0.02)


def test_deterministic(embedder: MiniLMEmbedder, scorer: RelevanceScorer) -> None:
    items = candidates(embedder, FACTS)
    first = scorer.score("basketball training", items, NOW)
    assert scorer.score("basketball training", items, NOW) == first
    assert RelevanceScorer(embedder).score("basketball training", items, NOW) == first


def test_calibration_shift_is_monotone(embedder: MiniLMEmbedder) -> None:
    base = Coefficients.load()
    # A higher floor (the relative part off) lowers every score and keeps the order.
    absolute = dataclasses.replace(base, cut=Cut(0.006, 0.0, base.cut.floor_if_unrelated))
    raised = dataclasses.replace(base, cut=Cut(0.05, 0.0, base.cut.floor_if_unrelated))
    items = candidates(embedder, FACTS)
    high = RelevanceScorer(embedder, absolute).score("guinea pig", items, NOW)
    low = RelevanceScorer(embedder, raised).score("guinea pig", items, NOW)
    assert all(b > a for a, b in zip(low, high, strict=True))
    assert np.array_equal(np.argsort(low), np.argsort(high))


def test_stored_embedding_is_compact_and_round_trips(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed_matrix(FACTS)
    assert vectors.shape == (len(FACTS), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    packed = embedder.embed(FACTS)
    pieces = [len(embedder.embed_query(text)[1]) for text in FACTS]
    assert [len(item) for item in packed] == [SENTENCE_BYTES + 1 + TOKEN_BYTES * n for n in pieces]
    assert all(is_ours(item) for item in packed) and 8 <= pieces[0] <= 20
    assert not is_ours(None) and not is_ours(b"\x04" + packed[0][1:])
    assert not is_ours(packed[0][:-1]) and not is_ours(packed[0] + b"\x00")
    assert (decode(packed) * vectors).sum(axis=1).min() > 0.999
    assert embedder.embed([]) == []
    # Format 1 (the sentence part alone, written by earlier versions) is still ours.
    legacy = b"\x01" + packed[0][1:SENTENCE_BYTES]
    assert is_ours(legacy) and token_signs(legacy) is None
    assert np.allclose(decode([legacy]), decode(packed[:1]))


def test_stored_word_pieces_keep_the_signs_of_the_last_layer(embedder: MiniLMEmbedder) -> None:
    vector, states = embedder.embed_query(FACTS[0])
    signs = token_signs(embedder.embed([FACTS[0]])[0])
    assert signs is not None and signs.shape == states.shape
    assert np.array_equal(signs > 0, states >= 0)
    assert np.allclose(np.linalg.norm(signs, axis=1), 1.0)
    assert np.allclose(vector, embedder.embed_matrix(FACTS[:1])[0])
    long = encode(np.ones((1, 384), np.float32), [np.ones((100, 384), np.float32)])[0]
    assert len(long) == SENTENCE_BYTES + 1 + TOKEN_BYTES * MAX_STORED_TOKENS
    assert embedder.embed_query("")[1].shape == (0, 384)


def test_token_match_rewards_the_query_words_a_fact_contains(embedder: MiniLMEmbedder) -> None:
    from chalicelib.services.recall.relevance_features import token_match

    _, states = embedder.embed_query("guinea pig named Oscar")
    stored = embedder.embed(FACTS)
    everyone = token_match(states, stored, np.arange(len(FACTS)))
    assert everyone.shape == (len(FACTS), 4)
    assert int(np.argmax(everyone[:, 0])) == int(np.argmax(everyone[:, 2])) == 0
    assert everyone[0, 1] == everyone[0, 3] == 0.0  # the best fact's gaps
    only_two = token_match(states, stored, np.array([1, 2]))
    for column in (0, 2):
        values = only_two[:, column]
        assert values[0] == values[3] == min(values[1], values[2])  # the floor
    legacy = [b"\x01" + item[1:SENTENCE_BYTES] for item in stored]
    assert np.array_equal(token_match(states, legacy, np.arange(4)), np.zeros((4, 4)))


def test_token_z_discounts_a_query_piece_that_every_fact_matches() -> None:
    from chalicelib.services.recall.relevance_features import token_columns

    # Piece 0 ("what") matches the three matched facts equally, so it adds nothing to
    # tokens_z; piece 1 only the last fact matches well.
    best = np.array([[0.9, 0.1], [0.9, 0.2], [0.9, 0.9]])
    columns = token_columns(best, np.array([0, 2, 3]), 4)
    assert np.allclose(columns[[0, 2, 3], 0], best.mean(axis=1))
    z = columns[:, 2]
    rare = best[:, 1]
    assert np.allclose(z[[0, 2, 3]], (rare - rare.mean()) / (rare.std() + 1e-6) / 2)
    assert int(np.argmax(z)) == 3 and z[3] > 0 > z[2] > z[0]
    assert z[1] == min(z[0], z[2], z[3])  # not matched: the floor
    assert np.allclose(columns[:, 3], z - z.max())
    assert np.array_equal(
        token_columns(np.zeros((0, 2)), np.zeros(0, np.intp), 3), np.zeros((3, 4))
    )


def test_embedding_is_semantic(embedder: MiniLMEmbedder) -> None:
    a, b, c = embedder.embed_matrix(
        ["The cat sat on the mat.", "A kitten rested on the rug.", "Quarterly revenue grew."]
    )
    assert float(a @ b) > float(a @ c) + 0.2


def test_wordpiece_matches_bert_rules() -> None:
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "cafe", "!", "日"]
    tokenizer = WordPieceTokenizer(vocabulary)
    assert tokenizer.encode("Unaffable CAFÉ!") == [2, 4, 5, 6, 7, 8, 3]
    assert tokenizer.encode("日x") == [2, 9, 1, 3]
    assert tokenizer.encode("") == [2, 3]
    assert len(tokenizer.encode("un " * 1000, max_tokens=10)) == 10


def test_nearby_facts_share_their_best_match_in_time_order() -> None:
    from chalicelib.services.recall.relevance_features import nearby_best

    values = np.array([0.9, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    burst = np.arange(7.0)  # saved one second apart: a window of 3 facts each side
    assert nearby_best(values, burst).tolist() == [0.9, 0.9, 0.9, 0.9, 0.6, 0.6, 0.6]
    apart = np.arange(7.0) * 3600  # an hour apart: nothing is nearby
    assert nearby_best(values, apart).tolist() == values.tolist()
    newest_first = burst[::-1].copy()  # the list order does not matter, time order does
    assert nearby_best(values, newest_first).tolist() == [0.9, 0.9, 0.9, 0.9, 0.6, 0.6, 0.6]
    assert nearby_best(values[:1], burst[:1]).tolist() == [0.9]


def _reference_coverage(query: str, texts: list[str]) -> np.ndarray:
    """Coverage computed text by text from ``LexicalScorer.terms`` (slow and obvious).

    Equal to the fast version for words that start with their term's stem (all but
    irregular forms such as "ran" -> "run", which the fast version does not find).
    """
    from chalicelib.services.recall.relevance_features import _B, _COVERAGE_TERMS, _K1, TERMS

    terms = sorted(set(TERMS.terms(query)))
    tf = np.array([[TERMS.terms(text).count(term) for term in terms] for text in texts], float)
    lengths = np.array([len(text) + 1 for text in texts], float)
    df = (tf > 0).sum(axis=0)
    idf = np.log(1.0 + (len(texts) - df + 0.5) / (df + 0.5))
    full = np.sort(idf)[::-1][:_COVERAGE_TERMS].sum()
    norm = _K1 * (1.0 - _B + _B * lengths / lengths.mean())
    saturated = tf * (_K1 + 1.0) / (tf + norm[:, None])
    value = 0.9 * np.minimum(1.0, saturated) + 0.1 * saturated / (_K1 + 1.0)
    return np.asarray(np.minimum(1.0, (value * idf).sum(axis=1) / full))


@pytest.mark.parametrize(
    "query",
    [
        "When did Caroline adopt the guinea pig?",
        "camping mountains kids",
        "Carolines' deploys on friday",
        "東京 の 会議",
        "naïve café",
        "run_id of PIN-9",
        "parse_header_links",
        "parseHeaderLinks in the HTTPServer",
        "how do we parse header links for the server",
    ],
)
def test_lexical_coverage_matches_the_term_by_term_definition(query: str) -> None:
    from chalicelib.services.recall.relevance_features import lexical_coverage

    texts = [
        *FACTS,
        "Caroline's deploy (PIN-9) runs; caroline deploys again.",
        "東京の会議は月曜日です",
        "A naïve café in town; the run_id is 7.",
        "xcaroline and subcamping are other words",
        "subcamping,camping; xcaroline/caroline_x",
        "links = utils.parse_header_links(value)  # parse_header_linksx",
        "const links = parseHeaderLinks(raw); class HTTPServer:",
        "ParseHeader and my_parse_header_links; headerlinks",
        "",
    ]
    assert np.allclose(lexical_coverage(query, texts), _reference_coverage(query, texts))


def test_bulk_decode_only_when_every_embedding_is_ours(embedder: MiniLMEmbedder) -> None:
    from chalicelib.services.recall.embedding import decode_if_all_ours

    stored = embedder.embed(FACTS)
    assert np.allclose(decode_if_all_ours(stored), decode(stored))
    assert decode_if_all_ours([*stored[:2], None]) is None
    assert decode_if_all_ours([*stored[:2], b"\x04" + stored[0][1:]]) is None
    assert decode_if_all_ours([*stored[:2], b"\x01" + stored[0][1:385]]) is None  # format 1
    assert decode_if_all_ours([*stored[:2], stored[0][:-1]]) is None
    # Format 2 (same layout, the tokenizer before its fix) is read until backfilled.
    older = [b"\x02" + item[1:] for item in stored[:2]]
    assert np.allclose(decode_if_all_ours([*older, *stored[2:]]), decode(stored))


def test_format_2_is_read_but_not_current(embedder: MiniLMEmbedder) -> None:
    from chalicelib.services.recall.embedding import EMBEDDING_FORMAT, is_current

    stored = embedder.embed(FACTS[:1])[0]
    older = b"\x02" + stored[1:]
    assert stored[0] == EMBEDDING_FORMAT == 3 and is_current(stored)
    assert is_ours(older) and not is_current(older)
    signs, current = token_signs(older), token_signs(stored)
    assert signs is not None and current is not None and np.array_equal(signs, current)


def test_multi_line_facts_embed_as_their_one_line_form(embedder: MiniLMEmbedder) -> None:
    wrapped = "The staging database is\nPostgres 15 on port\t5433."
    flat = "The staging database is Postgres 15 on port 5433."
    assert embedder.embed([wrapped]) == embedder.embed([flat])
    glued = "The staging database isPostgres 15 on port5433."  # what format 2 embedded
    assert embedder.embed([wrapped]) != embedder.embed([glued])


@pytest.mark.parametrize(
    ("query", "texts", "unknown"),
    [
        ("What is the capital of France?", FACTS, True),
        ("What pet does Caroline have?", FACTS, False),
        ("Where does caroline live?", FACTS, False),  # no capital: no name
        ("What did Caroline's guinea pig eat?", ["caroline's pig eats hay"], False),
        ("How did Mel feel?", ["Melanie is happy"], True),  # a nickname is another name
        ("Is Caroline friends with Gina?", FACTS, False),  # one known name is enough
        ("Deploy the billing service. Then I rest", FACTS, False),  # stop words: no names
        ("Where is Oscar?", [], True),
    ],
)
def test_names_unknown(query: str, texts: list[str], unknown: bool) -> None:
    assert names_unknown(query, texts) is unknown


def without_unrelated_cut(base: Coefficients) -> Coefficients:
    """``base`` with the unrelated-question floor equal to the normal one (no rule)."""
    return dataclasses.replace(
        base, cut=dataclasses.replace(base.cut, floor_if_unrelated=base.cut.floor)
    )


def test_a_question_about_what_the_store_never_heard_of_keeps_only_strong_matches(
    embedder: MiniLMEmbedder,
) -> None:
    base = Coefficients.load()
    ungated = without_unrelated_cut(base)
    items = candidates(embedder, FACTS)
    for query in ("What is the capital of France?", "Who won the Champions League?"):
        plain = RelevanceScorer(embedder, ungated).score(query, items, NOW)
        gated = RelevanceScorer(embedder, base).score(query, items, NOW)
        assert max(plain) >= 0.5  # a small store's best facts look good by their gaps...
        assert max(gated) < 0.5  # ...but the store never heard of France: nothing kept
        # Same order: only the cut moved.
        assert sorted(range(4), key=gated.__getitem__) == sorted(range(4), key=plain.__getitem__)
    # A strong match is still kept, and known names are not affected.
    strong = RelevanceScorer(embedder, base).score(
        "Where does Gina go camping with her kids every summer?", items, NOW
    )
    assert strong[1] >= 0.5 and sum(value >= 0.5 for value in strong) == 1
    known = "What pet does Caroline have?"
    assert RelevanceScorer(embedder, base).score(known, items, NOW) == RelevanceScorer(
        embedder, ungated
    ).score(known, items, NOW)


DEPLOY_FACTS = [
    "The staging deploy needs the VPN on",
    "Prod deploys need two approvals",
    "No deploys on Friday: code freeze for the weekend",
    "Gina owns the Kubernetes cluster on AWS",
    "Terraform manages the VPCs",
    "CI runs on GitHub Actions",
    "Roll back a bad deploy with helm rollback",
]


@pytest.mark.parametrize(
    "query",
    [
        "How do I deploy from my MacBook to staging?",
        "Fix Billing API deploy to staging",
        "Can we deploy to staging over Zoom on Thanksgiving?",
        "What is Bob's role in the staging deploy?",
    ],
)
def test_one_unfamiliar_capitalized_word_does_not_hide_a_clear_match(
    embedder: MiniLMEmbedder, scorer: RelevanceScorer, query: str
) -> None:
    scores = scorer.score(query, candidates(embedder, DEPLOY_FACTS), NOW)
    assert names_unknown(query, DEPLOY_FACTS)  # the rule's first half holds...
    assert scores[0] >= 0.5  # ...but the staging fact is still kept
    assert max(range(len(scores)), key=scores.__getitem__) == 0


@pytest.mark.parametrize(
    "query", ["What is the capital of France?", "When did Bob go to Paris?", "Who is Mel's boss?"]
)
def test_a_question_unrelated_to_the_store_keeps_nothing(
    embedder: MiniLMEmbedder, scorer: RelevanceScorer, query: str
) -> None:
    assert max(scorer.score(query, candidates(embedder, DEPLOY_FACTS), NOW)) < 0.5


@pytest.mark.parametrize(
    "query",
    [
        "what's a good recipe for lasagna",
        "what is the capital of france?",
        "how many moons does jupiter have",
    ],
)
def test_a_lowercase_question_sharing_nothing_with_the_store_keeps_nothing(
    embedder: MiniLMEmbedder, scorer: RelevanceScorer, query: str
) -> None:
    items = candidates(embedder, DEPLOY_FACTS)
    assert not names_unknown(query, DEPLOY_FACTS)  # no capitalized word: the names rule is off
    assert max(scorer.score(query, items, NOW)) < 0.5
    ungated = RelevanceScorer(embedder, without_unrelated_cut(Coefficients.load()))
    assert max(ungated.score(query, items, NOW)) >= 0.5  # what the second case prevents


@pytest.mark.parametrize(
    ("query", "expected"),
    [("whos in charge of the kubernetes clustr", 3), ("how do i rol back a bad deplooy", 6)],
)
def test_a_typo_does_not_make_a_question_unrelated(
    embedder: MiniLMEmbedder, scorer: RelevanceScorer, query: str, expected: int
) -> None:
    scores = scorer.score(query, candidates(embedder, DEPLOY_FACTS), NOW)
    assert max(range(len(scores)), key=scores.__getitem__) == expected
    assert scores[expected] >= 0.5


CODING_FACTS = [
    "Deploy to staging with `make deploy ENV=staging`; it takes about 6 minutes.",
    "Priya Raman owns the billing service and must review any change to invoices.",
    "The frontend team lead is Dana Okafor; ask her before changing the design system.",
    "The user prefers small pull requests under 300 lines and wants a summary of changes "
    "at the top of each PR.",
    "Incident 2026-06-02: the Redis cache ran out of memory because TTLs were missing on "
    "rate-limit keys.",
    "We are on Django 4.2 LTS and Celery 5.3; do not upgrade Django to 5.x until Q1 2027.",
    "Run the test suite with `make test`; integration tests need Docker running.",
    "Feature flags are managed in LaunchDarkly; the flag for the new checkout is 'checkout-v2'.",
    "Secrets are stored in AWS Secrets Manager, never in .env files committed to git.",
    "The API rate limit is 100 requests per minute per API key.",
    "The payment provider is Stripe; webhooks are verified in payments/webhooks.py.",
    "Image uploads go to the S3 bucket shop-media-prod in eu-west-1.",
]
SMALL_PR = 3  # the user's preference for small pull requests
STRIPE, FLAG = 10, 7


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # "5.0" is no break; "and" between two parts of two terms or more is one.
        (
            "Upgrade Django to 5.0 and fix the deprecation warnings",
            ["Upgrade Django to 5.0", "fix the deprecation warnings"],
        ),
        (
            "Check the Stripe webhook and deploy to staging",
            ["Check the Stripe webhook", "deploy to staging"],
        ),
        ("What do Melanie and Caroline both like to paint?", []),  # one part is one name
        ("Where does Melanie run and swim", []),  # "swim" alone is no clause
        (
            "Which came first, the database migration or the CI move?",
            ["the database migration", "the CI move"],  # "which came first" asks the order
        ),
        ("deploy", []),
        ("Deploy staging. Thanks!", []),  # "Thanks" alone has one term: one clause left
        (
            "PIN-311: the checkout times out. Check the Stripe webhook; add a test, ship",
            ["PIN-311", "the checkout times out", "Check the Stripe webhook", "add a test"],
        ),
    ],
)
def test_clauses(query: str, expected: list[str]) -> None:
    assert clauses(query) == expected


def test_at_most_eight_clauses_are_scored() -> None:
    parts = [f"clause number {n}" for n in range(12)]
    assert clauses(", ".join(parts)) == parts[:MAX_CLAUSES] and MAX_CLAUSES == 8


def test_a_task_of_several_clauses_finds_each_topic(embedder: MiniLMEmbedder) -> None:
    task = (
        "The checkout page times out when customers pay by card. Investigate how the Stripe "
        "webhook is handled, and keep the change behind the new checkout feature flag. "
        "Open a small PR."
    )
    items = candidates(embedder, CODING_FACTS)
    whole = RelevanceScorer(embedder, by_clause=False).score(task, items, NOW)
    by_clause = RelevanceScorer(embedder).score(task, items, NOW)
    assert whole[SMALL_PR] < 0.5 <= by_clause[SMALL_PR]  # the "small PR" clause finds it
    best_three = sorted(range(len(items)), key=by_clause.__getitem__, reverse=True)[:3]
    assert set(best_three) == {STRIPE, FLAG, SMALL_PR}
    assert all(b >= w for b, w in zip(by_clause, whole, strict=True))  # only ever raised
    assert sum(v >= 0.5 for v in by_clause) <= sum(v >= 0.5 for v in whole) + 2
    one_clause = "Investigate how the Stripe webhook is handled"
    assert RelevanceScorer(embedder).score(one_clause, items, NOW) == RelevanceScorer(
        embedder, by_clause=False
    ).score(one_clause, items, NOW)


@pytest.mark.parametrize(
    ("first", "second", "limit", "within"),
    [
        ("servise", "service", 1, True),  # one substitution
        ("tsets", "tests", 1, True),  # two neighbours swapped count once
        ("ownr", "owner", 1, True),  # one insertion
        ("dedline", "deadline", 1, True),
        ("athentication", "authentication", 2, True),
        ("bake", "cake", 0, False),
        ("sourdough", "service", 2, False),
        ("abcdef", "badcfe", 2, False),  # three swaps
    ],
)
def test_edit_distance_bound(first: str, second: str, limit: int, within: bool) -> None:
    from chalicelib.services.recall.unrelated import _edits_within

    assert _edits_within(first, second, limit) is within


def test_a_misspelt_question_is_not_taken_as_unrelated() -> None:
    from chalicelib.services.recall.relevance_features import FEATURES
    from chalicelib.services.recall.unrelated import near_miss, unrelated

    texts = ["The authentication service is owned by Marco's identity team.", "make deploy"]
    typo = "whos the ownr of the athentication servise"
    assert near_miss(typo, texts)
    assert not near_miss("how do i bake sourdough bread at home", texts)  # "bake" vs "make"
    assert not near_miss("what is the capital of france?", texts)
    # No shared term and no similarity: only the near miss keeps the normal cut.
    matrix = np.zeros((len(texts), len(FEATURES)))
    matrix[:, FEATURES.index("cos_best")] = 0.1
    assert not unrelated(typo, texts, matrix)
    assert unrelated("how do i bake sourdough bread at home", texts, matrix)


def test_the_cut_follows_the_best_probability_with_a_floor() -> None:
    rule = Cut(floor=0.005, relative=0.02, floor_if_unrelated=0.15)
    assert rule.probability(0.1, unrelated=False) == 0.005  # weak best: the floor
    assert rule.probability(0.5, unrelated=False) == pytest.approx(0.01)  # 2 % of the best
    assert rule.probability(0.5, unrelated=True) == 0.15
    assert rule.probability(1.0, unrelated=True) == 0.15
    assert rule.logit(0.5, unrelated=False) == pytest.approx(np.log(0.01 / 0.99))


def test_a_score_is_p_against_the_cut_of_the_best_p(embedder: MiniLMEmbedder) -> None:
    base = Coefficients.load()
    items = candidates(embedder, [*FACTS, *DEPLOY_FACTS])
    for query in ("What pet does Caroline have?", "How do I roll back a deploy?"):
        matrix = RelevanceScorer(embedder, base).features(query, items)
        p = 1.0 / (1.0 + np.exp(-(base.intercept + matrix @ np.asarray(base.weights))))
        cut = base.cut.probability(float(p.max()), unrelated=False)
        assert cut > base.cut.floor  # these stores' best facts are sure: the relative part
        scores = np.array(RelevanceScorer(embedder, base).score(query, items, NOW))
        expected = 1.0 / (1.0 + np.exp(-(np.log(p / (1 - p)) - np.log(cut / (1 - cut)))))
        assert np.allclose(scores, expected)
        assert np.array_equal(scores >= 0.5, p >= cut)


def test_a_file_without_the_relative_cut_is_refused(tmp_path: Path) -> None:
    from chalicelib.services.recall.relevance import WEIGHTS_FILE

    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    del data["cut"]
    old = tmp_path / "recall-relevance.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="no relative cut"):
        Coefficients.load(old)
