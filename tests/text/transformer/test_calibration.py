"""The int8 calibration sample: the training documents, topped up with built-in texts."""

from __future__ import annotations

import warnings

import pytest


def test_a_large_enough_calibration_sample_is_kept_as_is():
    from skembed.text.transformer._calibration import builtin_calibration_texts
    from skembed.text.transformer._calibration import calibration_sample as _calibration_sample

    builtin = builtin_calibration_texts()
    assert len(builtin) >= 32 and all(len(t.split()) >= 25 for t in builtin)
    docs = [f"document {i} " + "word " * 40 for i in range(40)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _calibration_sample(docs) == docs
    with pytest.warns(UserWarning, match="31 distinct document"):
        sample = _calibration_sample(docs[:31])
    assert sample[:31] == docs[:31] and sample[31:] == builtin[: len(sample) - 31]
