"""The lexical candidate rule every store shares (``text.required_terms``/``candidate_rules``).

Checked against a model: rows are sets of words, a rule's candidates are the rows it admits.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memu_core.text import (
    CandidateRule,
    candidate_rules,
    expand_query,
    lexical_terms,
    query_terms,
    required_terms,
    word_forms,
)

_WORDS = ["retry", "retries", "retried", "queue", "queues", "deploy", "deployed", "cache", "caching", "broker"]


def admitted(rule: CandidateRule, rows: list[frozenset[str]]) -> set[int]:
    return {
        i
        for i, row in enumerate(rows)
        if row & set(rule.required)
        and (not rule.also or row & set(rule.also))
        and all(row & set(group) for group in rule.each)
    }


def counts_of(rows: list[frozenset[str]], terms: list[str]) -> dict[str, int]:
    return {t: sum(t in row for row in rows) for t in terms}


rows_st = st.lists(st.frozensets(st.sampled_from(_WORDS), min_size=1, max_size=5), min_size=1, max_size=60)
query_st = st.lists(st.sampled_from([*_WORDS, "backoff", "zebra"]), min_size=1, max_size=4, unique=True)


@given(rows=rows_st, words=query_st, budget=st.integers(1, 80))
@settings(max_examples=1000, deadline=None)
def test_a_row_holding_every_stored_word_is_always_a_candidate(
    rows: list[frozenset[str]], words: list[str], budget: int
) -> None:
    terms, typed = lexical_terms(expand_query(" ".join(words)))
    counts = counts_of(rows, terms)
    stored = [w for w in terms[:typed] if counts.get(w)]
    full = {i for i, row in enumerate(rows) if stored and set(stored) <= row}
    rules = candidate_rules(terms, counts, budget, typed)
    for rule in rules:
        assert full <= admitted(rule, rows)
    if any(counts.values()):
        assert admitted(rules[-1], rows)


@given(rows=rows_st, words=query_st, budget=st.integers(1, 80))
@settings(max_examples=1000, deadline=None)
def test_word_forms_only_widen(rows: list[frozenset[str]], words: list[str], budget: int) -> None:
    plain = query_terms(" ".join(words))
    expanded, typed = lexical_terms(expand_query(" ".join(words)))
    assert expanded[:typed] == plain
    wide_plain = candidate_rules(plain, counts_of(rows, plain), budget)[-1]
    wide_expanded = candidate_rules(expanded, counts_of(rows, expanded), budget, typed)[-1]
    assert admitted(wide_plain, rows) <= admitted(wide_expanded, rows)


@given(rows=rows_st, words=query_st, budget=st.integers(1, 80))
@settings(max_examples=1000, deadline=None)
def test_a_term_no_row_holds_changes_no_candidate(rows: list[frozenset[str]], words: list[str], budget: int) -> None:
    terms = query_terms(" ".join(words))
    with_ghost = [*terms, "zzghost"]
    before = [admitted(r, rows) for r in candidate_rules(terms, counts_of(rows, terms), budget)]
    after = [admitted(r, rows) for r in candidate_rules(with_ghost, counts_of(rows, with_ghost), budget)]
    assert before[-1] == after[-1]


@given(rows=rows_st, words=query_st, budget=st.integers(1, 80))
@settings(max_examples=1000, deadline=None)
def test_the_narrowest_rule_holds_every_stored_word(rows: list[frozenset[str]], words: list[str], budget: int) -> None:
    terms, typed = lexical_terms(expand_query(" ".join(words)))
    counts = counts_of(rows, terms)
    rules = candidate_rules(terms, counts, budget, typed)
    stored = [w for w in terms[:typed] if counts.get(w)]
    if len(rules) == 3:
        # Each stored typed word, in itself or one of its forms, and nothing else required. A
        # typed word that is a form of an earlier one ("queue queues") is that word, not another
        # word to hold: the forms are not symmetric (queue -> queues, but queues -> queu).
        forms: list[set[str]] = []
        for w in stored:
            if not any(w in f for f in forms):
                forms.append({w, *word_forms(w)})
        every = {i for i, row in enumerate(rows) if all(row & f for f in forms)}
        assert admitted(rules[0], rows) <= every
        full = {i for i, row in enumerate(rows) if set(stored) <= row}
        assert full <= admitted(rules[0], rows)
        assert admitted(rules[1], rows) <= admitted(rules[2], rows)


def test_the_reported_case_keeps_the_users_words() -> None:
    # "retry" expands to forms no row holds; they once became the only required terms.
    terms, typed = lexical_terms(expand_query("retry queue"))
    assert terms[:typed] == ["retry", "queue"] and "retries" in terms[typed:]
    counts = dict.fromkeys(terms, 0) | {"retry": 35_000, "queue": 34_000}
    required = required_terms(terms, counts, 10_000, typed)
    assert "queue" in required
    rules = candidate_rules(terms, counts, 10_000, typed)
    assert rules[-2].also and rules[-1].also == ()
    # The narrowest rule: rows holding both words (a form no row holds is in no group).
    assert rules[0] == CandidateRule(("retry",), ("queue",))


def test_expanded_queries_split_back_into_typed_words_and_forms() -> None:
    terms, typed = lexical_terms(expand_query("How do we retry the queue?"))
    assert terms[:typed] == ["retry", "queue"]
    assert set(terms[typed:]) >= {"retries", "queues"}
    assert lexical_terms("retry queue") == (["retry", "queue"], 2)


def test_under_budget_every_term_is_required() -> None:
    terms = ["a1", "b2"]
    assert required_terms(terms, {"a1": 3, "b2": 4}, 10) == terms
    assert candidate_rules(terms, {"a1": 3, "b2": 4}, 10) == [CandidateRule(("a1", "b2"))]


def test_a_stored_form_stands_in_when_no_typed_word_is_stored() -> None:
    terms = ["retrying", "retry"]
    assert required_terms(terms, {"retrying": 0, "retry": 50_000}, 10_000, typed=1) == ["retrying", "retry"]


def test_a_typed_plural_of_a_typed_word_is_the_same_word() -> None:
    # Found by hypothesis: "queue queues retry" once had to hold "queues" as a second word.
    rows = [frozenset({"queue", "retry"}), frozenset({"queues", "retry"}), frozenset({"retry"})]
    terms, typed = lexical_terms(expand_query("queue queues retry"))
    counts = counts_of(rows * 2, terms)
    narrowest = candidate_rules(terms, counts, 1, typed)[0]
    assert admitted(narrowest, rows) == {0, 1}
