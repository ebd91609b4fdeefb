"""Shared fixtures: real data sets loaded once per session.

Helpers that modules call with arguments or at import time (the toy corpus, the tiny
random BERT) are plain functions in ``tests/_helpers.py``; test modules import those,
never each other.
"""

import os

import pytest

# Never let a test reach a model hub: everything used here ships in installed packages.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def bbc_news():
    """BBC News: (texts, labels), 2,225 documents, 5 classes."""
    from skembed.datasets import load_bbc_news

    return load_bbc_news()


@pytest.fixture(scope="session")
def gensim_datapath():
    """gensim's test-data path function (gensim is a test-only dependency)."""
    utils = pytest.importorskip("gensim.test.utils")
    return utils.datapath
