"""skembed on a real Dask cluster: a LocalCluster of 2 worker processes, 1 thread each."""

import time

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask.dataframe")

import dask.bag as db  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

from skembed.dask import connect, transform  # noqa: E402
from skembed.text import TfidfLSA, Word2VecTransformer  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")


@pytest.fixture(scope="module", autouse=True)
def _restore_environment():
    # distributed's nanny sets OMP_NUM_THREADS=1 (and malloc variables) in the process that
    # starts a LocalCluster and leaves them set; later tests would then run single-threaded
    # (n_jobs=None reads OMP_NUM_THREADS), which changes BLAS summation order
    import os
    import sys

    from threadpoolctl import threadpool_info, threadpool_limits

    saved = dict(os.environ)
    pools = {p["internal_api"]: p["num_threads"] for p in threadpool_info()}
    torch = sys.modules.get("torch")
    torch_threads = torch.get_num_threads() if torch is not None else None
    yield
    os.environ.clear()
    os.environ.update(saved)
    # in-process workers also lower the OpenMP / torch thread pools to 1
    threadpool_limits(limits=pools)
    if torch_threads is not None:
        torch.set_num_threads(torch_threads)


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def bbc300():
    from skembed.datasets import load_bbc_news

    X, y = load_bbc_news()
    idx = np.random.RandomState(0).choice(len(y), 300, replace=False)
    return [X[i] for i in idx], np.asarray(y)[idx]


def _w2v(**kw):
    return Word2VecTransformer(min_count=2, epochs=3, n_jobs=1, random_state=0, **kw)


@pytest.mark.slow
def test_grid_search_on_the_cluster_equals_local(client, bbc300):
    import joblib
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = bbc300
    pipe = make_pipeline(_w2v(), StandardScaler(), LogisticRegression(max_iter=1000))
    grid = {"word2vectransformer__vector_size": [16, 32], "logisticregression__C": [0.1, 10.0]}
    local = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    with joblib.parallel_backend("dask"):
        remote = GridSearchCV(pipe, grid, cv=3, n_jobs=-1).fit(X, y)
    assert remote.best_params_ == local.best_params_
    np.testing.assert_array_equal(
        remote.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"]
    )
    assert local.best_score_ > 0.4  # 5 classes: well above chance (0.2) after 3 epochs


@pytest.mark.slow
def test_compare_embedders_on_the_cluster_equals_local(client, bbc300):
    from skembed.model_selection import compare_embedders

    X, y = bbc300
    embedders = {
        "w2v": (_w2v(), {"vector_size": [16, 32]}),
        "lsa": TfidfLSA(n_components=20, random_state=0),
    }
    local = compare_embedders(X, y, embedders, cv=2)
    remote = compare_embedders(X, y, embedders, cv=2, scheduler=client.scheduler.address)
    assert remote["params"].tolist() == local["params"].tolist()
    np.testing.assert_array_equal(remote["mean_test_score"], local["mean_test_score"])
    np.testing.assert_array_equal(remote["n_features_out"], local["n_features_out"])


def test_cli_compare_on_the_cluster(client, tmp_path, capsys):
    from skembed.cli import main

    main(
        ["compare", "--embedders", "lsa", "--limit", "400", "--cv", "2", "--verbose", "0"]
        + ["--scheduler", client.scheduler.address, "--output-dir", str(tmp_path)]
    )
    board = pd.read_csv(tmp_path / "leaderboard.csv")
    assert board["embedder"].tolist() == ["lsa"]
    assert board["mean_test_score"].iloc[0] > 0.5


@pytest.mark.slow
def test_unreachable_scheduler_fails_fast(capsys):
    from skembed.cli import main
    from skembed.model_selection import compare_embedders

    t0 = time.perf_counter()
    with pytest.raises(ConnectionError, match="No Dask scheduler answered at 'tcp://127.0.0.1:9'"):
        compare_embedders(
            ["a b", "c d"] * 4,
            [0, 1] * 4,
            {"lsa": TfidfLSA(n_components=1)},
            cv=2,
            scheduler="tcp://127.0.0.1:9",
        )
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "--embedders", "lsa", "--scheduler", "tcp://127.0.0.1:9"])
    assert exit_info.value.code == 2
    assert "--scheduler: No Dask scheduler answered" in capsys.readouterr().err
    assert time.perf_counter() - t0 < 20  # two 5 s timeouts, no hang


def test_partition_wise_transform_equals_in_memory(client, bbc300):
    X, _ = bbc300
    series = pd.Series(X[:120], name="text")
    lsa = TfidfLSA(n_components=8, random_state=0).fit(series)
    expected = lsa.transform(series)
    frame = transform(lsa, dd.from_pandas(series, npartitions=4))
    assert list(frame.columns) == list(lsa.get_feature_names_out())
    assert (frame.dtypes == np.float32).all() and frame._meta.shape == (0, 8)
    got = frame.compute()
    assert np.abs(got.to_numpy() - expected).max() <= 1e-6
    assert got.index.equals(series.index)
    arr = transform(lsa, db.from_sequence(X[:120], npartitions=3)).compute()
    assert arr.dtype == np.float32 and np.abs(arr - expected).max() <= 1e-6
    # dask-ml's ParallelPostFit: the one-line way on a 1-column dask DataFrame
    from dask_ml.wrappers import ParallelPostFit

    post = ParallelPostFit(lsa, transform_meta=np.empty((0, 8), np.float32))
    ddf = dd.from_pandas(series.to_frame(), npartitions=4)
    assert np.abs(post.transform(ddf[["text"]]).compute() - expected).max() <= 1e-6


def test_word2vec_fits_a_dask_bag_like_a_list(bbc300):
    X, _ = bbc300
    from_list = _w2v(vector_size=16).fit(X[:100])
    from_bag = _w2v(vector_size=16).fit(db.from_sequence(X[:100], npartitions=5))
    from_series = _w2v(vector_size=16).fit(dd.from_pandas(pd.Series(X[:100]), npartitions=3))
    np.testing.assert_array_equal(from_bag.transform(X[:20]), from_list.transform(X[:20]))
    np.testing.assert_array_equal(from_series.transform(X[:20]), from_list.transform(X[:20]))


def test_dask_collection_refused_by_non_streaming_estimators():
    series = dd.from_pandas(pd.Series(["a b", "c d"] * 4), npartitions=2)
    with pytest.raises(TypeError, match="cannot stream.*skembed.dask.transform"):
        TfidfLSA(n_components=1).fit(series)
    with pytest.raises(TypeError, match="dask DataFrame"):
        _w2v().fit(series.to_frame())


def test_connect_rejects_bad_address():
    with pytest.raises(TypeError, match="scheduler must be an address"):
        connect(8786)


def _worker_bert_state(directory, docs):
    """In a worker: embed ``docs`` with the directory cache; the loads and cache counts."""
    from skembed.text import BertPooledEmbedder
    from skembed.text.transformer._cache import get_cache
    from skembed.text.transformer._loading import model_load_count

    store = get_cache(directory)
    hits, misses = store.hits, store.misses
    est = BertPooledEmbedder(max_length=32, cache=directory, device="cpu").fit(docs[:2])
    out = est.transform(docs)
    return model_load_count(), store.hits - hits, store.misses - misses, out


@pytest.mark.slow
def test_bert_partition_transform_loads_once_per_worker_and_shares_the_cache(
    client, bbc300, tmp_path
):
    pytest.importorskip("transformers")
    from skembed.text import BertPooledEmbedder

    docs = bbc300[0][:40]
    series = pd.Series(docs, name="text")
    directory = str(tmp_path / "cache")
    bert = BertPooledEmbedder(max_length=32, cache=directory, device="cpu").fit(docs[:2])
    reference = BertPooledEmbedder(max_length=32, device="cpu").fit(docs[:2]).transform(docs)
    got = transform(bert, dd.from_pandas(series, npartitions=4)).compute()
    assert np.abs(got.to_numpy() - reference).max() <= 1e-6
    # every worker now embeds all 40 documents: all rows come from the shared directory
    # (each written by whichever worker embedded that partition), and no worker loaded
    # the weights more than once although each ran several tasks
    states = client.run(_worker_bert_state, directory, docs)
    assert len(states) == 2
    for loads, hits, misses, out in states.values():
        assert loads == 1
        assert (hits, misses) == (40, 0)
        assert np.abs(out - reference).max() <= 1e-6


class _DiesInFit(TfidfLSA):
    """Kills the worker process that fits it (a crashed worker, mid-search).

    With ``marker`` set, only while that file does not exist (it creates it first):
    the worker dies once, and the retried task succeeds.
    """

    def __init__(self, n_components=1, random_state=None, marker=None):
        super().__init__(n_components=n_components, random_state=random_state)
        self.marker = marker

    def fit_transform(self, X, y=None):
        import os

        if self.marker is None or not os.path.exists(self.marker):
            if self.marker is not None:
                open(self.marker, "w").close()
            os._exit(1)
        return super().fit_transform(X, y)


@pytest.mark.slow
def test_a_dying_worker_is_retried_or_named_never_a_hang(tmp_path):
    import sys

    import cloudpickle
    import dask

    from skembed.model_selection import compare_embedders

    docs, labels = (
        ["cheap loan bank", "bank money", "cat dog farm", "farm dog"] * 3,
        [0, 0, 1, 1] * 3,
    )
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
            cluster = LocalCluster(
                n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
            )
            t0 = time.perf_counter()
            try:
                with pytest.raises(
                    RuntimeError, match=r"Candidate crash \{\} \(fold \d\) failed .*KilledWorker"
                ):
                    compare_embedders(
                        docs,
                        labels,
                        {"crash": _DiesInFit()},
                        cv=2,
                        scheduler=cluster.scheduler_address,
                    )
                marker = str(tmp_path / "died-once")
                once = compare_embedders(
                    docs,
                    labels,
                    {"once": _DiesInFit(random_state=0, marker=marker)},
                    cv=2,
                    scheduler=cluster.scheduler_address,
                )
            finally:
                cluster.close()
            assert (tmp_path / "died-once").exists()  # it did die, and the retry completed
            assert once["mean_test_score"].max() == 1.0
            assert time.perf_counter() - t0 < 90
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


# ----------------------------------------------------------------------------- hostile addresses
@pytest.fixture
def silent_server():
    """A socket on 127.0.0.1 that accepts connections and never answers."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted = []

    def accept():
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for conn in accepted:
        conn.close()


@pytest.fixture
def http_server():
    """An HTTP server on 127.0.0.1 (its bytes once made distributed allocate 3 EiB)."""
    import http.server
    import threading

    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("which", ["silent", "http"])
def test_connect_is_bounded_in_wall_time(which, silent_server, http_server):
    address = silent_server if which == "silent" else http_server
    t0 = time.perf_counter()
    with pytest.raises(ConnectionError, match=f"No Dask scheduler answered at '{address}'"):
        connect(address, timeout=1.5)
    assert time.perf_counter() - t0 < 4.0  # was > 40 s (silent) or MemoryError (http)


def test_connect_names_a_malformed_address():
    t0 = time.perf_counter()
    with pytest.raises(ConnectionError, match="'not-an-address'.*missing port"):
        connect("not-an-address", timeout=1)
    assert time.perf_counter() - t0 < 3.0


def test_compare_on_a_silent_scheduler_fails_within_the_bound(silent_server):
    from skembed.model_selection import compare_embedders

    t0 = time.perf_counter()
    with pytest.raises(ConnectionError, match=silent_server):
        compare_embedders(
            ["a b", "c d"] * 4,
            [0, 1] * 4,
            {"lsa": TfidfLSA(n_components=1)},
            cv=2,
            scheduler=silent_server,
        )
    assert time.perf_counter() - t0 < 15  # the default 5 s bound; was > 295 s


def test_transform_refuses_an_address_as_client():
    series = pd.Series(["cat dog farm", "bank loan money", "dog cat barn", "money bank"] * 2)
    lsa = TfidfLSA(n_components=2, random_state=0).fit(series)
    with pytest.raises(TypeError, match="client must be a distributed.Client.*connect"):
        transform(lsa, dd.from_pandas(series, npartitions=2), client="tcp://127.0.0.1:9")


def test_missing_document_in_a_later_partition_is_named_by_the_series_index():
    docs = ["cat dog farm", "bank loan money", "dog cat barn", "money bank cash"]
    series = pd.Series(docs + [None, "farm dog cow"], index=[10, 11, 12, 13, 14, 15])
    lsa = TfidfLSA(n_components=2, random_state=0).fit(docs)
    frame = transform(lsa, dd.from_pandas(series, npartitions=2))
    with pytest.raises(ValueError, match=r"missing documents \(None/NaN\) at index \[14\]"):
        frame.compute()  # on the cluster when a client is current, else in threads
