"""Node2vec: karate-club factions, and walks + training on a stochastic block model against
pecanpy and fastnode2vec, side by side on the same threads.

Karate club (networkx): leave-one-out accuracy of a logistic regression on the unit node
vectors, for ``--seeds`` seeds. The block model: ``--nodes`` nodes in ``--blocks`` equal blocks
(node ``i`` in block ``i % blocks``), each node with about ``--degree-in`` edges inside its block
and ``--degree-out`` to random nodes (generated with a fixed seed); quality is the adjusted Rand
index of k-means (``blocks`` clusters) on the vectors against the blocks. Every tool walks with
the same ``p``, ``q``, walks per node and walk length and trains skip-gram with the same
dimension, window, epochs, 5 negatives and subsampling 1e-3 (gensim's default, which pecanpy
and fastnode2vec train with). Time: fit, walks included, best of ``--repeats`` after a
warm-up fit on a small graph (compiled kernels are loaded from their caches).

    python benchmarks/bench_node2vec.py --threads 2 --nodes 10000
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
from _util import dumps, loadavg


def karate(seeds):
    import networkx as nx
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import LeaveOneOut, cross_val_score
    from sklearn.preprocessing import normalize

    from skembed import Node2VecTransformer

    graph = nx.karate_club_graph()
    edges = np.array(graph.edges())
    factions = np.array([graph.nodes[n]["club"] == "Officer" for n in range(34)])
    scores = []
    for seed in seeds:
        n2v = Node2VecTransformer(
            16, window=5, walks_per_node=20, epochs=10, random_state=seed, n_jobs=2
        )
        vectors = normalize(n2v.fit(edges).transform(np.arange(34)))
        model = LogisticRegression(max_iter=1000)
        scores.append(cross_val_score(model, vectors, factions, cv=LeaveOneOut()).mean())
    return scores


def block_model(n, blocks, degree_in, degree_out, seed=0):
    """Undirected edges (no self-loops, no duplicates) and each node's block."""
    rng = np.random.default_rng(seed)
    m_in, m_out = n * degree_in // 2, n * degree_out // 2
    u = rng.integers(0, n, m_in)
    v = rng.integers(0, n // blocks, m_in) * blocks + u % blocks  # same block as u
    edges = np.concatenate([np.column_stack([u, v]), rng.integers(0, n, (m_out, 2))])
    edges = np.sort(edges[edges[:, 0] != edges[:, 1]], axis=1)
    return np.unique(edges, axis=0), np.arange(n) % blocks


def _shim_numpy_for_nptyping():
    """pecanpy 2.0.9 imports nptyping 2.5, which reads aliases numpy 2 removed."""
    for old, new in [("bool8", "bool_"), ("object0", "object_"), ("int0", "intp"),
                     ("uint0", "uintp"), ("void0", "void"), ("bytes0", "bytes_"),
                     ("str0", "str_"), ("float_", "float64"), ("complex_", "complex128"),
                     ("unicode_", "str_"), ("string_", "bytes_"), ("longfloat", "longdouble"),
                     ("singlecomplex", "complex64"), ("cfloat", "complex128"),
                     ("longcomplex", "clongdouble"), ("clongfloat", "clongdouble")]:  # fmt: skip
        if not hasattr(np, old):
            setattr(np, old, getattr(np, new))


def fit_skembed(edges, n, args, seed):
    from skembed import Node2VecTransformer

    n2v = Node2VecTransformer(
        args.dim, walk_length=args.walk_length, walks_per_node=args.walks, p=args.p, q=args.q,
        window=args.window, epochs=args.epochs, sample=1e-3, random_state=seed,
        n_jobs=args.threads,
    )  # fmt: skip
    return n2v.fit(edges).transform(np.arange(n))


def fit_pecanpy(edges, n, args, seed):
    _shim_numpy_for_nptyping()
    from pecanpy.pecanpy import SparseOTF

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "graph.edg")
        np.savetxt(path, edges, fmt="%d", delimiter="\t")
        model = SparseOTF(p=args.p, q=args.q, workers=args.threads, random_state=seed)
        model.read_edg(path, weighted=False, directed=False)
    vectors = model.embed(
        dim=args.dim, num_walks=args.walks, walk_length=args.walk_length,
        window_size=args.window, epochs=args.epochs,
    )  # fmt: skip
    order = np.argsort(np.array(model.nodes, dtype=np.int64))
    return np.asarray(vectors)[order]


def fit_fastnode2vec(edges, n, args, seed):
    from fastnode2vec import Graph, Node2Vec

    graph = Graph([(int(a), int(b)) for a, b in edges], directed=False, weighted=False,
                  verbose=False)  # fmt: skip
    model = Node2Vec(
        graph, dim=args.dim, walk_length=args.walk_length, window=args.window, p=args.p,
        q=args.q, workers=args.threads, seed=seed,
    )  # fmt: skip
    model.train(epochs=args.walks, verbose=False)  # fastnode2vec: an epoch is a walk per node
    return np.stack([model.wv[i] for i in range(n)])


TOOLS = {"skembed": fit_skembed, "pecanpy": fit_pecanpy, "fastnode2vec": fit_fastnode2vec}


def speed(args):
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    edges, blocks = block_model(args.nodes, args.blocks, args.degree_in, args.degree_out)
    small, _ = block_model(200, 2, 10, 1)
    rows = {}
    for name in args.tools.split(","):
        fit = TOOLS[name]
        try:
            fit(small, 200, args, 0)  # warm-up: compiled kernels
        except ImportError as error:
            rows[name] = {"error": f"not installed: {error}"}
            continue
        times, cpu, ari = [], [], []
        for seed in range(args.repeats):
            started, cpu_started = time.perf_counter(), time.process_time()
            vectors = fit(edges, args.nodes, args, seed)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
            labels = KMeans(args.blocks, n_init=4, random_state=0).fit_predict(vectors)
            ari.append(adjusted_rand_score(blocks, labels))
        rows[name] = {"seconds": min(times), "cpu_seconds": cpu, "ari": ari}
        # each tool's row as soon as it is measured: a long run killed later keeps it
        print(f"# {name}: {dumps(rows[name])}, load {loadavg(3)}", flush=True)
    return len(edges), rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--degree-in", type=int, default=10)
    parser.add_argument("--degree-out", type=int, default=2)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--walks", type=int, default=10)
    parser.add_argument("--walk-length", type=int, default=40)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--p", type=float, default=1.0)
    parser.add_argument("--q", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=5, help="karate club seeds")
    parser.add_argument("--tools", default="skembed,pecanpy,fastnode2vec")
    args = parser.parse_args()
    load_before = loadavg(3)
    print(f"# threads={args.threads} load before={load_before}", flush=True)
    accuracy = karate(range(args.seeds))
    n_edges, rows = speed(args)
    print(f"threads={args.threads} load before={load_before} after={loadavg(3)}")
    print(f"karate club LOO accuracy, seeds 0-{args.seeds - 1}: {np.round(accuracy, 3).tolist()}")
    print(f"block model: {args.nodes:,} nodes, {n_edges:,} edges, {args.blocks} blocks")
    print(f"{'tool':<14} {'fit s':>8} {'CPU s':>8} {'ARI':>14}")
    for name, row in rows.items():
        if "error" in row:
            print(f"{name:<14} {row['error']}")
            continue
        spread = "/".join(f"{a:.3f}" for a in row["ari"])
        cpu = min(row["cpu_seconds"])
        print(f"{name:<14} {row['seconds']:>8.2f} {cpu:>8.1f} {spread:>14}")
    print(dumps({"args": vars(args), "karate": accuracy, "edges": n_edges, "rows": rows}))


if __name__ == "__main__":
    main()
