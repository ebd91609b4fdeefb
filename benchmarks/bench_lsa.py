"""TfidfLSA vs a hand-built scikit-learn pipeline on BBC News, side by side.

    python benchmarks/bench_lsa.py [--repeats 5] [--n-components 100]
    python benchmarks/bench_lsa.py --quality [--n-components 100] [--tweets 4000]

Prints the median fit_transform time of each, their ratio (goal: <= 1.05)
and the largest absolute difference of the outputs (goal: 0 with dtype float64).

``--quality`` compares weightings side by side on two tasks: classification (5-fold
stratified accuracy of a logistic regression on the standardised LSA vectors, as
``compare`` scores dense embeddings) and unsupervised document
similarity (mean average precision of same-category neighbours ranked by cosine, the
vectors fitted on all documents without labels), on BBC News and a stratified tweet sample.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline

from skembed import TfidfLSA
from skembed.datasets import load_bbc_news

#: the settings ``--quality`` compares (``TfidfLSA`` keyword arguments)
QUALITY_SETTINGS = {
    "tfidf": dict(weighting="tfidf", stop_words=None),
    "tfidf, sublinear_tf": dict(weighting="tfidf", stop_words=None, sublinear_tf=True),
    "tfidf, stop_words": dict(weighting="tfidf", stop_words="english"),
    "tfidf, stop_words, sublinear_tf": dict(
        weighting="tfidf", stop_words="english", sublinear_tf=True
    ),
    "log_entropy": dict(weighting="log_entropy", stop_words=None),
    "log_entropy, stop_words": dict(weighting="log_entropy", stop_words="english"),
}


def neighbour_map(X, labels):
    """Mean average precision of same-label neighbours ranked by cosine (the query left out)."""
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    sims = X @ X.T
    np.fill_diagonal(sims, -np.inf)
    order = np.argsort(-sims, axis=1, kind="stable")[:, :-1]
    hits = labels[order] == labels[:, None]
    precision = np.cumsum(hits, axis=1) / np.arange(1, hits.shape[1] + 1)
    return float(np.mean((precision * hits).sum(axis=1) / np.maximum(hits.sum(axis=1), 1)))


def tweet_sample(n, seed=0):
    from sklearn.model_selection import train_test_split

    from skembed.datasets import load_tweet_sentiment

    texts, labels = load_tweet_sentiment()
    texts, _, labels, _ = train_test_split(
        list(texts), list(labels), train_size=n, stratify=labels, random_state=seed
    )
    return texts, np.asarray(labels)


def gensim_lsi_map(docs, y, k):
    """MAP of gensim's log-entropy LSI (``LogEntropyModel`` + ``LsiModel``, ``k`` topics)
    on the tokens of skembed's default analyzer, stop words kept (gensim has no such step)."""
    from gensim.corpora import Dictionary
    from gensim.matutils import corpus2dense
    from gensim.models import LogEntropyModel, LsiModel

    from skembed.text._analyzer import build_analyzer

    tokens = [build_analyzer()(d) for d in docs]
    dictionary = Dictionary(tokens)
    bows = [dictionary.doc2bow(t) for t in tokens]
    weighted = LogEntropyModel(bows)[bows]
    lsi = LsiModel(weighted, id2word=dictionary, num_topics=k, random_seed=0)
    X = corpus2dense(lsi[weighted], num_terms=k, num_docs=len(docs)).T
    return neighbour_map(X, y)


def quality(k, n_tweets):
    """Print classification accuracy and neighbour MAP of each setting on both corpora."""
    from _util import loadavg
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.preprocessing import StandardScaler

    texts, labels = load_bbc_news()
    corpora = {"BBC": (list(texts), np.asarray(labels)), "tweets": tweet_sample(n_tweets)}
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    print(f"n_components={k}; accuracy: 5-fold scaled logistic regression; MAP: same-label cosine")
    for name, settings in QUALITY_SETTINGS.items():
        row = []
        for corpus, (docs, y) in corpora.items():
            la0 = loadavg()
            lsa = TfidfLSA(n_components=k, random_state=0, n_jobs=1, **settings)
            pipe = make_pipeline(lsa, StandardScaler(), LogisticRegression(max_iter=2000))
            acc = cross_val_score(pipe, docs, y, cv=cv).mean()
            mean_ap = neighbour_map(lsa.fit_transform(docs), y)
            row.append(f"{corpus} acc {acc:.4f} MAP {mean_ap:.4f} (load {la0}->{loadavg()})")
        print(f"{name:<34}" + "  ".join(row), flush=True)
    row = [f"{c} MAP {gensim_lsi_map(d, y, k):.4f}" for c, (d, y) in corpora.items()]
    print(f"{'gensim log-entropy LSI':<34}" + "  ".join(row), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-components", type=int, default=100)
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--tweets", type=int, default=4000, help="tweets sampled (--quality)")
    args = parser.parse_args()
    if args.quality:
        return quality(args.n_components, args.tweets)
    texts, _ = load_bbc_news()
    params = {"sublinear_tf": True, "min_df": 2}
    k = args.n_components

    def ours():
        return TfidfLSA(
            n_components=k, weighting="tfidf", stop_words=None, random_state=0,
            dtype=np.float64, n_jobs=-1, **params,
        ).fit_transform(texts)  # fmt: skip

    def ref():
        return make_pipeline(
            TfidfVectorizer(**params), TruncatedSVD(n_components=k, random_state=0)
        ).fit_transform(texts)

    ours(), ref()  # warm-up (imports, caches)
    t_ours, t_ref = [], []
    for _ in range(args.repeats):  # interleaved so machine load affects both alike
        t = time.perf_counter()
        a = ours()
        t_ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        b = ref()
        t_ref.append(time.perf_counter() - t)
    mo, mr = statistics.median(t_ours), statistics.median(t_ref)
    print(f"BBC News: {len(texts)} documents, n_components={k}, {args.repeats} interleaved repeats")
    print(f"{'':<28}{'median s':>10}{'min s':>10}")
    print(f"{'skembed TfidfLSA':<28}{mo:>10.3f}{min(t_ours):>10.3f}")
    print(f"{'sklearn Tfidf+TruncatedSVD':<28}{mr:>10.3f}{min(t_ref):>10.3f}")
    print(f"time ratio skembed/sklearn (median): {mo / mr:.3f}   (goal <= 1.05)")
    print(f"max |difference| of outputs: {np.max(np.abs(a - b)):.3g}")


if __name__ == "__main__":
    main()
