"""sentence-transformers pipelines: equal to sentence-transformers 6 on models it saved itself."""

from __future__ import annotations

import importlib.util
import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
st = pytest.importorskip("sentence_transformers")

from _helpers import BERT_DOCS as DOCS  # noqa: E402
from _helpers import tiny_bert_dir  # noqa: E402

from skembed.text.transformer._bert import BertPooledEmbedder  # noqa: E402
from skembed.text.transformer._loading import ModelSource  # noqa: E402
from skembed.text.transformer._pipeline import (  # noqa: E402
    DenseLayer,
    StPipeline,
    apply_dense,
    read_pipeline,
    resolve_plan,
)

Transformer = st.base.modules.Transformer
Dense = st.base.modules.Dense
Normalize = st.base.modules.Normalize
Pooling = st.sentence_transformer.modules.Pooling
PROMPTS = {"query": "query: ", "document": "passage: "}


def save_st(path, modules, **kwargs):
    model = st.SentenceTransformer(modules=modules, device="cpu", **kwargs)
    model.save(str(path))
    return model


@pytest.fixture(scope="module")
def cls_dense_dir(tmp_path_factory):
    """(1) a random BERT + CLS pooling + Dense(32 -> 16, tanh) + Normalize."""
    torch.manual_seed(1)
    path = tmp_path_factory.mktemp("st_cls_dense")
    t = Transformer(tiny_bert_dir(), max_seq_length=64)
    dense = Dense(32, 16, activation_function=torch.nn.Tanh())
    save_st(path, [t, Pooling(32, pooling_mode="cls"), dense, Normalize()])
    return path


@pytest.fixture(scope="module")
def prompt_dir(tmp_path_factory):
    """(2) a random BERT + mean pooling without the prompt, query/document prompts."""
    path = tmp_path_factory.mktemp("st_mean_prompts")
    t = Transformer(tiny_bert_dir(), max_seq_length=64)
    pool = Pooling(32, pooling_mode="mean", include_prompt=False)
    save_st(path, [t, pool], prompts=PROMPTS, default_prompt_name="document")
    return path


def reference(path, docs, **kwargs):
    model = st.SentenceTransformer(str(path), device="cpu")
    return model.encode(docs, batch_size=2, convert_to_numpy=True, **kwargs)


def assert_same_vectors(ours, theirs):
    assert ours.shape == theirs.shape
    cos = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    assert cos.min() >= 0.99999, cos
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), np.linalg.norm(theirs, axis=1), 1e-4)


def embed(path, docs=DOCS, **params):
    params = {"device": "cpu", "truncation": "truncate", "n_jobs": 1, "batch_size": 2, **params}
    return BertPooledEmbedder(str(path), **params).fit(docs).transform(docs)


# ----------------------------------------------------------------------------- reading
def test_reads_cls_dense_normalize(cls_dense_dir):
    source = ModelSource("dir", str(cls_dense_dir), str(cls_dense_dir))
    pipe = read_pipeline(source, hidden_size=32)
    assert pipe.found and pipe.pooling == "cls" and pipe.normalize
    assert [(d.weight.shape, d.activation) for d in pipe.dense] == [((16, 32), "Tanh")]


def test_apply_dense_is_the_formula():
    w = np.array([[1.0, -2.0], [0.5, 0.0], [0.0, 3.0]], np.float32)
    b = np.array([0.1, 0.0, -1.0], np.float32)
    x = np.array([[1.0, 1.0], [2.0, -1.0]], np.float32)
    out = apply_dense(x, [DenseLayer(w, b, "Tanh")])
    np.testing.assert_allclose(out, np.tanh(x @ w.T + b), rtol=1e-6)
    assert out.shape == (2, 3) and out.dtype == np.float32


def test_plain_directory_keeps_mean_and_no_normalisation():
    plan = resolve_plan(
        StPipeline("plain"), {"pooling": None, "normalize": None}, decoder=False, width=32
    )
    assert (plan.pooling, plan.normalize, plan.prompt, plan.dense) == ("mean", False, "", ())


# ----------------------------------------------------------------------------- equality
def test_1_cls_dense_tanh_normalize_equals_sentence_transformers(cls_dense_dir):
    ours = embed(cls_dense_dir)
    assert_same_vectors(ours, reference(cls_dense_dir, DOCS))
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, rtol=1e-5)


def test_2_mean_without_prompt_equals_sentence_transformers(prompt_dir):
    for name in ("query", "document"):
        ours = embed(prompt_dir, prompt_name=name)
        assert_same_vectors(ours, reference(prompt_dir, DOCS, prompt_name=name))
    # the default prompt is the model's default_prompt_name ("document")
    assert_same_vectors(embed(prompt_dir), reference(prompt_dir, DOCS))
    query = embed(prompt_dir, prompt_name="query")
    assert np.abs(query - embed(prompt_dir, prompt_name="document")).max() > 1e-3


def test_explicit_prompt_equals_sentence_transformers(prompt_dir):
    ours = embed(prompt_dir, prompt="search for: ")
    assert_same_vectors(ours, reference(prompt_dir, DOCS, prompt="search for: "))


# ----------------------------------------------------------------------------- overrides
def test_explicit_pooling_overrides_with_a_warning(cls_dense_dir):
    with pytest.warns(UserWarning, match="overrides the model's own pooling \\('cls'"):
        ours = embed(cls_dense_dir, pooling="mean")
    model = st.SentenceTransformer(str(cls_dense_dir), device="cpu")
    model[1].pooling_mode = "mean"
    assert_same_vectors(ours, model.encode(DOCS, convert_to_numpy=True))


def test_normalize_false_overrides_the_normalize_module(cls_dense_dir):
    with pytest.warns(UserWarning, match="normalize"):
        ours = embed(cls_dense_dir, normalize=False)
    model = st.SentenceTransformer(str(cls_dense_dir), device="cpu")
    del model[3]
    assert_same_vectors(ours, model.encode(DOCS, convert_to_numpy=True))
    assert np.abs(np.linalg.norm(ours, axis=1) - 1).max() > 1e-3


def test_truncate_dim_then_normalize(cls_dense_dir):
    ours = embed(cls_dense_dir, truncate_dim=8)
    theirs = reference(cls_dense_dir, DOCS, truncate_dim=8, normalize_embeddings=True)
    assert_same_vectors(ours, theirs)
    assert ours.shape == (len(DOCS), 8)


def test_cache_key_follows_prompt(prompt_dir):
    est = BertPooledEmbedder(str(prompt_dir), device="cpu", cache="memory", n_jobs=1)
    a = est.set_params(prompt_name="query").fit(DOCS).transform(DOCS)
    b = est.set_params(prompt_name="document").fit(DOCS).transform(DOCS)
    assert np.abs(a - b).max() > 1e-3
    np.testing.assert_array_equal(a, est.set_params(prompt_name="query").fit(DOCS).transform(DOCS))


# ----------------------------------------------------------------------------- bad input
def test_unknown_prompt_name_lists_the_prompts(prompt_dir):
    with pytest.raises(ValueError, match=r"its prompts are: \['document', 'query'\]"):
        embed(prompt_dir, prompt_name="passage")


def test_prompt_and_prompt_name_together_are_refused(prompt_dir):
    with pytest.raises(ValueError, match="give one of them"):
        embed(prompt_dir, prompt="q: ", prompt_name="query")


def test_prompt_on_a_model_without_prompts_is_stated(cls_dense_dir):
    with pytest.warns(UserWarning, match="defines no prompts"):
        out = embed(cls_dense_dir, prompt="query: ")
    assert_same_vectors(out, reference(cls_dense_dir, DOCS, prompt="query: "))


def test_unknown_module_type_is_refused_by_name(cls_dense_dir, tmp_path):
    path = tmp_path / "m"
    shutil.copytree(cls_dense_dir, path)
    modules = json.loads((path / "modules.json").read_text())
    modules[2]["type"] = "sentence_transformers.base.modules.router.Router"
    (path / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(ValueError, match="'sentence_transformers.base.modules.router.Router'"):
        embed(path)


def test_dense_weights_that_do_not_fit_the_hidden_size(cls_dense_dir, tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "m"
    shutil.copytree(cls_dense_dir, path)
    weights = {"linear.weight": np.zeros((16, 40), np.float32)}
    save_file(weights, str(path / "2_Dense" / "model.safetensors"))
    with pytest.raises(ValueError, match="takes 40 inputs but the vectors before it have 32"):
        embed(path)


def test_truncate_dim_above_the_width(cls_dense_dir):
    with pytest.raises(ValueError, match="truncate_dim=17 exceeds the width .* \\(16\\)"):
        embed(cls_dense_dir, truncate_dim=17)


# ----------------------------------------------------------------------------- decoders
#: two layers of width 32, grouped-query attention: a forward pass of milliseconds
SMALL_DECODER = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "max_position_embeddings": 256,
}
INSTRUCTION = "Instruct: Given a web search query, retrieve relevant passages\nQuery: "


def byte_bpe_tokenizer(path):
    """A small byte-level BPE trained on the test documents, appending <|endoftext|> as
    Qwen3-Embedding's tokenizer does (the token its last-token pooling reads)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(DOCS * 4 + [INSTRUCTION] * 4, trainer)
    eos = tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.TemplateProcessing(
        single="$A <|endoftext|>", special_tokens=[("<|endoftext|>", eos)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    fast.save_pretrained(path)
    return fast


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory):
    """(3) a random Qwen3 decoder + last-token pooling + Normalize, an instruction prompt."""
    from transformers import Qwen3Config, Qwen3Model

    raw = tmp_path_factory.mktemp("qwen_raw")
    tok = byte_bpe_tokenizer(raw)
    torch.manual_seed(3)
    config = Qwen3Config(
        vocab_size=len(tok),
        **SMALL_DECODER,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    Qwen3Model(config).save_pretrained(raw)
    path = tmp_path_factory.mktemp("st_qwen")
    t = Transformer(str(raw), max_seq_length=128)
    pool = Pooling(32, pooling_mode="lasttoken")
    save_st(path, [t, pool, Normalize()], prompts={"query": INSTRUCTION, "document": ""})
    return path


def test_3_qwen3_lasttoken_with_instruction_equals_sentence_transformers(qwen_dir):
    for name in ("query", "document"):
        ours = embed(qwen_dir, prompt_name=name)
        assert_same_vectors(ours, reference(qwen_dir, DOCS, prompt_name=name))
    est = BertPooledEmbedder(str(qwen_dir), device="cpu").fit(DOCS)
    assert est._decoder and est._pool_mode == "lasttoken" and est._suffix  # <|endoftext|>


# ----------------------------------------------------------------------------- backends
BACKENDS = [
    pytest.param(name, marks=pytest.mark.skipif(
        importlib.util.find_spec(name) is None, reason=f"{name} missing"))
    for name in ("onnxruntime", "openvino")
]  # fmt: skip


@pytest.fixture
def export_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SKEMBED_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "exports"))


@pytest.mark.parametrize("package", BACKENDS)
def test_backends_run_the_whole_pipeline(cls_dense_dir, prompt_dir, package, export_cache):
    """Pooling, Dense and Normalize run after the exported encoder on every backend, so the
    exported model's vectors are sentence-transformers' (int8: within today's tolerance)."""
    backend = "onnx" if package == "onnxruntime" else "openvino"
    assert_same_vectors(embed(cls_dense_dir, backend=backend), reference(cls_dense_dir, DOCS))
    ours = embed(prompt_dir, backend=backend, prompt_name="query")
    assert_same_vectors(ours, reference(prompt_dir, DOCS, prompt_name="query"))
    low = embed(cls_dense_dir, backend=backend, quantize="int8")
    theirs = reference(cls_dense_dir, DOCS)
    assert (low * theirs).sum(1).min() >= 0.95  # unit vectors: the cosine


def assert_exported_equals_sentence_transformers(path, backend):
    """Both prompts in float32 (the cosine bound of ``assert_same_vectors``), the query in int8
    (within the int8 tolerance of ``test_backends_run_the_whole_pipeline``)."""
    for name in ("query", "document"):
        ours = embed(path, backend=backend, prompt_name=name)
        assert_same_vectors(ours, reference(path, DOCS, prompt_name=name))
    low = embed(path, backend=backend, quantize="int8", prompt_name="query")
    theirs = reference(path, DOCS, prompt_name="query")
    assert low.shape == theirs.shape
    assert (low * theirs).sum(1).min() >= 0.95  # unit vectors: the cosine


@pytest.mark.parametrize("package", BACKENDS)
def test_3_qwen3_on_the_exported_backends_equals_sentence_transformers(
    qwen_dir, package, export_cache
):
    """The export takes each row's positions (counted from its first real token of a batch
    padded on the left), so the last token's vector is the one torch computes."""
    backend = "onnx" if package == "onnxruntime" else "openvino"
    assert_exported_equals_sentence_transformers(qwen_dir, backend)
    est = BertPooledEmbedder(str(qwen_dir), device="cpu", backend=backend).fit(DOCS)
    assert "position_ids" in est._runner.input_names


@pytest.fixture(scope="module")
def gemma_dir(tmp_path_factory):
    """(4) a random bidirectional Gemma3 text encoder (EmbeddingGemma's layout): mean pooling,
    two Dense layers (32 -> 48 -> 24, identity), Normalize, query/document prompts."""
    from transformers import Gemma3TextConfig, Gemma3TextModel

    raw = tmp_path_factory.mktemp("gemma_raw")
    tok = byte_bpe_tokenizer(raw)
    torch.manual_seed(4)
    config = Gemma3TextConfig(
        vocab_size=len(tok),
        **SMALL_DECODER,
        sliding_window=16,
        use_bidirectional_attention=True,
        pad_token_id=tok.pad_token_id,
    )
    Gemma3TextModel(config).save_pretrained(raw)
    path = tmp_path_factory.mktemp("st_gemma")
    modules = [
        Transformer(str(raw), max_seq_length=128),
        Pooling(32, pooling_mode="mean"),
        Dense(32, 48, bias=False, activation_function=torch.nn.Identity()),
        Dense(48, 24, bias=False, activation_function=torch.nn.Identity()),
        Normalize(),
    ]
    prompts = {"query": "task: search result | query: ", "document": "title: none | text: "}
    save_st(path, modules, prompts=prompts)
    return path


def test_4_gemma3_mean_two_dense_prompts_equals_sentence_transformers(gemma_dir):
    for name in ("query", "document"):
        ours = embed(gemma_dir, prompt_name=name)
        assert_same_vectors(ours, reference(gemma_dir, DOCS, prompt_name=name))
    assert ours.shape == (len(DOCS), 24)


@pytest.mark.parametrize("package", BACKENDS)
def test_4_gemma3_on_the_exported_backends_equals_sentence_transformers(
    gemma_dir, package, export_cache
):
    """Gemma3's bidirectional masks are built without torch.vmap while tracing; the longest
    document is longer than the sliding window, so the window's mask is exercised too."""
    backend = "onnx" if package == "onnxruntime" else "openvino"
    est = BertPooledEmbedder(str(gemma_dir), device="cpu", backend=backend).fit(DOCS)
    assert max(len(ids) for ids in est._tokenize(DOCS)) > est.model_.config.sliding_window
    assert "position_ids" not in est._runner.input_names  # an encoder: padded on the right
    assert_exported_equals_sentence_transformers(gemma_dir, backend)


def test_decoder_batches_are_padded_left_whatever_the_tokenizer_says(qwen_dir, tmp_path):
    """Last-token pooling must read a real token: skembed pads a decoder's batches on the left
    with each row's own positions, even where the tokenizer's padding_side says right, so a
    document's vector does not depend on its batch."""
    path = tmp_path / "right"
    shutil.copytree(qwen_dir, path)
    config = json.loads((path / "tokenizer_config.json").read_text())
    (path / "tokenizer_config.json").write_text(json.dumps({**config, "padding_side": "right"}))
    batched = embed(path, batch_size=4, prompt_name="query")
    alone = embed(path, batch_size=1, prompt_name="query")
    np.testing.assert_allclose(batched, alone, atol=1e-5)
    assert_same_vectors(batched, reference(qwen_dir, DOCS, prompt_name="query"))
