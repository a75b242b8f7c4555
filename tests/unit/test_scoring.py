"""Tests for chalicelib.services.recall.lexical: the lexical recall scorer
(docs/reference.md#8-recall)."""

import random

import pytest

from chalicelib.services.recall.lexical import LexicalScorer, Scorer, stem

CUT_OFF = 0.5

# A small agent store of its own making; common words ("the", "service", "user") recur.
STORE = [
    "The user prefers dark mode in every editor and terminal.",
    "Deploys of the billing service go through the staging pipeline first.",
    "The billing service reads its Stripe webhook secret from the vault.",
    "The user works on the search service and the billing service.",
    "Release notes are written in the CHANGELOG before each deploy.",
    "The frontend uses Tailwind and the user dislikes inline styles.",
    "Postgres migrations run with alembic; never edit an applied migration.",
    "The user is in the Europe/Paris time zone and starts work at 9.",
    "The search service indexes documents with OpenSearch every hour.",
    "Integration tests need the docker compose stack to be running.",
    "The user wants short commit messages in the imperative mood.",
    "Grafana dashboards for the search service live in the ops repo.",
]


@pytest.fixture
def scorer() -> LexicalScorer:
    return LexicalScorer()


def scores_by_text(scorer: LexicalScorer, query: str) -> dict[str, float]:
    return dict(zip(STORE, scorer.score(query, STORE), strict=True))


def test_lexical_scorer_satisfies_the_protocol() -> None:
    pluggable: Scorer = LexicalScorer()
    assert len(pluggable.score("billing deploy", STORE)) == len(STORE)


def test_scores_are_in_the_unit_interval(scorer: LexicalScorer) -> None:
    rng = random.Random("pinework-scoring")
    vocabulary = " ".join(STORE).split() + ["deploy"] * 20
    documents = [" ".join(rng.choices(vocabulary, k=rng.randint(0, 60))) for _ in range(300)]
    for query in ["deploy deploy billing", "the user", " ".join(vocabulary), "zzz billing"]:
        scores = scorer.score(query, documents)
        assert len(scores) == len(documents)
        assert all(0.0 <= score <= 1.0 for score in scores)


def test_scores_follow_document_order(scorer: LexicalScorer) -> None:
    query = "How do billing deploys reach production?"
    forward = scorer.score(query, STORE)
    backward = scorer.score(query, list(reversed(STORE)))
    assert backward == list(reversed(forward))
    assert max(forward) > 0


def test_rare_query_word_outranks_common_words(scorer: LexicalScorer) -> None:
    scores = scores_by_text(scorer, "What does the user think about Grafana?")
    grafana = scores["Grafana dashboards for the search service live in the ops repo."]
    user_only = scores["The user prefers dark mode in every editor and terminal."]
    assert grafana > user_only
    assert grafana == max(scores.values())


def test_document_covering_more_of_the_query_scores_higher(scorer: LexicalScorer) -> None:
    scores = scores_by_text(scorer, "staging pipeline for billing deploys")
    both = scores["Deploys of the billing service go through the staging pipeline first."]
    billing_only = scores["The billing service reads its Stripe webhook secret from the vault."]
    assert both > billing_only


def test_unrelated_text_scores_below_the_cut_off(scorer: LexicalScorer) -> None:
    scores = scores_by_text(scorer, "Which alembic migrations were applied?")
    assert scores["The user prefers dark mode in every editor and terminal."] < CUT_OFF
    assert scores["Grafana dashboards for the search service live in the ops repo."] < CUT_OFF
    assert sum(score >= CUT_OFF for score in scores.values()) == 1


def test_document_matching_the_whole_query_is_kept(scorer: LexicalScorer) -> None:
    scores = scores_by_text(scorer, "docker compose integration tests")
    assert scores["Integration tests need the docker compose stack to be running."] >= CUT_OFF


def test_document_matching_only_a_common_word_is_not_kept(scorer: LexicalScorer) -> None:
    scores = scores_by_text(scorer, "Which editor theme and font does the user like?")
    assert scores["The user wants short commit messages in the imperative mood."] < CUT_OFF
    assert scores["The user prefers dark mode in every editor and terminal."] >= CUT_OFF


def test_words_the_store_never_uses_count_against_a_tiny_store(scorer: LexicalScorer) -> None:
    # One shared common word out of five query terms is not "probably useful".
    [score] = scorer.score(
        "Which deployment target does the user want for the billing API?",
        ["The user prefers dark mode in every editor."],
    )
    assert 0.0 < score < CUT_OFF


def test_long_task_text_does_not_dilute_a_strong_match(scorer: LexicalScorer) -> None:
    task = (
        "Today we need to refactor the checkout flow, rename the payment helpers, update "
        "the React components for the cart page, fix the flaky Cypress suite, bump the "
        "Node version in the CI image, and before merging make sure the Postgres "
        "migrations run with alembic and that nobody edits an applied migration."
    )
    scores = scores_by_text(scorer, task)
    migration = "Postgres migrations run with alembic; never edit an applied migration."
    assert scores[migration] >= CUT_OFF
    assert scores[migration] == max(scores.values())


@pytest.mark.parametrize("query", ["", "   ", "?!", "What is it that they were doing there?"])
def test_query_without_terms_scores_all_zero(scorer: LexicalScorer, query: str) -> None:
    assert scorer.score(query, STORE) == [0.0] * len(STORE)


def test_query_sharing_no_term_scores_all_zero(scorer: LexicalScorer) -> None:
    assert scorer.score("kubernetes helm chart", STORE) == [0.0] * len(STORE)


def test_no_documents_gives_no_scores(scorer: LexicalScorer) -> None:
    assert scorer.score("billing", []) == []
    assert scorer.score("", []) == []


def test_empty_documents_score_zero(scorer: LexicalScorer) -> None:
    assert scorer.score("billing deploy", ["", "billing deploy pipeline", ""])[::2] == [0.0, 0.0]


@pytest.mark.parametrize(
    "family",
    [
        ("deploy", "deploys", "deployed", "deploying"),
        ("run", "runs", "ran", "running"),
        ("migration", "migrations"),
        ("study", "studies", "studied"),
        ("use", "used", "uses", "using"),
        ("make", "made", "making"),
        ("class", "classes"),
    ],
)
def test_stemming_joins_inflections(family: tuple[str, ...]) -> None:
    assert len({stem(word) for word in family}) == 1


def test_stemming_keeps_distinct_words_apart() -> None:
    assert stem("deploy") != stem("deplete")
    assert stem("class") != stem("clash")
    assert stem("need") == "need"


def test_inflected_query_matches_other_inflection(scorer: LexicalScorer) -> None:
    [deployed] = scorer.score("deploys", ["We deployed it yesterday."])
    [unrelated] = scorer.score("deploys", ["We deleted it yesterday."])
    assert deployed >= CUT_OFF
    assert unrelated == 0.0


def test_matching_ignores_case_and_punctuation(scorer: LexicalScorer) -> None:
    lower, upper = scorer.score("OPENSEARCH!!", ["indexed by opensearch.", "Indexed by OpenSearch"])
    assert lower == upper >= CUT_OFF


def test_snake_case_identifier_matches_its_parts(scorer: LexicalScorer) -> None:
    [score] = scorer.score("billing webhook", ["Set STRIPE_BILLING_WEBHOOK_SECRET in prod."])
    assert score >= CUT_OFF


@pytest.mark.parametrize(
    ("word", "terms"),
    [
        ("parse_header_links", ["pars", "header", "link", "parse_header_links"]),
        ("parseHeaderLinks", ["pars", "header", "link", "parseheaderlink"]),
        ("HTTPServer", ["http", "server", "httpserver"]),
        ("get_the_id", ["get", "id", "get_the_id"]),  # a stop-word part is dropped
        ("Deploys", ["deploy"]),  # a capital alone is no hump
        ("HTTP", ["http"]),
        ("3D", ["3d"]),
        ("東京タワー", ["東", "京", "タ", "ワ", "ー"]),  # no whole term for Han and kana
    ],
)
def test_identifiers_give_their_parts_and_the_whole(word: str, terms: list[str]) -> None:
    assert LexicalScorer().terms(word) == terms


def test_dotted_path_gives_the_terms_of_each_part(scorer: LexicalScorer) -> None:
    assert scorer.terms("requests.utils.parse_header_links") == [
        "request",
        "util",
        *scorer.terms("parse_header_links"),
    ]


def test_exact_identifier_outranks_its_parts_in_prose(scorer: LexicalScorer) -> None:
    exact, prose = scorer.score(
        "parse_header_links",
        ["links = parse_header_links(value)", "We parse the header and the links later."],
    )
    assert exact > prose


def test_camel_case_identifier_matches_a_question_in_words(scorer: LexicalScorer) -> None:
    camel, other = scorer.score(
        "how do we parse header links", ["const links = parseHeaderLinks(raw);", "unrelated"]
    )
    assert camel >= CUT_OFF
    assert other == 0.0


def test_han_characters_match_inside_a_sentence(scorer: LexicalScorer) -> None:
    coffee, tea = scorer.score("咖啡", ["我每天早上喝咖啡", "我每天早上喝茶"])
    assert coffee >= CUT_OFF
    assert tea == 0.0


def test_odd_text_does_not_raise(scorer: LexicalScorer) -> None:
    scores = scorer.score("broken \ud83d surrogate", ["a \ud83d broken text", "<|endoftext|>"])
    assert scores[0] > 0.0
    assert scores[1] == 0.0


def test_results_do_not_depend_on_earlier_calls() -> None:
    warm = LexicalScorer()
    warm.score("something else entirely about kubernetes", STORE)
    query = "search service dashboards"
    assert warm.score(query, STORE) == LexicalScorer().score(query, STORE)


@pytest.mark.parametrize(
    "arguments",
    [{"k1": 0.0}, {"b": 1.5}, {"coverage_terms": 0}, {"useful_coverage": 1.0}],
)
def test_out_of_range_parameters_are_rejected(arguments: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        LexicalScorer(**arguments)  # type: ignore[arg-type]


def test_ten_thousand_facts_score_in_one_pass() -> None:
    # Speed is measured by bench/recall_speed.py (10,000 facts); here: a store that
    # size scores every fact, and the alembic facts lead.
    documents = [
        f"{STORE[i % len(STORE)]} Ticket {i} was filed by team {i % 97}." for i in range(10_000)
    ]
    scores = LexicalScorer().score("Which alembic migration did the billing team file?", documents)
    assert len(scores) == 10_000
    best = max(range(len(scores)), key=scores.__getitem__)
    assert "alembic" in documents[best]
