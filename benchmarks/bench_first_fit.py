"""Time to first result: the first fit of Word2Vec, FastText and Doc2Vec in a fresh process.

Each run is a new Python process with its own ``NUMBA_CACHE_DIR``: an empty temporary folder
(``--cache cold``, a fresh install whose kernels were never compiled) or numba's ordinary
cache (``--cache installed``: what a user gets after ``tools/setup.sh``, which compiles the
common configurations with ``skembed.text.word2vec.warm_up``). In that process
each estimator (defaults, ``min_count=1``) fits 200 documents of 12 random words twice; the
first fit's seconds include every compilation it triggers, which a ``numba:compile``
listener adds up and names (the three slowest per estimator).

Examples::

    python benchmarks/bench_first_fit.py                  # empty numba cache
    python benchmarks/bench_first_fit.py --cache installed
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
from skembed import Doc2VecTransformer, FastTextTransformer, Word2VecTransformer
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
words = [f"w{i}" for i in range(300)]
docs = [" ".join(rng.choice(words, size=12)) for _ in range(200)]
total = 0.0
for cls in (Word2VecTransformer, FastTextTransformer, Doc2VecTransformer):
    listener.rows.clear()
    t = time.perf_counter()
    cls(min_count=1, random_state=0).fit(docs)
    first = time.perf_counter() - t
    total += first
    t = time.perf_counter()
    cls(min_count=1, random_state=0).fit(docs)
    second = time.perf_counter() - t
    slow = ", ".join(f"{name} {s:.1f} s" for s, name in sorted(listener.rows, reverse=True)[:3])
    print(f"{cls.__name__:20s} first fit {first:6.1f} s  second {second:5.2f} s  "
          f"compiled {len(listener.rows)}: {slow or '-'}", flush=True)
print(f"three first fits together: {total:.1f} s", flush=True)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", choices=("cold", "installed"), default="cold")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.cache == "cold":
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba-first-fit-")
    print(f"# cache: {args.cache}; load average before: {loadavg(1)}", flush=True)
    subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=repo_root(), check=True)
    print(f"# load average after: {loadavg(1)}")


if __name__ == "__main__":
    main()
