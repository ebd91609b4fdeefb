"""The data of ``skembed compare``: a checked CSV, read only as far as ``--limit`` needs."""

import tracemalloc

import numpy as np
import pytest

from skembed.model_selection import _inputs
from skembed.model_selection._inputs import load_compare_data, read_csv_checked

pd = pytest.importorskip("pandas")


def test_a_byte_order_mark_does_not_hide_a_repeated_label(tmp_path):
    # pandas strips the BOM and renames the copy label.1, which became a feature (score 1.0)
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbflabel,x,label\na,1,a\nb,2,b\n")
    with pytest.raises(ValueError, match="names the column 'label' more than once"):
        read_csv_checked(str(path))


def test_a_header_field_over_the_csv_modules_limit_is_read(tmp_path):
    path = tmp_path / "long.csv"
    name = "c" * 200_000  # csv.field_size_limit() is 131,072
    path.write_text(f"{name},label\n1,a\n2,b\n")
    frame = read_csv_checked(str(path))
    assert list(frame.columns) == [name, "label"] and frame[name].tolist() == [1, 2]


def test_an_infinite_cell_is_refused_with_its_column_and_row(tmp_path):
    path = tmp_path / "inf.csv"
    path.write_text("x,price,label\n1,2.5,a\n2,inf,b\n3,1.0,a\n")
    with pytest.raises(ValueError, match=r"column 'price' holds inf in data row 2 \(line 3"):
        load_compare_data(csv_path=str(path), label="label")
    path.write_text("x,price,label\n1,2.5,a\n2,-inf,b\n3,-inf,a\n")
    with pytest.raises(ValueError, match=r"holds -inf in data row 2 .*\(and 1 more rows\)"):
        load_compare_data(csv_path=str(path), label="label")


def big_csv(path, n):
    rng = np.random.RandomState(0)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])
    text = [" ".join(rng.choice(words, 12)) for _ in range(n)]
    text[3] = "  "  # dropped as empty text: the limit draws among usable rows
    labels = rng.choice(["p", "q", ""], n, p=[0.45, 0.45, 0.1])
    pd.DataFrame({"text": text, "label": labels}).to_csv(path, index=False)


def test_limit_reads_the_same_rows_by_chunks(tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    big_csv(path, 3000)
    full = load_compare_data(csv_path=str(path), label="label", text_columns=["text"], limit=None)
    X_all, y_all = _inputs.subsample(full[0], full[1], 50, 7)
    monkeypatch.setattr(_inputs, "CHUNK_ROWS", 256, raising=False)
    X, y, _, dropped, _ = load_compare_data(
        csv_path=str(path), label="label", text_columns=["text"], limit=50, random_state=7
    )
    assert X == X_all and y.tolist() == y_all.tolist() and len(y) == 50
    assert dropped == full[3] and sum(dropped.values()) > 0  # counted over the whole file


def test_limit_does_not_hold_the_whole_csv_in_memory(tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    big_csv(path, 40_000)
    monkeypatch.setattr(_inputs, "CHUNK_ROWS", 2000, raising=False)

    def peak(limit):
        tracemalloc.start()
        load_compare_data(csv_path=str(path), label="label", text_columns=["text"], limit=limit)
        used = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return used

    whole, limited = peak(None), peak(100)
    assert limited < whole / 4, (limited, whole)


def test_text_columns_are_read_as_strings_so_codes_keep_their_zeros(tmp_path):
    from skembed.model_selection._inputs import read_csv_checked

    path = tmp_path / "codes.csv"
    path.write_text("code,y\n00123,a\n04560,b\n00007,a\n")
    frame = read_csv_checked(str(path), text_columns=["code"])
    assert frame["code"].tolist() == ["00123", "04560", "00007"]
    assert read_csv_checked(str(path))["code"].tolist() == [123, 4560, 7]  # not named: numbers


def test_a_cell_beyond_float32_is_refused_with_its_column_and_row(tmp_path):
    from skembed.model_selection._inputs import read_csv_checked

    path = tmp_path / "big.csv"
    path.write_text("x,y\n1.5,a\n1e308,b\n")
    with pytest.raises(ValueError, match=r"column 'x' holds 1e\+308 in data row 2 .*float32"):
        read_csv_checked(str(path))
