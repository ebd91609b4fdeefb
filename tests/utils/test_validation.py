"""Tests of ``skembed/utils/_validation.py`` (moved from ``tests/utils/test_utils.py`` to the mirrored path)."""

import numpy as np
import pytest

from skembed.utils._validation import check_documents


def test_check_documents_kinds():
    pd = pytest.importorskip("pandas")
    assert check_documents(["a b", ("x", "y")]) == ["a b", ("x", "y")]
    assert check_documents(np.array(["a", "b"], dtype=object)) == ["a", "b"]
    assert check_documents(pd.Series(["a", None]), handle_missing="empty") == ["a", ""]
    assert check_documents(pd.DataFrame({"t": ["a", "b"]})) == ["a", "b"]
    with pytest.raises(TypeError, match="2 columns"):
        check_documents(pd.DataFrame({"t": ["a"], "u": ["b"]}))
    with pytest.raises(TypeError, match="string object received"):
        check_documents("a document")
    with pytest.raises(TypeError, match="one-shot"):
        check_documents(iter(["a"]))
    with pytest.raises(TypeError, match="iterable of documents"):
        check_documents(3)
