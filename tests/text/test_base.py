"""The shared text layer: out-of-vocabulary rate, unknown-document rows, text cleaning."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from skembed.text._base import TextEmbedderMixin, clean_text, oov_fraction


def test_oov_fraction_by_hand():
    assert oov_fraction([["a", "b", "a"], [], ["c"]], {"a": 0}) == pytest.approx(2 / 4)
    assert oov_fraction([[], []], {"a": 0}) == 0.0


@pytest.mark.parametrize(("policy", "fill"), [("zeros", 0.0), ("nan", np.nan)])
def test_rows_without_known_words_follow_handle_unknown(policy, fill):
    out = np.ones((3, 2))
    empty = np.array([False, True, False])
    got = TextEmbedderMixin._apply_handle_unknown(
        SimpleNamespace(handle_unknown=policy), out, empty
    )
    np.testing.assert_array_equal(got, [[1, 1], [fill, fill], [1, 1]])


def test_handle_unknown_error_names_the_rows_and_the_fix():
    est = SimpleNamespace(handle_unknown="error")
    with pytest.raises(
        ValueError, match=r"1 document\(s\) have no known word \(first rows: \[2\]\)"
    ):
        TextEmbedderMixin._apply_handle_unknown(est, np.ones((3, 2)), np.array([0, 0, 1], bool))


def test_clean_text_replaces_lone_surrogates_only():
    assert clean_text("caf\u00e9 \ud800x") == "caf\u00e9 \ufffdx"
    text = "plain ascii"
    assert clean_text(text) is text
