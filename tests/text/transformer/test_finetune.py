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


class Clock:
    """A perf_counter that advances by the given seconds at each call."""

    def __init__(self, *steps):
        self.now, self.steps = 0.0, list(steps)

    def __call__(self):
        if self.steps:
            self.now += self.steps.pop(0)
        return self.now


def run_plan(monkeypatch, step_seconds, **plan):
    """A StepPlan stepped until it is finished; the step it ended at and the lines it wrote."""
    from skembed.text.transformer import _finetune

    monkeypatch.setattr(_finetune.time, "perf_counter", Clock(0.0, *step_seconds))
    p = _finetune.StepPlan(**plan)
    lines = []
    p.bar.write = lines.append
    while not p.finished:
        p.step_done(plan["batch_size"])
    return p, lines


def test_the_estimate_follows_the_probe_steps_and_no_limit_keeps_every_step(monkeypatch):
    # the first step 5 s (warm-up), then 2 s per step: 16 pairs / 2 s = 8 pairs/s
    p, lines = run_plan(
        monkeypatch,
        [5.0] + [2.0] * 19,
        n_steps_epoch=10,
        epochs=2,
        batch_size=16,
        max_time=None,
        verbose=1,
        name="SetFitEmbedder",
    )
    assert p.done == p.total == 20 and p.warmup == 2
    assert lines == [
        "SetFitEmbedder: about 32 s more on this machine at 8 pairs/s (20 steps of 16 pairs in all)"
    ]


def test_max_time_shrinks_the_plan_to_the_steps_that_fit(monkeypatch):
    # 5 s first step, then 2 s per step; after 4 steps (11 s) 19 s are left: 9 more steps
    p, lines = run_plan(
        monkeypatch,
        [5.0] + [2.0] * 50,
        n_steps_epoch=10,
        epochs=3,
        batch_size=16,
        max_time=30.0,
        verbose=1,
        name="SetFitEmbedder",
    )
    assert p.total == p.done == 13
    assert p.warmup == 1  # 10% of the shrunk plan
    assert lines[0].endswith("(13 steps of 16 pairs in all)")


def test_max_time_shorter_than_the_first_step_is_refused_with_the_step_measured(monkeypatch):
    with pytest.raises(
        ValueError,
        match=r"max_time=2 s is shorter than one training step on this machine "
        r"\(the first took 5.0 s for 16 pairs\): use max_time >= 20",
    ):
        run_plan(
            monkeypatch,
            [5.0],
            n_steps_epoch=10,
            epochs=1,
            batch_size=16,
            max_time=2.0,
            verbose=0,
            name="SetFitEmbedder",
        )
