"""Passages ranked against the query: BM25 over the words of each passage, its headings and
its page's title, with the passages of every page read as the collection.

Lexical and local: no model, no download, the same order for the same pages and query.
Words are case-folded runs of letters and digits; text in scripts written without spaces
(Chinese, Japanese, Thai …) is read as overlapping pairs of characters, so a query in those
scripts still finds its words. A few very common English words count for nothing.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["query_terms", "rank_passages", "terms"]

_WORDS = re.compile(r"\w+")
#: Scripts written without spaces between words: read as character pairs.
_UNSPACED = re.compile(
    "[\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff"  # Thai, Lao, Myanmar, Khmer
    "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0002fa1f]+"
)
_STOPWORDS = frozenset(
    " ".join(
        (
            "a an and are as at be by for from has have how in is it its of on or that the",
            "this to was were what when where which who why will with",
        )
    ).split()
)
#: BM25's usual constants: term frequency saturates (k1), long passages are discounted (b).
_K1 = 1.2
_B = 0.75


def terms(text: str) -> list[str]:
    """The words of ``text`` as ranking reads them (see the module docstring)."""
    words = _WORDS.findall(text.casefold())
    if _UNSPACED.search(text) is None:  # the common case, one search for the whole text
        return [w for w in words if w not in _STOPWORDS and w.strip("_")]
    found: list[str] = []
    for word in words:
        if word in _STOPWORDS or not word.strip("_"):
            continue
        position = 0
        for run in _UNSPACED.finditer(word):
            if run.start() > position:
                found.append(word[position : run.start()])
            chars = run.group()
            pairs = [chars[i : i + 2] for i in range(len(chars) - 1)]
            found.extend(pairs or [chars])
            position = run.end()
        if position < len(word):
            found.append(word[position:])
    return found


def query_terms(query: str) -> list[str]:
    """The query's distinct words, in order; search operators (``site:x``, ``-word``) are
    not words of the answer."""
    kept = " ".join(part for part in query.split() if not part.startswith("-") and ":" not in part)
    return list(dict.fromkeys(terms(kept)))


def rank_passages(query: str, documents: Sequence[str]) -> list[float]:
    """Each document's BM25 score for ``query``, the documents being the collection."""
    wanted = query_terms(query)
    if not documents or not wanted:
        return [0.0] * len(documents)
    counts = [Counter(terms(document)) for document in documents]
    lengths = [sum(c.values()) for c in counts]
    average = sum(lengths) / len(lengths) or 1.0
    total = len(documents)
    idf = {}
    for term in wanted:
        having = sum(1 for c in counts if term in c)
        idf[term] = math.log(1 + (total - having + 0.5) / (having + 0.5))
    scores = []
    for c, length in zip(counts, lengths, strict=True):
        score = 0.0
        norm = _K1 * (1 - _B + _B * length / average)
        for term in wanted:
            tf = c.get(term, 0)
            if tf:
                score += idf[term] * tf * (_K1 + 1) / (tf + norm)
        scores.append(score)
    return scores
