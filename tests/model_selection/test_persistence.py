"""Tests of ``skembed/model_selection/_persistence.py`` (moved from ``tests/model_selection/test_model_selection.py`` to the mirrored path)."""

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skembed.model_selection import (
    compare_embedders,
    leaderboard,
    load_pipeline,
    save_pipeline,
)
from skembed.text.count._lsa import TfidfLSA

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def bbc():
    from skembed.datasets import load_bbc_news

    texts, labels = load_bbc_news()
    return texts[::8], labels[::8]  # 279 articles, every class


def _double(X):
    return X * 2


def test_best_pipelines_round_trip_with_identical_outputs(bbc, tmp_path):
    texts, labels = bbc
    embedders = {
        "lsa": (TfidfLSA(random_state=0), {"n_components": [10, 20]}),
        "tfidf": TfidfVectorizer(sublinear_tf=True),
    }
    results, best = compare_embedders(texts, labels, embedders, cv=2, return_best=True)
    assert list(best) == leaderboard(results)["embedder"].tolist()
    lsa = best["lsa"]
    params = leaderboard(results).set_index("embedder").loc["lsa", "params"]
    assert (lsa["embed"].n_components, lsa["clf"].C) == (params["n_components"], params["clf__C"])
    new = ["Shares fell as the bank cut its forecast.", "The striker scored twice in the final."]
    for name, pipe in best.items():
        path = tmp_path / f"{name}.model"
        fmt = save_pipeline(pipe, path)
        back = load_pipeline(path, allow_pickle=fmt == "joblib")
        got, want = back[:-1].transform(new), pipe[:-1].transform(new)
        if hasattr(want, "toarray"):  # TF-IDF passes sparse and unscaled
            got, want = got.toarray(), want.toarray()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(back.predict_proba(texts), pipe.predict_proba(texts))
    # scikit-learn's own types need no pickle: skops, loaded without trusting anything by hand
    assert save_pipeline(best["tfidf"], tmp_path / "t.skops") == "skops"


def test_tfidf_lsa_pipeline_saves_with_skops(bbc, tmp_path):
    texts, labels = bbc
    pipe = make_pipeline(TfidfLSA(n_components=5, random_state=0), LogisticRegression()).fit(
        texts, labels
    )
    assert save_pipeline(pipe, tmp_path / "lsa.skops") == "skops"
    loaded = load_pipeline(tmp_path / "lsa.skops")
    np.testing.assert_array_equal(loaded.predict_proba(texts[:20]), pipe.predict_proba(texts[:20]))


def test_load_pipeline_refuses_pickles_and_foreign_types(tmp_path):
    from sklearn.preprocessing import FunctionTransformer

    pipe = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(["aa bb", "cc dd"], [0, 1])
    assert save_pipeline(pipe, tmp_path / "p.joblib", format="joblib") == "joblib"
    with pytest.raises(ValueError, match="pickle .* pass allow_pickle=True"):
        load_pipeline(tmp_path / "p.joblib")
    assert load_pipeline(tmp_path / "p.joblib", allow_pickle=True).predict(["aa"]).tolist() == [0]
    import skops.io as sio

    sio.dump(FunctionTransformer(_double), tmp_path / "f.skops")
    with pytest.raises(ValueError, match="test_persistence._double"):
        load_pipeline(tmp_path / "f.skops")
    with pytest.raises(FileNotFoundError):
        load_pipeline(tmp_path / "missing.skops")


def test_a_full_disk_raises_and_never_falls_back_to_a_pickle(tmp_path, monkeypatch):
    import errno

    import skops.io as sio

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    pipe = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(["aa bb", "cc dd"], [0, 1])
    monkeypatch.setattr(sio, "dump", full)
    with pytest.raises(OSError, match="No space left"):
        save_pipeline(pipe, tmp_path / "best.skops")
    assert list(tmp_path.iterdir()) == []  # no pickle, no temporary file


def test_joblib_only_for_a_type_skops_cannot_represent_and_it_says_which(tmp_path):
    from sklearn.preprocessing import FunctionTransformer

    pipe = make_pipeline(FunctionTransformer(_double), LogisticRegression())
    pipe.fit(np.eye(4), [0, 1, 0, 1])
    with pytest.warns(UserWarning, match="test_persistence._double"):
        assert save_pipeline(pipe, tmp_path / "f.model") == "joblib"
    with pytest.raises(ValueError, match="skops cannot save .*test_persistence._double"):
        save_pipeline(pipe, tmp_path / "g.model", format="skops")


def test_a_state_that_fails_its_checks_raises_instead_of_a_quiet_pickle(tmp_path):
    lsa = TfidfLSA(n_components=2, random_state=0).fit(["aa bb cc", "bb cc dd", "dd ee aa"])
    lsa.singular_values_ = lsa.singular_values_[:1]  # breaks its own schema
    with pytest.raises(ValueError, match="does not load back: .*singular_values_"):
        save_pipeline(lsa, tmp_path / "lsa.skops")


def test_saved_files_follow_the_umask(tmp_path):
    import os

    pipe = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(["aa bb", "cc dd"], [0, 1])
    old = os.umask(0o027)
    try:
        save_pipeline(pipe, tmp_path / "best.skops")
        save_pipeline(pipe, tmp_path / "best.joblib", format="joblib")
    finally:
        os.umask(old)
    assert oct((tmp_path / "best.skops").stat().st_mode & 0o777) == oct(0o640)
    assert oct((tmp_path / "best.joblib").stat().st_mode & 0o777) == oct(0o640)


def test_the_size_measured_is_the_size_written_and_vocabularies_are_compressed(bbc, tmp_path):
    import zipfile

    import skops.io as sio

    from skembed.model_selection._persistence import saved_size_bytes

    texts, labels = bbc
    pipe = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(texts, labels)
    assert save_pipeline(pipe, tmp_path / "best.skops") == "skops"
    written = (tmp_path / "best.skops").stat().st_size
    # equal to a few bytes: skops' schema.json records object ids, which deflate differently
    assert abs(saved_size_bytes(pipe) - written) <= written / 1000
    sio.dump(pipe, tmp_path / "plain.skops")  # skops' default: members stored as they are
    plain = (tmp_path / "plain.skops").stat().st_size
    assert written < plain / 3, (written, plain)
    with zipfile.ZipFile(tmp_path / "best.skops") as archive:
        info = archive.getinfo("schema.json")
    assert info.compress_type == zipfile.ZIP_DEFLATED and info.compress_size < info.file_size / 3
    np.testing.assert_array_equal(
        load_pipeline(tmp_path / "best.skops").predict_proba(texts[:20]),
        pipe.predict_proba(texts[:20]),
    )


def test_vocabularies_are_stored_as_arrays_not_as_json_entries(bbc, tmp_path):
    # skops wrote a {word: id} dict entry by entry into schema.json (about 100 bytes and one
    # parsed node per word, twice for TfidfLSA: its own and the vectorizer's copy)
    import zipfile

    from skembed import TfidfLSA, Word2VecTransformer

    texts, _ = bbc
    for est in (TfidfLSA(n_components=20), Word2VecTransformer(epochs=1, random_state=0)):
        est.fit(texts)
        path = tmp_path / f"{type(est).__name__}.skops"
        assert save_pipeline(est, path) == "skops"
        with zipfile.ZipFile(path) as archive:
            schema = archive.getinfo("schema.json").file_size
        assert len(est.vocabulary_) > 2_000 and schema < 60_000, (type(est).__name__, schema)
        back = load_pipeline(path)
        assert back.vocabulary_ == est.vocabulary_
        np.testing.assert_array_equal(back.transform(texts[:20]), est.transform(texts[:20]))
    assert back.wv_.index_to_key == est.wv_.index_to_key
    assert back.wv_.key_to_index == est.wv_.key_to_index


def test_a_damaged_packed_vocabulary_is_refused_naming_it():
    from skembed import TfidfLSA

    docs = ["the cat sat", "the dog ran", "a cat ran", "a dog sat"]
    state = TfidfLSA(n_components=2).fit(docs).__getstate__()
    packed = state["vocabulary_"]
    cases = [
        ({**packed, "ends": packed["ends"][::-1].copy()}, r"vocabulary_\.ends does not cut"),
        ({**packed, "utf8": np.full_like(packed["utf8"], 0xFF)}, r"vocabulary_\.utf8 is not UTF-8"),
        (
            {**packed, "ends": packed["ends"].astype(float)},
            r"vocabulary_\.ends is not a 1-D integer",
        ),
    ]
    words = np.frombuffer(b"catcat", np.uint8).copy()
    cases.append(({"utf8": words, "ends": np.array([3, 6])}, "vocabulary_ holds a word twice"))
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            TfidfLSA.__new__(TfidfLSA).__setstate__({**state, "vocabulary_": bad})


def test_a_sigterm_during_a_save_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    target = tmp_path / "best.skops"
    started = tmp_path / "started"
    child = textwrap.dedent(
        f"""
        import pathlib, time
        import skops.io as sio
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from skembed.model_selection import save_pipeline

        pipe = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(["aa b", "cc d"], [0, 1])
        save_pipeline(pipe, {str(target)!r})
        dump = sio.dump

        def slow(obj, file, **kwargs):  # a write the parent interrupts
            dump(obj, file, **kwargs)
            pathlib.Path({str(started)!r}).write_text("writing")
            time.sleep(60)

        sio.dump = slow
        save_pipeline(pipe, {str(target)!r})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", child])
    for _ in range(600):
        if started.exists() or proc.poll() is not None:
            break
        time.sleep(0.1)
    assert started.exists(), "the child never reached its second save"
    first = target.read_bytes()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == -signal.SIGTERM
    assert target.read_bytes() == first  # the first save is whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.skops", "started"]
