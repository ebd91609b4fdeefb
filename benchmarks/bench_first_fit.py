"""Time to first result: the first fit of each numba-trained estimator in a fresh process.

Each run is a new Python process with its own ``NUMBA_CACHE_DIR``: an empty temporary folder
(``--cache cold``, a fresh install whose kernels were never compiled) or numba's ordinary
cache (``--cache installed``: what a user gets after ``tools/setup.sh``, which compiles the
common configurations with ``skembed.text.word2vec.warm_up``). In that process each
estimator fits twice; the first fit's seconds include every compilation it triggers, which a
``numba:compile`` listener adds up and names (the three slowest per estimator).
``--estimators word2vec`` (the default): Word2Vec, FastText and Doc2Vec (defaults,
``min_count=1``) on 200 documents of 12 random words; ``--estimators graph``:
Node2VecTransformer (defaults) on a random graph of 200 nodes and about 1,000 edges and
InteractionEmbedder (``method="als"``, defaults) on 1,000 random (user, item) pairs (each
with ``random_state=0``).

Examples::

    python benchmarks/bench_first_fit.py                  # empty numba cache
    python benchmarks/bench_first_fit.py --cache installed
    python benchmarks/bench_first_fit.py --estimators graph
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _util import loadavg, repo_root  # noqa: E402

CHILD = r"""
import sys, time
t0 = time.perf_counter()
import numpy as np
from numba.core import event
import skembed
print(f"import skembed: {time.perf_counter() - t0:.1f} s", flush=True)

class Compiles(event.Listener):
    def __init__(self):
        self.depth, self.rows = 0, []
    def on_start(self, ev):
        self.depth += 1
        if self.depth == 1:
            self.t0 = time.perf_counter()
    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0:
            self.rows.append((time.perf_counter() - self.t0, ev.data["dispatcher"].__qualname__))

listener = Compiles()
event.register("numba:compile", listener)
rng = np.random.default_rng(0)
if sys.argv[1] == "word2vec":
    words = [f"w{i}" for i in range(300)]
    docs = [" ".join(rng.choice(words, size=12)) for _ in range(200)]
    fits = [(name, {"min_count": 1}, docs)
            for name in ("Word2VecTransformer", "FastTextTransformer", "Doc2VecTransformer")]
else:
    edges = rng.integers(0, 200, size=(1000, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]  # a self-loop is refused
    pairs = [[f"u{u}", f"i{i}"] for u, i in rng.integers(0, 100, size=(1000, 2))]
    fits = [("Node2VecTransformer", {}, edges), ("InteractionEmbedder", {}, pairs)]
total = 0.0
for name, params, X in fits:
    cls = getattr(skembed, name)
    listener.rows.clear()
    t = time.perf_counter()
    cls(random_state=0, **params).fit(X)
    first = time.perf_counter() - t
    total += first
    t = time.perf_counter()
    cls(random_state=0, **params).fit(X)
    second = time.perf_counter() - t
    slow = ", ".join(f"{fn} {s:.1f} s" for s, fn in sorted(listener.rows, reverse=True)[:3])
    print(f"{name:20s} first fit {first:6.1f} s  second {second:5.2f} s  "
          f"compiled {len(listener.rows)}: {slow or '-'}", flush=True)
print(f"first fits together: {total:.1f} s", flush=True)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", choices=("cold", "installed"), default="cold")
    ap.add_argument("--estimators", choices=("word2vec", "graph"), default="word2vec")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.cache == "cold":
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba-first-fit-")
    print(f"# cache: {args.cache}; load average before: {loadavg(1)}", flush=True)
    subprocess.run(
        [sys.executable, "-c", CHILD, args.estimators], env=env, cwd=repo_root(), check=True
    )
    print(f"# load average after: {loadavg(1)}")


if __name__ == "__main__":
    main()
