"""SetFit's training pieces (``skembed/text/transformer/_finetune.py``): the schedule, the
mixed-precision choice and the sentence-transformers directory."""

import json

import pytest

torch = pytest.importorskip("torch")


def test_learning_rate_warms_up_then_decays_to_zero():
    from skembed.text.transformer._finetune import warmup_then_decay

    assert [warmup_then_decay(s, 2, 6) for s in range(7)] == [0.5, 1.0, 1.0, 0.75, 0.5, 0.25, 0.0]
    assert [warmup_then_decay(s, 1, 1) for s in range(2)] == [1.0, 0.0]  # no ZeroDivisionError


@pytest.mark.parametrize(
    "flags, expected", [((False, False), "no"), ((True, False), "bf16"), ((False, True), "bf16")]
)
def test_auto_mixed_precision_follows_the_cpus_bfloat16(monkeypatch, flags, expected):
    from skembed.text.transformer._finetune import resolve_mixed_precision

    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: flags[0], raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: flags[1], raising=False)
    assert resolve_mixed_precision("auto", "cpu") == expected
    assert resolve_mixed_precision("no", "cpu") == "no"
    assert resolve_mixed_precision("bf16", "cpu") == "bf16"


class _Saved:
    def __init__(self, name):
        self.name = name

    def save_pretrained(self, path):
        (path / f"{self.name}.json").write_text("{}")


class _Tuned:
    model, tokenizer, hidden_size = _Saved("config"), _Saved("tokenizer"), 32


@pytest.mark.parametrize("normalize", [False, True])
def test_sentence_transformers_directory_layout(tmp_path, normalize):
    from skembed.text.transformer._finetune import save_sentence_transformers

    save_sentence_transformers(
        _Tuned(), tmp_path / "out", pooling="cls", normalize=normalize, max_seq_length=64
    )
    out = tmp_path / "out"
    pooling = json.loads((out / "1_Pooling" / "config.json").read_text())
    assert pooling["word_embedding_dimension"] == 32
    assert pooling["pooling_mode_cls_token"] and not pooling["pooling_mode_mean_tokens"]
    modules = json.loads((out / "modules.json").read_text())
    assert [m["type"].rsplit(".", 1)[1] for m in modules] == (
        ["Transformer", "Pooling", "Normalize"] if normalize else ["Transformer", "Pooling"]
    )
    assert json.loads((out / "sentence_bert_config.json").read_text())["max_seq_length"] == 64
    assert (out / "config.json").is_file() and (out / "tokenizer.json").is_file()
