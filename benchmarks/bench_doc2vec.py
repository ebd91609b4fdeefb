"""Doc2VecTransformer vs gensim 4.x Doc2Vec, side by side in one run.

Same settings for both tools (vector_size 100, window 5, negative 5,
min_count 5, sample 1e-3, alpha 0.025 -> 1e-4, 2 threads; PV-DM with
gensim's ``dm_mean=1``). Printed:

1. Training throughput on BBC News (2,225 documents, 0.88M tokens, in
   memory) and on the debdocs corpus (566,393 paragraphs = documents, 11.4M
   tokens, streamed from the .gz file: skembed ``LineCorpus``, gensim
   ``TaggedLineDocument``), for PV-DBOW and PV-DM: fit time (vocabulary +
   training) and raw words x epochs / fit time, and the skembed/gensim ratio.
2. BBC News (or, with ``--corpora tweets``, a stratified 4,000-tweet sample) 5-fold accuracy of ``make_pipeline(embedder, StandardScaler(),
   LogisticRegression())`` where the embedder's ``transform`` infers vectors
   (skembed) or runs gensim's ``infer_vector`` loop (gensim) -- the same
   pipeline for both, with ``fit_transform`` inferring the training folds.
3. Inference throughput (documents/s) on BBC News: skembed ``transform``
   (1 and 2 threads) vs gensim's ``infer_vector`` loop, and the determinism
   of each: max |difference| between two inferences of the same documents.
4. ``--parts selfrank``: gensim's PV-DM sanity check with its test's settings
   (``SELFRANK_SETTINGS``): per seed, the rank of document 0's inferred vector
   among the trained vectors of gensim's Lee corpus and the fraction of all
   training documents ranked first, then that fraction on the first 500 BBC
   News articles (``--archs`` picks PV-DM and/or PV-DBOW there).

The load average (``/proc/loadavg``) is printed beside every figure: on a
shared machine the ratios (both tools measured in the same minute) are the
comparable numbers.

Examples::

    python benchmarks/bench_doc2vec.py                     # everything (~30 min on 2 cores)
    python benchmarks/bench_doc2vec.py --parts throughput --corpora bbc
    python benchmarks/bench_doc2vec.py --debdocs-epochs 5 --debdocs /path/debdocs-11m.txt.gz
    python benchmarks/bench_doc2vec.py --parts accuracy --corpora tweets --epochs 20 \\
        --tools skembed,skembed-noshare,gensim        # short documents
    python benchmarks/bench_doc2vec.py --parts selfrank --seeds 10
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _util import bbc_tokens, default_debdocs, loadavg

DEFAULT_DEBDOCS = default_debdocs()
SETTINGS = dict(vector_size=100, window=5, negative=5, min_count=5, sample=1e-3)


class GensimDoc2Vec:
    """gensim Doc2Vec with its ``infer_vector`` loop as a scikit-learn transformer."""

    def __init__(self, dm=0, epochs=10, workers=2, seed=0):
        self.dm, self.epochs, self.workers, self.seed = dm, epochs, workers, seed

    def get_params(self, deep=True):
        return dict(dm=self.dm, epochs=self.epochs, workers=self.workers, seed=self.seed)

    def set_params(self, **params):
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def _words(self, doc):
        from skembed.text._analyzer import build_analyzer

        return doc if isinstance(doc, list) else build_analyzer()(doc)

    def fit(self, X, y=None):
        """``X``: documents (str or token lists), or the path of a one-document-per-line file."""
        from gensim.models.doc2vec import Doc2Vec, TaggedDocument, TaggedLineDocument

        if isinstance(X, str):
            docs = TaggedLineDocument(X)
        else:
            docs = [TaggedDocument(self._words(d), [i]) for i, d in enumerate(X)]
        self.model_ = Doc2Vec(
            docs, dm=self.dm, dm_mean=1, epochs=self.epochs, workers=self.workers,
            seed=self.seed, alpha=0.025, min_alpha=1e-4, **SETTINGS,
        )  # fmt: skip
        return self

    def transform(self, X):
        return np.array([self.model_.infer_vector(self._words(d)) for d in X])

    def fit_transform(self, X, y=None):
        return self.fit(X).transform(X)


def skembed_estimator(dm, epochs, n_jobs=2, shared_negatives=True):
    from skembed.text.word2vec._doc2vec import Doc2VecTransformer

    return Doc2VecTransformer(
        dm=dm, epochs=epochs, random_state=0, n_jobs=n_jobs, alpha=0.025, min_alpha=1e-4,
        shared_negatives=shared_negatives, **SETTINGS,
    )  # fmt: skip


#: the tools a run compares: skembed (defaults), skembed-noshare (``shared_negatives=False``,
#: gensim's per-word negatives for PV-DBOW), gensim
TOOLS = ("skembed", "gensim")


def make_tool(tool, dm, epochs):
    if tool == "gensim":
        return GensimDoc2Vec(dm, epochs)
    return skembed_estimator(dm, epochs, shared_negatives=tool != "skembed-noshare")


def bbc_documents():
    return bbc_tokens(return_labels=True)


def warm_up():
    """Compile (or load from the cache) every numba kernel variant outside the timings."""
    docs = [["a", "b", "c", "d"] * 3] * 4
    for dm in (0, 1):
        skembed_estimator(dm, 1).set_params(min_count=1).fit_transform(docs)


def throughput(corpus_name, data, n_tokens, epochs, archs):
    """Fit each tool on ``data(tool)``; print fit time, words/s and the ratio."""
    for dm in archs:
        arch = "PV-DM" if dm else "PV-DBOW"
        wps = {}
        for tool in TOOLS:
            la0 = loadavg()
            est = make_tool(tool, dm, epochs)
            t0 = time.perf_counter()
            est.fit(data("gensim" if tool == "gensim" else "skembed"))
            seconds = time.perf_counter() - t0
            wps[tool] = n_tokens * epochs / seconds
            extra = ""
            if tool != "gensim":
                extra = f"  (training loop only: {est.words_per_second_ / 1e6:.2f}M words/s)"
            print(
                f"{corpus_name:8s} {arch:8s} {tool:8s} fit {seconds:7.1f} s"
                f"  {wps[tool] / 1e6:5.2f}M words/s  load {la0}->{loadavg()}{extra}",
                flush=True,
            )
            del est
        for tool in TOOLS:
            if tool != "gensim" and "gensim" in wps:
                print(
                    f"{corpus_name:8s} {arch:8s} ratio {tool}/gensim: "
                    f"{wps[tool] / wps['gensim']:.2f}x",
                    flush=True,
                )


def tweet_documents(n=4000, seed=0):
    """A stratified ``n``-row sample of the tweets (median 16 words; ``compare``'s sample)."""
    from sklearn.model_selection import train_test_split

    from skembed.datasets import load_tweet_sentiment

    texts, labels = load_tweet_sentiment()
    texts, _, labels, _ = train_test_split(
        list(texts), list(labels), train_size=n, stratify=labels, random_state=seed
    )
    return texts, np.asarray(labels)


def accuracy(docs, y, epochs, archs, name="BBC"):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for dm in archs:
        for tool in TOOLS:
            la0 = loadavg()
            est = make_tool(tool, dm, epochs)
            pipe = make_pipeline(est, StandardScaler(), LogisticRegression(max_iter=2000))
            t0 = time.perf_counter()
            scores = cross_val_score(pipe, docs, y, cv=cv)
            print(
                f"{name} 5-fold {'PV-DM' if dm else 'PV-DBOW':8s} {tool:8s} epochs {epochs} accuracy "
                f"{scores.mean():.4f} ± {scores.std():.4f}  ({time.perf_counter() - t0:.0f} s, "
                f"load {la0}->{loadavg()})",
                flush=True,
            )


def inference(docs, epochs, archs):
    for dm in archs:
        name = "PV-DM" if dm else "PV-DBOW"
        ours = skembed_estimator(dm, epochs).fit(docs)
        theirs = GensimDoc2Vec(dm, epochs).fit(docs)
        for n_jobs in (1, 2):
            ours.set_params(n_jobs=n_jobs)
            la0 = loadavg()
            t0 = time.perf_counter()
            a = ours.transform(docs)
            s = time.perf_counter() - t0
            b = ours.transform(docs[::-1])[::-1]
            print(
                f"BBC infer {name:8s} skembed n_jobs={n_jobs} {len(docs) / s:8.0f} docs/s  "
                f"max|repeat diff| {np.abs(a - b).max():.2e}  load {la0}->{loadavg()}",
                flush=True,
            )
        la0 = loadavg()
        t0 = time.perf_counter()
        a = theirs.transform(docs)
        s = time.perf_counter() - t0
        b = theirs.transform(docs)
        print(
            f"BBC infer {name:8s} gensim infer_vector {len(docs) / s:8.0f} docs/s  "
            f"max|repeat diff| {np.abs(a - b).max():.2e}  load {la0}->{loadavg()}",
            flush=True,
        )


#: gensim's test_doc2vec.py settings of its PV-DM (mean) sanity check
SELFRANK_SETTINGS = dict(
    dm=1, vector_size=24, window=4, negative=10, hs=0, alpha=0.05, min_count=2, epochs=20
)


def self_rank_row(documents, dm, tool, seed):
    """``(rank of document 0, fraction ranked first)``: inferred vectors against trained ones."""
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    from skembed.text.word2vec._doc2vec import Doc2VecTransformer

    params = dict(SELFRANK_SETTINGS, dm=dm)
    if tool == "gensim":
        tagged = [TaggedDocument(words, [i]) for i, words in enumerate(documents)]
        model = Doc2Vec(tagged, **params, dm_mean=1, workers=1, seed=seed)
        trained = model.dv.vectors
        inferred = np.array([model.infer_vector(words) for words in documents])
    else:
        est = Doc2VecTransformer(**params, random_state=seed, n_jobs=2).fit(documents)
        trained, inferred = est.dv_.vectors, est.transform(documents)
    trained = trained / np.linalg.norm(trained, axis=1, keepdims=True)
    inferred = inferred / np.linalg.norm(inferred, axis=1, keepdims=True)
    sims = inferred @ trained.T
    ranks = (sims > np.diag(sims)[:, None]).sum(axis=1)
    return int(ranks[0]), float(np.mean(ranks == 0))


def self_rank(bbc_docs, archs, seeds):
    """Print gensim's sanity check (Lee corpus, PV-DM) and the BBC News self-rank per seed."""
    from gensim.test.utils import datapath
    from gensim.utils import simple_preprocess

    with open(datapath("lee_background.cor"), encoding="utf-8") as f:
        lee = [simple_preprocess(line) for line in f]
    corpora = [("Lee", lee, [1]), ("BBC-500", bbc_docs[:500], archs)]
    for name, documents, dms in corpora:
        for dm in dms:
            for tool in TOOLS:
                rows = [self_rank_row(documents, dm, tool, seed) for seed in range(seeds)]
                print(
                    f"{name:8s} {'PV-DM' if dm else 'PV-DBOW':8s} {tool:8s} doc-0 ranks "
                    f"{[r for r, _ in rows]}  first {[round(f, 3) for _, f in rows]}  "
                    f"load {loadavg()}",
                    flush=True,
                )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default="throughput,accuracy,inference")
    parser.add_argument(
        "--corpora", default="bbc,debdocs", help="bbc, debdocs (throughput), tweets (accuracy)"
    )
    parser.add_argument("--archs", default="0,1", help="dm values: 0 PV-DBOW, 1 PV-DM")
    parser.add_argument(
        "--tools", default="skembed,gensim", help="of skembed, skembed-noshare, gensim"
    )
    parser.add_argument("--epochs", type=int, default=10, help="BBC epochs (gensim's default)")
    parser.add_argument("--debdocs-epochs", type=int, default=5)
    parser.add_argument("--debdocs", default=DEFAULT_DEBDOCS)
    parser.add_argument("--seeds", type=int, default=10, help="seeds of --parts selfrank")
    args = parser.parse_args(argv)
    parts = args.parts.split(",")
    archs = [int(a) for a in args.archs.split(",")]
    global TOOLS
    TOOLS = tuple(args.tools.split(","))
    import gensim

    print(f"gensim {gensim.__version__}; cores {os.cpu_count()}; load at start {loadavg()}")
    print(f"settings: {SETTINGS}, alpha 0.025 -> 1e-4, 2 threads, gensim dm_mean=1")
    warm_up()
    docs, y = bbc_documents()
    if "throughput" in parts:
        if "bbc" in args.corpora:
            throughput("BBC", lambda tool: docs, sum(map(len, docs)), args.epochs, archs)
        if "debdocs" in args.corpora:
            from skembed.text import LineCorpus

            corpus = LineCorpus(args.debdocs)
            throughput(
                "debdocs",
                lambda tool: corpus if tool == "skembed" else args.debdocs,
                11_410_908,
                args.debdocs_epochs,
                archs,
            )
    if "accuracy" in parts:
        if "bbc" in args.corpora:
            accuracy(docs, y, args.epochs, archs)
        if "tweets" in args.corpora:
            accuracy(*tweet_documents(), args.epochs, archs, name="tweets (4,000)")
    if "inference" in parts:
        inference(docs, args.epochs, archs)
    if "selfrank" in parts:
        self_rank(docs, archs, args.seeds)
    print(f"load at end {loadavg()}")


if __name__ == "__main__":
    main()
