"""GloVe's blocked schedule and record blocks (``skembed.kernels.glove``), by hand."""

import numpy as np

from skembed.kernels.glove import blocked_schedule


def test_blocked_schedule_rounds_share_no_row_or_column_block():
    assert blocked_schedule(2).tolist() == [[0, 3], [1, 2]]
    assert blocked_schedule(3).tolist() == [[0, 4, 8], [1, 5, 6], [2, 3, 7]]
    for n in (1, 2, 3, 5):
        s = blocked_schedule(n)
        assert sorted(s.ravel().tolist()) == list(range(n * n))  # every cell once
        for r in range(n):
            rows, cols = s[r] // n, s[r] % n
            assert len(set(rows)) == n and len(set(cols)) == n
    assert blocked_schedule(4).dtype == np.int64
