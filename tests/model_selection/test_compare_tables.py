"""compare on mixed tables (text among other columns) and on numeric targets."""

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

WORDS = {
    "good": "great lovely solid works perfect happy".split(),
    "bad": "broken awful poor refund useless angry".split(),
}


def mixed_table(n=120, seed=0):
    """A review table: the text decides the label, the shop adds a little, the rest is noise."""
    rng = np.random.RandomState(seed)
    label = np.where(rng.rand(n) < 0.5, "good", "bad")
    flip = rng.rand(n) < 0.1
    text = [
        " ".join(rng.choice(WORDS[("bad" if lab == "good" else "good") if f else lab], 4))
        + f" item {i}"
        for i, (lab, f) in enumerate(zip(label, flip, strict=True))
    ]
    frame = pd.DataFrame(
        {
            "review": text,
            "shop": rng.choice(["north", "south", "east"], n),
            "count": rng.poisson(3, n),
            "sold": pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.randint(0, 300, n), "D"),
            "gift": rng.rand(n) < 0.3,
            "flag": rng.randint(0, 2, n),
        }
    )
    return frame, label
