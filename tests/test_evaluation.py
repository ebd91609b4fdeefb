import numpy as np
import pytest

from skembed import KeyedVectors
from skembed.evaluation import load_analogies, load_word_pairs, word_analogy, word_similarity


def test_word_similarity_hand_computed(tmp_path):
    kv = KeyedVectors(np.array([[1, 0], [1, 1], [0, 1]]), ["a", "b", "c"])
    path = tmp_path / "pairs.tsv"
    path.write_text("# comment\nA\tb\t5\na\tc\t1\nb\tc\t4\na\tzz\t3\n")
    pairs, scores = load_word_pairs(path)
    assert pairs[0] == ("A", "b") and scores.tolist() == [5, 1, 4, 3]
    res = word_similarity(kv, path)
    # cosines: a-b 0.707, a-c 0, b-c 0.707 -> ranks (2.5, 1, 2.5) vs gold (3, 1, 2)
    assert res["n_pairs"] == 3 and res["oov_ratio"] == pytest.approx(0.25)
    assert res["spearman"] == pytest.approx(0.8660254, abs=1e-6)
    (tmp_path / "bad.tsv").write_text("a\tb\n")
    with pytest.raises(ValueError, match="line 1"):
        load_word_pairs(tmp_path / "bad.tsv")


def test_word_analogy_hand_computed(tmp_path):
    # man:king :: woman:queen with orthogonal "royal" and "female" directions
    words = ["man", "king", "woman", "queen", "apple"]
    vecs = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 0], [0, 0, 0, 1]], float)
    kv = KeyedVectors(vecs, words)
    path = tmp_path / "q.txt"
    path.write_text(
        ": royal\nman king woman queen\nman king apple woman\n: oov\nman king woman prince\n"
    )
    assert load_analogies(path) == {
        "royal": [("man", "king", "woman", "queen"), ("man", "king", "apple", "woman")],
        "oov": [("man", "king", "woman", "prince")],
    }
    for method in ("3cosadd", "3cosmul"):
        res = word_analogy(kv, path, method=method)
        assert res["n_questions"] == 2 and res["oov_ratio"] == pytest.approx(1 / 3)
        assert res["sections"]["royal"] == pytest.approx(0.5)  # first right, second wrong
    with pytest.raises(ValueError, match="3cosadd"):
        word_analogy(kv, path, method="cos")


def test_matches_gensim_evaluation(gensim_datapath):
    w2v = pytest.importorskip("gensim.models.word2vec")
    model = w2v.Word2Vec(
        w2v.LineSentence(gensim_datapath("lee_background.cor")),
        vector_size=20,
        min_count=2,
        epochs=2,
        seed=1,
        workers=1,
    )
    kv = KeyedVectors(model.wv.vectors, model.wv.index_to_key)
    pearson, spearman, oov = model.wv.evaluate_word_pairs(gensim_datapath("wordsim353.tsv"))
    ours = word_similarity(kv, gensim_datapath("wordsim353.tsv"))
    assert ours["spearman"] == pytest.approx(spearman.statistic, abs=1e-9)
    assert ours["pearson"] == pytest.approx(pearson.statistic, abs=1e-6)
    assert 100 * ours["oov_ratio"] == pytest.approx(oov)
    score, sections = model.wv.evaluate_word_analogies(gensim_datapath("questions-words.txt"))
    ours = word_analogy(kv, gensim_datapath("questions-words.txt"))
    n_theirs = sum(len(s["correct"]) + len(s["incorrect"]) for s in sections[:-1])
    assert ours["n_questions"] == n_theirs
    assert ours["accuracy"] == pytest.approx(score, abs=1e-9)
