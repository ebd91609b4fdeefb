"""The calibration sample of ``backend="openvino", quantize="int8"``: fit documents,
completed with built-in English text when they are too few."""

from __future__ import annotations

import os
import warnings

__all__ = ["builtin_calibration_texts", "calibration_sample"]

#: a smaller openvino int8 calibration sample is completed with built-in text
MIN_CALIBRATION_DOCS = 32
MIN_CALIBRATION_WORDS = 1000


def builtin_calibration_texts():
    """English paragraphs that ship with scikit-learn (its dataset descriptions).

    Returns
    -------
    texts : list of str
        Paragraphs of at least 25 words, mostly letters, in a fixed order
        (that of the files' names, then of the paragraphs).
    """
    import re

    import sklearn.datasets

    root = os.path.join(os.path.dirname(sklearn.datasets.__file__), "descr")
    texts = []
    for name in sorted(n for n in os.listdir(root) if n.endswith(".rst")):
        with open(os.path.join(root, name), encoding="utf-8") as f:
            for para in re.split(r"\n\s*\n", f.read()):
                para = " ".join(para.split())
                letters = sum(c.isalpha() or c == " " for c in para)
                if len(para.split()) >= 25 and letters / len(para) > 0.85:
                    texts.append(para)
    return texts


def calibration_sample(unique):
    """At most 128 evenly spaced distinct ``fit`` documents, completed with built-in text
    (and a warning) when they are too few or too short for ranges that hold on other text."""
    sample = unique[:: max(1, len(unique) // 128)][:128]
    n_words = sum(len(t.split()) for t in sample)
    if len(sample) >= MIN_CALIBRATION_DOCS and n_words >= MIN_CALIBRATION_WORDS:
        return sample
    builtin = builtin_calibration_texts()
    extra = builtin[:: max(1, len(builtin) // 64)][: 128 - len(sample)]
    warnings.warn(
        f"backend='openvino', quantize='int8' calibrates its int8 ranges on the fit documents; "
        f"{len(sample)} distinct document(s) of {n_words} words in all are too few (fewer than "
        f"{MIN_CALIBRATION_DOCS} documents or {MIN_CALIBRATION_WORDS} words), so {len(extra)} "
        "built-in English paragraphs complete the sample. Fit on more documents of your domain "
        "for ranges that match them.",
        UserWarning,
        stacklevel=4,
    )
    return sample + extra
