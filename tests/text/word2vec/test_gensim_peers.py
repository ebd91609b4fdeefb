"""The word2vec family on gensim's own tests: its parameters, corpora and thresholds.

Ported from gensim 4.4's tests, each over several seeds (gensim runs each once, unseeded) and
every seed must pass; parameters gensim does not name keep skembed's defaults (e.g. shared
negatives):

- ``test_word2vec.py``: ``model_sanity`` of each architecture on the Lee background corpus
  ("bombings" within the 50 nearest words of "attacks"), ``test_evaluate_word_pairs``'s
  WordSim-353 ranges on ``head500.noblanks.cor.bz2``;
- ``test_fasttext.py``: ``test_cbow_neg_training``/``test_sg_neg_training`` (the 10 nearest
  words of "night" share at least two with gensim's recorded list);
- ``test_doc2vec.py``: ``model_sanity`` on the Lee corpus (300 news documents): the vector
  inferred for document 0 ranks document 0 among its 10 nearest trained vectors, the two
  Sydney-fire documents (0 and 8) are within 30 ranks of each other and closer to each other
  than to the Palestine document (29), the odd one out. Beyond gensim's test: document 0
  ranked first on at least 9 of 10 seeds (as gensim does on 10 of 10), and on BBC News the
  fraction of training documents whose inferred vector ranks their own trained vector first,
  against gensim's in the same run.
"""

import bz2

import numpy as np
import pytest

from skembed import FastTextTransformer, Word2VecTransformer
from skembed.evaluation import word_similarity
from skembed.text.word2vec._doc2vec import Doc2VecTransformer


@pytest.fixture(scope="module")
def lee_corpus_list(gensim_datapath):
    """gensim's ``lee_corpus_list``: ``simple_preprocess`` of each line of the Lee corpus."""
    from gensim.utils import simple_preprocess

    with open(gensim_datapath("lee_background.cor"), encoding="utf-8") as f:
        return [simple_preprocess(line) for line in f]


def failing_seeds(check, seeds):
    """``{seed: failures}`` of the seeds whose ``check(seed)`` lists failed assertions."""
    return {seed: failed for seed in seeds if (failed := check(seed))}


# --------------------------------------------------------------------------- Word2Vec, FastText
WORD_SEEDS = range(3)

#: test_word2vec.py's model_sanity calls: the architectures and their parameters
WORD2VEC_MODELS = {
    "sg_hs": dict(sg=1, window=4, hs=1, negative=0, min_count=5, epochs=10),
    "sg_neg": dict(sg=1, window=4, hs=0, negative=15, min_count=5, epochs=10),
    # one part: with two, this model's fits (alpha=0.1, 60 epochs) differed from run to run
    # of one seed, in the last digits of the loss, and one of them diverged at epoch 43
    "cbow_hs": dict(sg=0, alpha=0.1, window=2, hs=1, negative=0, min_count=5, epochs=60, n_parts=1),
    "cbow_neg": dict(
        sg=0, alpha=0.05, window=5, hs=0, negative=15, min_count=5, epochs=10, sample=0
    ),
}

#: test_fasttext.py's training tests: parameters and gensim's recorded neighbours of "night"
FASTTEXT_MODELS = {
    "cbow_neg": (
        dict(sg=0, alpha=0.05, bucket=10_000),
        [
            "night.",
            "night,",
            "eight",
            "fight",
            "month",
            "hearings",
            "Washington",
            "remains",
            "overnight",
            "running",
        ],
    ),  # fmt: skip
    "sg_neg": (
        dict(sg=1, alpha=0.025, bucket=40_000),
        [
            "night.",
            "night,",
            "eight",
            "overnight",
            "overnight.",
            "month",
            "land",
            "firm",
            "singles",
            "death",
        ],
    ),  # fmt: skip
}
FASTTEXT_COMMON = dict(
    vector_size=48, window=5, hs=0, negative=5, min_count=5, epochs=10, sample=1e-3,
    min_n=3, max_n=6, min_alpha=0.0,
)  # fmt: skip


@pytest.fixture(scope="module")
def lee_line_sentences(gensim_datapath):
    """gensim's ``LineSentence`` of the Lee corpus: whitespace tokens, case and punctuation kept."""
    with open(gensim_datapath("lee_background.cor"), encoding="utf-8") as f:
        return [line.split() for line in f]


def _word_sanity_failures(est, documents):
    """test_word2vec.py's ``model_sanity``: "bombings" within the 50 nearest of "attacks",
    and both among the 51 nearest of the vector of "attacks"."""
    wv = est.wv_
    ranked = [word for word, _ in wv.most_similar("attacks", topn=len(wv) - 1)]
    near = {word for word, _ in wv.similar_by_vector(wv["attacks"], topn=51)}
    failures = []
    if ranked.index("bombings") >= 50:
        failures.append(f"'bombings' ranked {ranked.index('bombings')}")
    if not {"attacks", "bombings"} <= near:
        failures.append("not both in the 51 nearest of the vector")
    return failures


@pytest.mark.slow
def test_gensim_evaluate_word_pairs_range(gensim_datapath):
    """gensim's ranges on WordSim-353: 0.1 < Pearson, Spearman < 1 and under 90% unknown
    pairs, for a CBOW model (gensim's default architecture) of its 500-line corpus, 20 epochs."""
    with bz2.open(gensim_datapath("head500.noblanks.cor.bz2"), "rt", encoding="utf-8") as f:
        corpus = [line.split() for line in f]
    for seed in WORD_SEEDS[:2]:
        est = Word2VecTransformer(sg=0, min_count=3, epochs=20, random_state=seed, n_jobs=2)
        scores = word_similarity(est.fit(corpus).wv_, gensim_datapath("wordsim353.tsv"))
        assert 0.1 < scores["pearson"] < 1.0, (seed, scores)
        assert 0.1 < scores["spearman"] < 1.0, (seed, scores)
        assert 0.0 <= scores["oov_ratio"] < 0.9, (seed, scores)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FASTTEXT_MODELS))
def test_gensim_fasttext_night_neighbours(lee_line_sentences, name):
    params, expected = FASTTEXT_MODELS[name]
    overlaps = []
    for seed in WORD_SEEDS[:2]:
        est = FastTextTransformer(**FASTTEXT_COMMON, **params, random_state=seed, n_jobs=2)
        est.fit(lee_line_sentences)
        words = [word for word, _ in est.wv_.most_similar("night", topn=10)]
        overlaps.append(len(set(words) & set(expected)))
    assert min(overlaps) >= 2, overlaps
    assert np.isfinite(est.wv_.vectors).all()


# --------------------------------------------------------------------------- Doc2Vec
#: gensim's model_sanity documents: two Sydney bushfire reports and one on Palestine
FIRE1, FIRE2, ALT1 = 0, 8, 29

#: gensim's test_doc2vec.py architectures that skembed has (PV-DM with a sum, dm_mean=0,
#: and dm_concat are not in skembed), with their parameters
DOC2VEC_MODELS = {
    "dbow_hs": dict(dm=0, hs=1, negative=0, min_count=2, epochs=20),
    "dmm_hs": dict(
        dm=1, vector_size=24, window=4, hs=1, negative=0, alpha=0.05, min_count=2, epochs=20
    ),
    "dbow_neg": dict(vector_size=16, dm=0, hs=0, negative=5, min_count=2, epochs=40),
    "dmm_neg": dict(
        dm=1, vector_size=24, window=4, hs=0, negative=10, alpha=0.05, min_count=2, epochs=20
    ),
}
#: seeds of the model_sanity ports; the first-rank test runs 10 (the goal: 9 of 10)
DOC_SEEDS = range(5)


def _unit(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def self_ranks(trained, inferred):
    """For each document, how many trained vectors are closer (cosine) to its inferred
    vector than its own trained vector: 0 when it ranks first."""
    sims = _unit(inferred) @ _unit(trained).T
    own = np.diag(sims)
    return (sims > own[:, None]).sum(axis=1)


def _doc_sanity_failures(est, documents):
    """gensim's ``model_sanity`` assertions on a fitted estimator: the names of those failing."""
    dv = _unit(est.dv_.vectors)
    inferred = est.transform(documents[:1])
    failures = []
    if self_ranks(est.dv_.vectors, inferred)[0] >= 10:
        failures.append("inferred doc 0 not in the top 10")
    order = np.argsort(-(dv @ dv[FIRE1]), kind="stable")
    if list(order).index(FIRE2) - 1 >= 30:  # gensim's ranking leaves the document itself out
        failures.append("doc 8 not within 30 of doc 0")
    sim = dv @ dv.T
    if not (sim[FIRE1, ALT1] < sim[FIRE1, FIRE2] and sim[FIRE2, ALT1] < sim[FIRE1, FIRE2]):
        failures.append("fire-alt closer than fire-fire")
    # gensim's doesnt_match: the key farthest from the mean of the unit vectors
    trio = [FIRE1, ALT1, FIRE2]
    mean = dv[trio].mean(axis=0)
    if trio[int(np.argmin(dv[trio] @ mean))] != ALT1:
        failures.append("doc 29 not the odd one out")
    return failures


#: each family's gensim model_sanity: estimator, gensim's models, the check, the seeds
SANITY = {
    "word2vec": (Word2VecTransformer, WORD2VEC_MODELS, _word_sanity_failures, WORD_SEEDS),
    "doc2vec": (Doc2VecTransformer, DOC2VEC_MODELS, _doc_sanity_failures, DOC_SEEDS),
}


@pytest.mark.parametrize(
    "family, name", [(family, name) for family in SANITY for name in sorted(SANITY[family][1])]
)
def test_gensim_model_sanity_on_the_lee_corpus(lee_corpus_list, family, name):
    """Every seed passes every assertion of gensim's ``model_sanity`` of that family."""
    make, models, sanity, seeds = SANITY[family]

    def check(seed):
        est = make(**models[name], random_state=seed, n_jobs=2).fit(lee_corpus_list)
        return sanity(est, lee_corpus_list)

    assert not failing_seeds(check, seeds)


@pytest.mark.parametrize("defaults", [False, True], ids=["gensim-settings", "skembed-defaults"])
def test_pv_dm_inferred_training_document_ranks_first(lee_corpus_list, defaults):
    """gensim 4.4 ranks document 0's inferred PV-DM vector first on 10 of 10 seeds with its
    test's settings (5 of 5 measured with its defaults); two-part training once ranked it 5th
    and 15th (an epoch of this corpus was one phase, see docs/doc2vec.md)."""
    params = dict(dm=1) if defaults else DOC2VEC_MODELS["dmm_neg"]
    first = []
    for seed in range(10):
        est = Doc2VecTransformer(**params, random_state=seed, n_jobs=2).fit(lee_corpus_list)
        first.append(self_ranks(est.dv_.vectors, est.transform(lee_corpus_list[:1]))[0] == 0)
    assert sum(first) >= 9, first


@pytest.mark.slow
@pytest.mark.parametrize("dm", [1, 0], ids=["PV-DM", "PV-DBOW"])
def test_bbc_news_inferred_self_rank_at_least_gensims(bbc_news, dm):
    """Fraction of 500 BBC News documents whose inferred vector ranks their trained vector
    first, gensim's test settings (PV-DBOW: the same ones with ``dm=0``), against gensim's
    figure in the same run (measured, seed 0: PV-DM 0.978 and gensim 0.978, 0.626 before the
    phases followed the corpus size; PV-DBOW 0.978 and 0.978)."""
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    from skembed.text._analyzer import build_analyzer

    analyzer = build_analyzer()
    documents = [analyzer(text) for text in bbc_news[0][:500]]
    params = dict(DOC2VEC_MODELS["dmm_neg"], dm=dm)
    ours = Doc2VecTransformer(**params, random_state=0, n_jobs=2).fit(documents)
    ours_first = np.mean(self_ranks(ours.dv_.vectors, ours.transform(documents)) == 0)
    tagged = [TaggedDocument(words, [i]) for i, words in enumerate(documents)]
    theirs = Doc2Vec(tagged, **params, dm_mean=1, workers=1, seed=0)
    inferred = np.array([theirs.infer_vector(words) for words in documents])
    theirs_first = np.mean(self_ranks(theirs.dv.vectors, inferred) == 0)
    assert ours_first >= theirs_first - 0.01, (ours_first, theirs_first)
    assert ours_first > 0.95
