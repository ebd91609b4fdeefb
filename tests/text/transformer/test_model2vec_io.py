"""model2vec directories on disk: a damaged directory gives one error naming the file and problem."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

from skembed.text import StaticEmbedder  # noqa: E402
from skembed.text.transformer._model2vec_io import load_model2vec, save_model2vec  # noqa: E402

TABLE = np.array([[9.0, 9.0], [1.0, 0.0], [0.0, 3.0]], dtype=np.float32)


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "b": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return tok


@pytest.fixture
def model_dir(tmp_path):
    path = tmp_path / "m2v"
    save_model2vec(path, TABLE, _tokenizer(), {"model_type": "model2vec", "normalize": False})
    return path


def _tensors(path, **tensors):
    from safetensors.numpy import save_file

    save_file(tensors, str(path / "model.safetensors"))


def test_an_intact_directory_loads_with_mapping_and_weights(model_dir):
    # mapping and weights fold in as row i = embeddings[mapping[i]] * weights[i]
    _tensors(
        model_dir,
        embeddings=TABLE[:2].copy(),
        mapping=np.array([0, 1, 1], dtype=np.int64),
        weights=np.array([1.0, 2.0, 0.5], dtype=np.float32),
    )
    vectors, tok, config = load_model2vec(model_dir)
    np.testing.assert_array_equal(vectors, [[9.0, 9.0], [2.0, 0.0], [0.5, 0.0]])
    assert config["model_type"] == "model2vec" and tok.get_vocab_size() == 3
    out = StaticEmbedder.from_pretrained(model_dir).transform(["a b"])
    np.testing.assert_allclose(out, [[1.25, 0.0]], rtol=1e-6)


def _truncate(path):
    file = path / "model.safetensors"
    file.write_bytes(file.read_bytes()[:-7])


def _garbage_tokenizer(path):
    (path / "tokenizer.json").write_text('{"model": 42}')


def _garbage_config(path):
    (path / "config.json").write_text("{not json")


def _list_config(path):
    (path / "config.json").write_text("[1, 2]")


def _mapping_out_of_range(path):
    _tensors(path, embeddings=TABLE, mapping=np.array([0, 1, 7], dtype=np.int64))


def _weights_wrong_length(path):
    _tensors(path, embeddings=TABLE, weights=np.ones(5, dtype=np.float32))


def _zero_width(path):
    _tensors(path, embeddings=np.zeros((3, 0), dtype=np.float32))


CASES = {
    # probe: (damage, file named, problem) -- before: SafetensorError without a path, a bare
    # Exception, JSONDecodeError, AttributeError, numpy IndexError, a broadcast error, and a
    # silent (n, 0) output
    "truncated safetensors": (_truncate, "model.safetensors", "truncated or damaged"),
    "garbage tokenizer.json": (_garbage_tokenizer, "tokenizer.json", "not a tokenizers"),
    "garbage config.json": (_garbage_config, "config.json", "not valid JSON"),
    "config.json not an object": (_list_config, "config.json", "not an object"),
    "mapping out of range": (_mapping_out_of_range, "model.safetensors", "'mapping' points"),
    "weights of the wrong length": (_weights_wrong_length, "model.safetensors", "'weights'"),
    "zero-width table": (_zero_width, "model.safetensors", "at least one row and one column"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_damaged_directory_names_the_file_and_problem(case, model_dir):
    damage, file, problem = CASES[case]
    damage(model_dir)
    with pytest.raises(ValueError, match=problem) as exc_info:
        StaticEmbedder.from_pretrained(model_dir)
    assert str(model_dir / file) in str(exc_info.value)
