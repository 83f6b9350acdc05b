"""The benchmark's scoring helper (benchmarks/extraction.py) follows the data README's metric."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _benchmark() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "extraction.py"
    spec = importlib.util.spec_from_file_location("extraction_benchmark", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


bench = _benchmark()


def test_shingles_are_case_sensitive_word_4grams() -> None:
    bag = bench.shingles("The cat, the cat sat!")
    assert bag == {("The", "cat", "the", "cat"): 1, ("cat", "the", "cat", "sat"): 1}


def test_exact_prediction_scores_one() -> None:
    gold = "one two three four five six"
    score = bench.score_page(gold, "one two\nthree four five six")
    assert (score.precision, score.recall, score.f1) == (1.0, 1.0, 1.0)


def test_extra_and_missing_text() -> None:
    gold = "a b c d e f g h"  # 5 shingles
    score = bench.score_page(gold, "a b c d e f x y z")  # 6 shingles, 3 shared
    assert score.precision == pytest.approx(3 / 6)
    assert score.recall == pytest.approx(3 / 5)


def test_empty_prediction_counts_in_recall_only() -> None:
    scores = [
        bench.score_page("a b c d e", "a b c d e"),
        bench.score_page("a b c d e", "   "),
    ]
    summary = bench.summarise(scores)
    assert summary.empty == 1
    assert summary.precision == 1.0
    assert summary.recall == 0.5
    assert summary.f1 == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    assert summary.page_f1 == 0.5
