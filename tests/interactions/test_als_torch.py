"""The torch ALS engine: the numba kernel's vectors, from the same start, on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

from skembed import InteractionEmbedder

pytest.importorskip("torch")


def test_torch_engine_gives_the_numba_kernels_vectors():
    rng = np.random.default_rng(0)
    log = np.column_stack([rng.integers(0, 200, 3000), rng.integers(0, 300, 3000)])
    params = dict(vector_size=8, epochs=5, confidence_scale=4.0, random_state=1, n_jobs=2)
    numba_fit = InteractionEmbedder(**params).fit(log)
    torch_fit = InteractionEmbedder(**params, engine="torch").fit(log)
    assert (numba_fit.engine_, torch_fit.engine_) == ("numba", "torch")
    scale = np.abs(numba_fit.user_vectors_).max()
    # both float32, summed in other orders (measured 8e-6 of 7.1 with float64 CG steps)
    assert np.abs(torch_fit.user_vectors_ - numba_fit.user_vectors_).max() < 1e-4 * scale
    assert np.abs(torch_fit.item_vectors_ - numba_fit.item_vectors_).max() < 1e-4 * scale


def test_item2vec_refuses_the_torch_engine():
    with pytest.raises(ValueError, match="method='item2vec' trains on the CPU's numba engine"):
        InteractionEmbedder("item2vec", engine="torch").fit([[1, 2], [1, 3]])
