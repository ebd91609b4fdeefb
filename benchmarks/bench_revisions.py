"""The word2vec family's fit time at two git revisions, in interleaved rounds of one run.

For a change that must not move speed (a layout move, a refactoring): each revision is checked
out into a temporary worktree, its kernels are compiled once (a warm-up fit), then each round
fits Word2Vec skip-gram and CBOW, FastText and PV-DBOW on BBC News (2,225 documents) in a fresh
process per revision, alternating which goes first. Prints each round, the load average, and
the median seconds and after/before ratio per case.

    python benchmarks/bench_revisions.py --before 7bbd213 --after 4a9675c --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_FIT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import skembed
assert skembed.__file__.startswith(sys.argv[1]), skembed.__file__
from skembed import Doc2VecTransformer, FastTextTransformer, Word2VecTransformer
from skembed.datasets import load_bbc_news
texts, _ = load_bbc_news()
n_jobs = int(sys.argv[3])
cases = {
    "skip-gram": lambda: Word2VecTransformer(sg=1, epochs=2, random_state=0, n_jobs=n_jobs),
    "cbow": lambda: Word2VecTransformer(sg=0, epochs=2, random_state=0, n_jobs=n_jobs),
    "fasttext": lambda: FastTextTransformer(sg=1, epochs=1, random_state=0, n_jobs=n_jobs),
    "pv-dbow": lambda: Doc2VecTransformer(dm=0, epochs=2, random_state=0, n_jobs=n_jobs),
}
out = {}
for name, make in cases.items():
    if sys.argv[2] == "warm":
        make().fit(texts[:50])
        continue
    t0 = time.perf_counter()
    make().fit(texts)
    out[name] = time.perf_counter() - t0
print(json.dumps(out))
"""


def _fit(tree, mode, n_jobs):
    env = dict(os.environ, PYTHONPATH="")
    out = subprocess.run(
        [sys.executable, "-c", _FIT, tree, mode, str(n_jobs)],
        check=True, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir(),
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="git revision of the baseline")
    parser.add_argument("--after", default="HEAD", help="git revision to compare (HEAD)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for label in ("before", "after"):
            trees[label] = os.path.join(tmp, label)
            rev = getattr(args, label)
            subprocess.run(["git", "-C", root, "worktree", "add", "-f", "--detach", trees[label], rev],
                           check=True, capture_output=True)  # fmt: skip
        try:
            for tree in trees.values():
                _fit(tree, "warm", args.n_jobs)  # compile (numba caches inside each tree)
            times = {label: [] for label in trees}
            for r in range(args.rounds):
                order = list(trees) if r % 2 == 0 else list(reversed(list(trees)))
                for label in order:
                    times[label].append(_fit(trees[label], "time", args.n_jobs))
                load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                print(f"round {r}: load {load}", {k: v[-1] for k, v in times.items()}, flush=True)
            print(f"\n{args.rounds} rounds, n_jobs={args.n_jobs}, median seconds per fit")
            for case in times["before"][0]:
                b = statistics.median(t[case] for t in times["before"])
                a = statistics.median(t[case] for t in times["after"])
                print(f"{case:10s} before {b:6.2f}  after {a:6.2f}  after/before {a / b:.3f}")
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", root, "worktree", "remove", "--force", tree],
                               capture_output=True)  # fmt: skip


if __name__ == "__main__":
    main()
