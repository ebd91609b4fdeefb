"""Intrinsic evaluation of word vectors: word similarity and word analogies.

Loaders for the WordSim-353 / SimLex-999 tab-separated format and the Google
analogy format (as shipped in gensim's test data), and the two standard
evaluations, computed as gensim's ``evaluate_word_pairs`` and
``evaluate_word_analogies`` do (case-insensitive, restricted vocabulary,
out-of-vocabulary items skipped and counted).
"""

from __future__ import annotations

import os

import numpy as np
from scipy import stats

__all__ = ["load_analogies", "load_word_pairs", "word_analogy", "word_similarity"]


def load_word_pairs(path):
    """Read a word-pair similarity file (WordSim-353, SimLex-999, MEN ...).

    Parameters
    ----------
    path : str or os.PathLike
        Text file with one ``word1<TAB>word2<TAB>score`` per line; lines
        starting with ``#`` are comments. Whitespace other than tabs is also
        accepted as separator.

    Returns
    -------
    pairs : list of (str, str)
        The word pairs, in file order.
    scores : numpy.ndarray of shape (n_pairs,), float64
        The human similarity score of each pair.

    Raises
    ------
    ValueError
        If a line does not hold two words and a number (line number named).
    """
    pairs, scores = [], []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t") if "\t" in line else line.split()
            try:
                w1, w2, score = parts[0], parts[1], float(parts[2])
            except (IndexError, ValueError):
                raise ValueError(
                    f"{os.fspath(path)}: line {lineno} is not 'word1<TAB>word2<TAB>score': {line[:80]!r}"
                ) from None
            pairs.append((w1, w2))
            scores.append(score)
    return pairs, np.asarray(scores, dtype=np.float64)


def _restricted_index(kv, restrict_vocab, case_insensitive):
    keys = kv.index_to_key[:restrict_vocab] if restrict_vocab else kv.index_to_key
    index = {}
    for i, key in enumerate(keys):
        k = key.lower() if case_insensitive else key
        index.setdefault(k, i)  # the most frequent casing wins, as in gensim
    return index


def word_similarity(kv, pairs, *, restrict_vocab=300_000, case_insensitive=True):
    """Spearman correlation between cosine similarities and human judgements.

    Parameters
    ----------
    kv : KeyedVectors
        Word vectors (anything with ``index_to_key`` and ``vectors``).
    pairs : str, os.PathLike, or (list of (str, str), array of float)
        A path in the format of :func:`load_word_pairs`, its parsed result,
        or a pandas DataFrame whose first three columns are word1, word2, score.
    restrict_vocab : int or None, default=300000
        Only the first (most frequent) words of ``kv`` count as known.
    case_insensitive : bool, default=True
        Lowercase words of the test set and of the vocabulary.

    Returns
    -------
    result : dict
        ``spearman`` (float, NaN if fewer than 2 pairs are known),
        ``pearson`` (float), ``oov_ratio`` (fraction of pairs skipped because
        a word is unknown, in [0, 1]), ``n_pairs`` (pairs evaluated).

    Examples
    --------
    >>> import numpy as np
    >>> from skembed import KeyedVectors
    >>> kv = KeyedVectors(np.array([[1, 0], [1, 1], [0, 1]]), ["a", "b", "c"])
    >>> pairs = ([("a", "b"), ("a", "c"), ("b", "c")], np.array([5.0, 1.0, 4.0]))
    >>> round(word_similarity(kv, pairs)["spearman"], 3)  # cosines 0.707, 0, 0.707 tie
    0.866
    """
    if isinstance(pairs, (str, os.PathLike)):
        pairs, scores = load_word_pairs(pairs)
    elif hasattr(pairs, "iloc"):
        pairs, scores = (
            list(zip(pairs.iloc[:, 0], pairs.iloc[:, 1], strict=True)),
            np.asarray(pairs.iloc[:, 2], dtype=np.float64),
        )
    else:
        pairs, scores = pairs
        scores = np.asarray(scores, dtype=np.float64)
    index = _restricted_index(kv, restrict_vocab, case_insensitive)
    vectors = np.asarray(kv.vectors, dtype=np.float64)
    sims, gold = [], []
    for (w1, w2), score in zip(pairs, scores, strict=True):
        if case_insensitive:
            w1, w2 = w1.lower(), w2.lower()
        if w1 not in index or w2 not in index:
            continue
        a, b = vectors[index[w1]], vectors[index[w2]]
        denom = np.linalg.norm(a) * np.linalg.norm(b)
        sims.append(float(a @ b / denom) if denom > 0 else 0.0)
        gold.append(score)
    n = len(sims)
    if n >= 2:
        spearman = float(stats.spearmanr(gold, sims).statistic)
        pearson = float(stats.pearsonr(gold, sims).statistic)
    else:
        spearman = pearson = float("nan")
    return {
        "spearman": spearman,
        "pearson": pearson,
        "oov_ratio": 1.0 - n / len(pairs) if len(pairs) else 0.0,
        "n_pairs": n,
    }


def load_analogies(path):
    """Read analogy questions in the Google format (``: section`` headers, ``a b c d`` lines).

    Parameters
    ----------
    path : str or os.PathLike
        Text file, e.g. ``questions-words.txt`` of the word2vec tool.

    Returns
    -------
    sections : dict of str to list of (str, str, str, str)
        Questions per section, in file order.

    Raises
    ------
    ValueError
        If a question line does not hold four words, or precedes any section.
    """
    sections: dict = {}
    current = None
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.strip()
            if not line:
                continue
            if line.startswith(":"):
                current = line[1:].strip()
                sections.setdefault(current, [])
                continue
            words = line.split()
            if len(words) != 4 or current is None:
                raise ValueError(
                    f"{os.fspath(path)}: line {lineno} is not a 4-word question under a ': section' "
                    f"header: {line[:80]!r}"
                )
            sections[current].append(tuple(words))
    return sections


def word_analogy(
    kv,
    questions,
    *,
    restrict_vocab=300_000,
    method="3cosadd",
    case_insensitive=True,
    batch_size=512,
):
    """Accuracy on analogy questions ``a : b :: c : ?`` (expected answer ``d``).

    Parameters
    ----------
    kv : KeyedVectors
        The word vectors to test (e.g. an estimator's ``wv_``).
    questions : str, os.PathLike or dict
        A Google-format file (see :func:`load_analogies`) or its parsed result.
    restrict_vocab : int or None, default=300000
        Search answers among, and accept questions only with words from, the
        first ``restrict_vocab`` words of ``kv``.
    method : {"3cosadd", "3cosmul"}, default="3cosadd"
        ``"3cosadd"``: ``argmax_d cos(d, b) - cos(d, a) + cos(d, c)``
        (Mikolov et al. 2013); ``"3cosmul"``: ``argmax_d cos'(d, b) cos'(d, c)
        / (cos'(d, a) + 0.001)`` with ``cos' = (1 + cos) / 2`` (Levy &
        Goldberg 2014, "Linguistic Regularities in Sparse and Explicit Word
        Representations"). The three question words are never answers.
    case_insensitive : bool, default=True
        Lowercase words of the questions and of the vocabulary.
    batch_size : int, default=512
        Questions scored per matrix product (memory ~ ``batch_size * n_words * 4`` bytes).

    Returns
    -------
    result : dict
        ``accuracy`` (float over the questions whose four words are known;
        NaN if none), ``sections`` (dict section → accuracy), ``n_questions``
        (evaluated), ``n_correct``, ``oov_ratio`` (fraction skipped).

    Raises
    ------
    ValueError
        If ``method`` is unknown.
    """
    if method not in ("3cosadd", "3cosmul"):
        raise ValueError(f"method={method!r} is not '3cosadd' or '3cosmul'.")
    sections = load_analogies(questions) if isinstance(questions, (str, os.PathLike)) else questions
    index = _restricted_index(kv, restrict_vocab, case_insensitive)
    n_search = len(kv.index_to_key[:restrict_vocab] if restrict_vocab else kv.index_to_key)
    vecs = np.asarray(kv.vectors[:n_search], dtype=np.float32)
    unit = vecs / np.maximum(np.linalg.norm(vecs, axis=1), 1e-12)[:, None]
    per_section = {}
    total_q = total_ok = total_all = 0
    for name, qs in sections.items():
        total_all += len(qs)
        ids = []
        for q in qs:
            words = [w.lower() for w in q] if case_insensitive else list(q)
            if all(w in index for w in words):
                ids.append([index[w] for w in words])
        if not ids:
            continue
        ids = np.asarray(ids, dtype=np.int64)
        correct = 0
        for start in range(0, len(ids), batch_size):
            block = ids[start : start + batch_size]
            a, b, c, d = (unit[block[:, k]] for k in range(4))
            if method == "3cosadd":
                scores = (b - a + c) @ unit.T
            else:
                ca, cb, cc = ((unit @ m.T).T for m in (a, b, c))
                scores = ((1 + cb) / 2) * ((1 + cc) / 2) / ((1 + ca) / 2 + 1e-3)
            rows = np.arange(len(block))
            for k in range(3):
                scores[rows, block[:, k]] = -np.inf
            correct += int(np.sum(np.argmax(scores, axis=1) == block[:, 3]))
        per_section[name] = correct / len(ids)
        total_q += len(ids)
        total_ok += correct
    return {
        "accuracy": total_ok / total_q if total_q else float("nan"),
        "sections": per_section,
        "n_questions": total_q,
        "n_correct": total_ok,
        "oov_ratio": 1.0 - total_q / total_all if total_all else 0.0,
    }
