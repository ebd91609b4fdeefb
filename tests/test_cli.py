import json

import pytest

from skembed.cli import main


def test_compare_text_mode_writes_leaderboard(tmp_path, capsys, monkeypatch):
    from skembed import cli

    # the CLI's plumbing is under test here, not LSA at 300 components: use a small grid
    lsa = cli.TEXT_EMBEDDERS["lsa"]
    monkeypatch.setitem(cli.TEXT_EMBEDDERS, "lsa", (*lsa[:3], {"n_components": [20, 50]}, lsa[4]))
    main(
        [
            "compare",
            "--embedders",
            "tfidf,lsa",
            "--cv",
            "2",
            "--limit",
            "400",
            "--output-dir",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert "BBC News: 400 documents, 5 classes" in out
    rows = json.loads((tmp_path / "leaderboard.json").read_text())
    assert [r["embedder"] for r in rows] == sorted(
        ["tfidf", "lsa"],
        key=lambda n: -next(r["cv_accuracy_mean"] for r in rows if r["embedder"] == n),
    )
    for r in rows:
        assert r["cv_accuracy_mean"] > 0.85
        assert r["fit_time_s"] > 0 and r["transform_docs_per_s"] > 0
    assert (tmp_path / "leaderboard.csv").read_text().startswith("embedder,")
    assert (tmp_path / "leaderboard.png").stat().st_size > 1000


def test_compare_csv_input_and_errors(tmp_path):
    pd = pytest.importorskip("pandas")
    path = tmp_path / "d.csv"
    docs = ["cheap loan bank money"] * 10 + ["cat dog farm animal"] * 10
    pd.DataFrame({"txt": docs, "y": ["f"] * 10 + ["a"] * 10}).to_csv(path, index=False)
    rows = main(
        [
            "compare",
            "--csv",
            str(path),
            "--text-column",
            "txt",
            "--label-column",
            "y",
            "--embedders",
            "tfidf",
            "--cv",
            "2",
            "--output-dir",
            str(tmp_path),
        ]
    )
    assert rows == 0
    assert json.loads((tmp_path / "leaderboard.json").read_text())[0]["cv_accuracy_mean"] == 1.0
    with pytest.raises(SystemExit, match="Unknown text embedder 'nope'"):
        main(["compare", "--embedders", "nope", "--output-dir", str(tmp_path)])
    with pytest.raises(SystemExit, match="'zzz' is not a column"):
        main(["compare", "--csv", str(path), "--text-column", "zzz", "--label-column", "y"])


def test_compare_tabular_mode_on_penguins(tmp_path, capsys):
    main(
        [
            "compare",
            "--dataset",
            "penguins",
            "--embedders",
            "raw,pca",
            "--cv",
            "3",
            "--output-dir",
            str(tmp_path),
        ]
    )
    assert "Palmer penguins: 344 rows, 3 classes" in capsys.readouterr().out
    rows = {
        r["embedder"]: r for r in json.loads((tmp_path / "leaderboard_tabular.json").read_text())
    }
    assert rows["Scaler+OneHot (raw)"]["cv_accuracy_mean"] > 0.97
    assert rows["PCA"]["reconstruction_error"] > 0
    with pytest.raises(SystemExit, match="Unknown tabular embedder 'lsa'"):
        main(["compare", "--dataset", "penguins", "--embedders", "lsa"])
