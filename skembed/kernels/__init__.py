"""Compiled CPU kernels (numba only; no scikit-learn, no torch).

- :mod:`skembed.kernels.word2vec`: skip-gram / CBOW training of Word2Vec and FastText;
- :mod:`skembed.kernels.fasttext`: fastText's character n-grams and hashes;
- :mod:`skembed.kernels._sampling`: noise, subsampling, Huffman and sigmoid tables;
- :mod:`skembed.kernels.glove`: GloVe's AdaGrad epochs.

Importing this package does not import numba; its modules do.
"""
