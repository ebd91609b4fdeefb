"""The transformer encoder's long-text handling: truncation policies and chunked windows."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from _helpers import BERT_DOCS as DOCS  # noqa: E402
from _helpers import build_tiny, hidden_states  # noqa: E402
from sklearn.base import clone  # noqa: E402

from skembed.text.transformer._bert import BertPooledEmbedder  # noqa: E402
from skembed.utils._compute import limit_threads  # noqa: E402

LONG = " ".join(f"word{i} alpha beta" for i in range(30))  # ~ 150 word pieces


@pytest.fixture(scope="module")
def tiny():
    return build_tiny()


def make(tiny, **params):
    params.setdefault("device", "cpu")
    params.setdefault("truncation", "truncate")
    params.setdefault("n_jobs", 1)  # a tiny model gains nothing from threads
    return BertPooledEmbedder(model=tiny, **params)


def test_truncation_policies(tiny):
    _, tok = tiny
    n = len(tok(LONG, add_special_tokens=False)["input_ids"])
    assert n > 62
    docs = [LONG, DOCS[0]]
    with pytest.raises(ValueError, match="1 of 2 documents are longer than max_length=64"):
        make(tiny, truncation="error").fit(docs).transform(docs)
    est = make(tiny, truncation="warn").fit(docs)
    assert est.n_truncated_ == 1  # counted on the training documents
    with pytest.warns(UserWarning, match="1 of 2 documents .* truncated"):
        warned = est.transform(docs)
    assert est.count_truncated([LONG, LONG, DOCS[0]]) == 2
    assert make(tiny).fit(DOCS).n_truncated_ == 0
    est = make(tiny, truncation="truncate").fit(docs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cut = est.transform(docs)
    assert est.n_truncated_ == 1 and est.count_truncated(docs) == 1
    np.testing.assert_array_equal(cut, warned)
    np.testing.assert_allclose(cut[0], hidden_states(tiny, LONG, 62)[-1].mean(0), atol=2e-5)
    est = make(tiny, truncation="chunk").fit(docs)
    est.transform(docs)
    assert est.n_truncated_ == 0 and est.count_truncated(docs) == 0


@pytest.mark.parametrize("pooling", ["mean", "max", "cls"])
def test_chunk_pools_every_window(tiny, pooling):
    model, tok = tiny
    ids = tok(LONG, add_special_tokens=False)["input_ids"]
    max_length, stride = 20, 5
    window, step = max_length - 2, max_length - 2 - stride
    starts = list(range(0, len(ids) - window + step, step))
    assert starts[-1] + window >= len(ids) and starts[-1] < len(ids)
    covered = set()
    sums, count, maxes, cls = 0.0, 0, [], []
    for s in starts:
        w = ids[s : s + window]
        covered.update(range(s, s + len(w)))
        seq = torch.tensor([[tok.cls_token_id, *w, tok.sep_token_id]])
        with limit_threads(1), torch.inference_mode():
            h = model(input_ids=seq).last_hidden_state[0].numpy()
        sums, count = sums + h.sum(0), count + len(h)
        maxes.append(h.max(0))
        cls.append(h[0])
    assert covered == set(range(len(ids)))  # every word piece is in some window
    expected = {"mean": sums / count, "max": np.max(maxes, 0), "cls": np.mean(cls, 0)}[pooling]
    est = make(tiny, truncation="chunk", max_length=max_length, stride=stride, pooling=pooling)
    out = est.fit([LONG]).transform([LONG, DOCS[0]])
    np.testing.assert_allclose(out[0], expected, atol=3e-5, rtol=0)
    # token output in chunk mode covers all word pieces
    toks = clone(est).fit([LONG]).transform_tokens([LONG])
    assert toks[0].shape == (len(ids), 32)


def test_stride_too_large_and_max_length_limit(tiny):
    with pytest.raises(ValueError, match="stride=30 must be smaller"):
        make(tiny, truncation="chunk", max_length=20, stride=30).fit(DOCS)
    with pytest.raises(ValueError, match="exceeds the model's position limit"):
        make(tiny, max_length=128).fit(DOCS)


# ----------------------------------------------------------------------------- late chunking
@pytest.mark.parametrize("pooling", ["mean", "cls", "max"])
def test_late_chunking_pools_spans_of_one_pass_by_hand(tiny, pooling):
    """A document of 40 word pieces at max_length=16 runs as one pass of 42 positions (the
    tiny model allows 64); the spans [CLS]+15, 16, 11+[SEP] are pooled and averaged."""
    _, tok = tiny
    doc = " ".join(LONG.split()[:30])
    ids = tok(doc, add_special_tokens=False)["input_ids"][:40]
    doc = tok.decode(ids)
    assert len(tok(doc, add_special_tokens=False)["input_ids"]) == 40
    est = make(tiny, pooling=pooling, truncation="late_chunking", max_length=16)
    out = est.fit([doc]).transform([doc])[0]
    h = hidden_states(tiny, doc)[-1]  # (42, 32): the whole document in one pass
    spans = [h[0:16], h[16:32], h[32:42]]
    one = {"mean": lambda s: s.mean(0), "cls": lambda s: s[0], "max": lambda s: s.max(0)}
    expected = np.mean([one[pooling](s) for s in spans], axis=0)
    np.testing.assert_allclose(out, expected, atol=1e-5)
    assert est.count_truncated([doc]) == 0


def test_late_chunking_of_a_short_document_is_its_plain_vector(tiny):
    plain = make(tiny, max_length=64).fit(DOCS).transform(DOCS)
    late = make(tiny, truncation="late_chunking", max_length=64).fit(DOCS).transform(DOCS)
    np.testing.assert_allclose(late, plain, atol=1e-6)


def test_late_chunking_beyond_the_positions_falls_back_to_passes(tiny):
    """LONG (~150 pieces) exceeds the 64 positions: overlapping passes, no warning, every
    chunk vector averaged; vectors of one cache namespace never serve another mode."""
    est = make(tiny, truncation="late_chunking", max_length=16, stride=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = est.fit([LONG]).transform([LONG])
    chunked = make(tiny, truncation="chunk", max_length=16, stride=8).fit([LONG])
    assert out.shape == (1, 32) and np.isfinite(out).all()
    assert np.abs(out - chunked.transform([LONG])).max() > 1e-3
    assert est._namespace() != chunked._namespace()
