"""Loading a transformer encoder: model directories, (model, tokenizer) pairs, refusals."""

from __future__ import annotations

import shutil

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from _helpers import BERT_DOCS as DOCS  # noqa: E402
from _helpers import build_tiny, save_tiny  # noqa: E402

from skembed.text.transformer._bert import BertPooledEmbedder  # noqa: E402


@pytest.fixture(scope="module")
def tiny():
    return build_tiny()


@pytest.fixture(scope="module")
def tiny_dir(tiny, tmp_path_factory):
    """The tiny model saved as a local model directory."""
    return save_tiny(tiny, tmp_path_factory.mktemp("tiny_bert"))


def test_model_dir_missing_files_are_named(tiny_dir, tmp_path):
    for missing in ("model.safetensors", "config.json", "tokenizer.json"):
        path = tmp_path / missing
        shutil.copytree(tiny_dir, path)
        (path / missing).unlink()
        if missing == "tokenizer.json":
            (path / "vocab.txt").unlink(missing_ok=True)
        with pytest.raises(FileNotFoundError, match=missing.replace(".", r"\.")):
            BertPooledEmbedder(model=str(path), device="cpu").fit(DOCS)
    with pytest.raises(FileNotFoundError, match="no such directory"):
        BertPooledEmbedder(model=str(tmp_path / "nope"), device="cpu").fit(DOCS)


def test_decoder_is_embedded_by_its_last_token_and_refused_by_setfit(tiny):
    """A causal LM pools its last token (left padding keeps it in the last column); SetFit,
    which fine-tunes a bidirectional encoder, refuses it by name."""
    from transformers import GPT2Config, GPT2Model

    from skembed.text.transformer._setfit import SetFitEmbedder

    _, tok = tiny
    config = GPT2Config(n_embd=16, n_layer=1, n_head=2, vocab_size=len(tok), n_positions=64)
    gpt = GPT2Model(config).eval()
    est = BertPooledEmbedder(model=(gpt, tok), device="cpu", truncation="truncate").fit(DOCS)
    out = est.transform(DOCS)
    for i, doc in enumerate(DOCS):
        ids = tok(doc, return_tensors="pt")
        with torch.no_grad():
            last = gpt(**ids).last_hidden_state[0, -1].numpy()
        assert abs(out[i] - last).max() < 1e-5
    with pytest.raises(ValueError, match="decoder-only"):
        SetFitEmbedder(model=(gpt, tok), device="cpu", n_pairs=4).fit(DOCS, [0, 1, 0, 1])
    with pytest.raises(TypeError, match=r"\(model, tokenizer\)"):
        BertPooledEmbedder(model=(gpt, tok, 1), device="cpu").fit(DOCS)


def test_loaded_pair_key_tells_tokenizers_of_one_vocabulary_apart(tiny):
    """Same weights and vocabulary size, different casing: two weight-cache entries, and the
    lower-casing tokenizer maps "Cat" and "cat" to one id while the cased one does not."""
    from transformers import BertTokenizer

    from skembed.text.transformer._loading import resolve_model

    model, tok = tiny
    cased = BertTokenizer(vocab=tok.get_vocab(), do_lower_case=False)
    assert len(cased) == len(tok)
    assert resolve_model((model, tok)).key != resolve_model((model, cased)).key
    assert resolve_model((model, tok)).key == resolve_model((model, tok)).key
    assert tok("Cat")["input_ids"] != cased("Cat")["input_ids"]


def test_model_needing_its_own_code_is_refused_without_a_prompt(tiny_dir, tmp_path):
    import json

    path = tmp_path / "remote"
    shutil.copytree(tiny_dir, path)
    config = json.loads((path / "config.json").read_text())
    config["model_type"] = "custom_x"
    config["auto_map"] = {"AutoConfig": "x.XConfig", "AutoModel": "x.XModel"}
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="needs its own Python code \\(trust_remote_code\\)"):
        BertPooledEmbedder(model=str(path), device="cpu").fit(DOCS)
