"""The short symptom sets (bench/bench_symptom_questions.py): one per cross-validated corpus, well-formed, apart from
every other set, and the rule that decides an overlay on them."""

from __future__ import annotations

import pytest

from bench import eval_set
from bench.bench_symptom_questions import GATE_MEAN, GATE_OTHERS, SYMPTOM_SETS, decide, symptom_ids
from bench.retrieval_corpora import CORPORA, CV_CORPORA


def test_every_cross_validated_corpus_has_a_symptom_set_of_sixty_graded_questions():
    assert set(SYMPTOM_SETS) == set(CV_CORPORA)
    for name, file in SYMPTOM_SETS.items():
        queries = eval_set.read_jsonl(CORPORA[name].eval_dir / file)
        assert len(queries) == 60, name  # two batches of 30
        assert all(2 in q.relevant.values() for q in queries), name  # each has a page that answers it
        # mostly problems in the user's words: at least half troubleshooting (error-message in Midnight's kinds)
        assert sum(q.kind in ("troubleshooting", "error-message") for q in queries) >= 30, name
        assert {q.split for q in queries} == set(eval_set.SPLITS), name


def test_the_symptom_sets_are_apart_from_each_other_and_loaded_with_their_corpus():
    seen: set[str] = set()
    for name in SYMPTOM_SETS:
        ids = symptom_ids(name)
        assert not ids & seen
        seen |= ids
        assert ids <= {q.id for q in eval_set.load(CORPORA[name].eval_dir)}  # the corpus's benches read them too


def _row(symptom: dict[str, float], others: dict[str, float]) -> dict:
    return {n: {"symptom": {"dev": {"ndcg": symptom[n]}}, "others": {"dev": {"ndcg": others[n]}}} for n in symptom}


@pytest.mark.parametrize(
    ("gain", "other_change", "kept"),
    [
        (GATE_MEAN + 0.005, 0.0, True),
        (GATE_MEAN - 0.005, 0.0, False),  # not enough on the symptom sets
        (GATE_MEAN + 0.05, -(GATE_OTHERS + 0.001), False),  # one corpus's other sets fall too far
        (GATE_MEAN + 0.005, -(GATE_OTHERS - 0.001), True),
    ],
)
def test_an_overlay_is_kept_only_by_the_written_rule(gain, other_change, kept):
    names = ["a", "b"]
    base = _row({"a": 0.6, "b": 0.7}, {"a": 0.85, "b": 0.9})
    row = _row({"a": 0.6 + gain, "b": 0.7 + gain}, {"a": 0.85 + other_change, "b": 0.9})
    table = [base, row]
    decide(table, names)
    assert row["kept"] is kept
    assert row["mean_change"] == pytest.approx(gain)
