"""Reading Facebook fastText files: one entry point per thing.

- the word and n-gram vectors of a ``.bin`` model: :func:`load_facebook_vectors`
  (a :class:`~skembed.keyedvectors.FastTextKeyedVectors`);
- a ``.bin`` model as a fitted estimator:
  :meth:`skembed.text.word2vec._fasttext.FastTextTransformer.from_facebook` (built on
  :func:`read_facebook_bin`, this module's reader of the whole file);
- ``.vec`` files (plain word vectors, no n-grams):
  :meth:`skembed.keyedvectors.KeyedVectors.load_word2vec_format`.

The ``.bin`` layout (fastText ``FastText::saveModel``, ``Args::save``,
``Dictionary::save``, ``DenseMatrix::save``; all little-endian as written on
x86):

* new format (fastText >= 0.2): ``int32 magic = 793712314``, ``int32
  version``, then ``Args``: 12 ``int32`` (dim, ws, epoch, minCount, neg,
  wordNgrams, loss, model, bucket, minn, maxn, lrUpdateRate) and ``float64 t``;
* old format (gensim's ``lee_fasttext.bin``): no magic, ``Args`` starts with
  ``int32 dim, ws`` and lacks nothing else but the magic/version;
* ``Dictionary``: ``int32 size, nwords, nlabels``, ``int64 ntokens``, (new
  format) ``int64 pruneidx_size``, then ``size`` entries ``word bytes, \\0,
  int64 count, int8 type``, then ``pruneidx_size`` pairs of ``int32``;
* (new format) ``bool quant``; ``int64 rows, cols`` and ``rows * cols``
  ``float32`` of the input matrix (``nwords + bucket`` rows: word vectors
  then n-gram buckets); (new format) ``bool qout``; the output matrix alike.

Every size read from the file is checked against the bytes that remain
before anything is allocated, so a corrupt or truncated file raises a
``ValueError`` naming the file and the byte offset instead of hanging or
allocating gigabytes.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...keyedvectors import FastTextKeyedVectors

__all__ = ["FacebookModel", "load_facebook_vectors", "read_facebook_bin"]

FASTTEXT_MAGIC = 793712314
# dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate t
_ARGS_NEW = "<12id"
# the same without dim and ws
_ARGS_OLD = "<10id"
_MAX_WORD_BYTES = 1 << 20


@dataclass
class FacebookModel:
    """The content of a fastText ``.bin`` unsupervised model.

    Attributes
    ----------
    words : list of str
        Vocabulary in file order (fastText sorts it by decreasing count).
    counts : numpy.ndarray of shape (n_words,), dtype int64
    input_matrix : numpy.ndarray of shape (n_words + bucket, dim), dtype float32
        Word rows, then n-gram bucket rows.
    output_matrix : numpy.ndarray of shape (n_words, dim), float32, or None
        Only when read with ``load_output=True``.
    dim, window, epochs, min_count, negative, loss, model, bucket, min_n, max_n : int
        Training arguments (``loss``: 1 hs, 2 ns, 3 softmax; ``model``: 1 cbow, 2 skip-gram).
    sample : float
        The subsampling threshold ``t``.
    n_tokens : int
        Tokens of the training corpus.
    version : int or None
        ``None`` for the old format.
    """

    words: list
    counts: np.ndarray
    input_matrix: np.ndarray
    output_matrix: np.ndarray | None
    dim: int
    window: int
    epochs: int
    min_count: int
    negative: int
    loss: int
    model: int
    bucket: int
    min_n: int
    max_n: int
    sample: float
    n_tokens: int
    version: int | None


class _Reader:
    """Buffered binary reader that knows its absolute offset and the file size."""

    def __init__(self, fh, path, size):
        self.fh = fh
        self.path = path
        self.size = size
        self.buf = b""
        self.pos = 0  # position in buf
        self.base = 0  # file offset of buf[0]

    @property
    def offset(self):
        return self.base + self.pos

    @property
    def remaining(self):
        return self.size - self.offset

    def error(self, msg, offset=None):
        off = self.offset if offset is None else offset
        return ValueError(f"{self.path}: byte offset {off}: {msg} (corrupt or truncated file?)")

    def _fill(self, n):
        """Ensure ``n`` bytes are buffered from ``pos``; return False at end of file."""
        while len(self.buf) - self.pos < n:
            chunk = self.fh.read(max(1 << 16, n))
            if not chunk:
                return False
            self.base += self.pos
            self.buf = self.buf[self.pos :] + chunk
            self.pos = 0
        return True

    def read(self, n, what):
        start = self.offset
        if not self._fill(n):
            raise self.error(f"file ends while reading {what} ({n} bytes needed)", start)
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt, what):
        return struct.unpack(fmt, self.read(struct.calcsize(fmt), what))

    def read_cstring(self, what):
        start = self.offset
        while True:
            end = self.buf.find(b"\0", self.pos)
            if end >= 0:
                out = self.buf[self.pos : end]
                self.pos = end + 1
                return out
            if len(self.buf) - self.pos > _MAX_WORD_BYTES:
                raise self.error(f"{what} is not terminated within {_MAX_WORD_BYTES} bytes", start)
            if not self._fill(len(self.buf) - self.pos + 1):
                raise self.error(f"file ends inside {what}", start)

    def read_floats(self, count, what):
        start = self.offset
        nbytes = 4 * count
        if nbytes > self.remaining:
            raise self.error(f"{what} needs {nbytes} bytes but only {self.remaining} remain", start)
        have = len(self.buf) - self.pos
        out = np.empty(count, dtype="<f4")
        view = out.view(np.uint8)
        take = min(have, nbytes)
        view[:take] = np.frombuffer(self.buf, dtype=np.uint8, count=take, offset=self.pos)
        self.pos += take
        if take < nbytes:
            got = self.fh.readinto(memoryview(view)[take:])
            # readinto may return fewer bytes on some streams; loop until done
            while got is not None and take + got < nbytes:
                more = self.fh.readinto(memoryview(view)[take + got :])
                if not more:
                    break
                got += more
            if got is None or take + got < nbytes:
                raise self.error(f"file ends inside {what}", start)
            self.base += self.pos + got
            self.buf = b""
            self.pos = 0
        return out


class _Header(NamedTuple):
    """The training arguments at the head of a ``.bin`` file (fastText's ``Args``)."""

    new_format: bool
    version: int | None
    dim: int
    ws: int
    epoch: int
    min_count: int
    neg: int
    loss: int
    model: int
    bucket: int
    minn: int
    maxn: int
    t: float


class _Dictionary(NamedTuple):
    """The words of a ``.bin`` file, their counts and the corpus' token count."""

    words: list
    counts: np.ndarray
    n_tokens: int


def _read_header(r):
    """The signature and the training arguments (old or new format), checked."""
    magic, version = r.unpack("<2i", "the file signature")
    new_format = magic == FASTTEXT_MAGIC
    if new_format:
        vals = r.unpack(_ARGS_NEW, "the training arguments")
        dim, ws, epoch, min_count, neg, _wng, loss, model, bucket, minn, maxn, _lr, t = vals
    else:
        dim, ws = magic, version
        version = None
        vals = r.unpack(_ARGS_OLD, "the training arguments")
        epoch, min_count, neg, _wng, loss, model, bucket, minn, maxn, _lr, t = vals
    if not (0 < dim <= 100_000) or ws < 0 or bucket < 0 or minn < 0 or maxn < 0:
        raise r.error(
            f"implausible header: dim={dim}, ws={ws}, bucket={bucket}, minn={minn}, "
            f"maxn={maxn}; not a fastText .bin model",
            0,
        )
    if model == 3:
        raise ValueError(
            f"{r.path}: this is a supervised fastText model (classifier); only unsupervised "
            "(skipgram/cbow) models can be loaded."
        )
    return _Header(
        new_format, version, dim, ws, epoch, min_count, neg, loss, model, bucket, minn, maxn, t
    )


def _read_dictionary(r, new_format):
    """The dictionary: its sizes, each word's entry and the prune index (skipped)."""
    size_, nwords, nlabels = r.unpack("<3i", "the dictionary sizes")
    (n_tokens,) = r.unpack("<q", "the token count")
    if nlabels > 0:
        raise ValueError(
            f"{r.path}: the model has {nlabels} labels (supervised model); only unsupervised "
            "(skipgram/cbow) models can be loaded."
        )
    # each dictionary entry takes at least 10 bytes (\0 + int64 + int8)
    if not (0 < nwords <= size_ <= r.remaining // 10) or nwords != size_:
        raise r.error(
            f"dictionary header announces size={size_}, nwords={nwords}, which this "
            f"{r.size}-byte file cannot hold",
            r.offset - 20,
        )
    prune = 0
    if new_format:
        (prune,) = r.unpack("<q", "the prune index size")
    words, counts = [], np.empty(nwords, dtype=np.int64)
    for i in range(nwords):
        raw = r.read_cstring(f"word {i}")
        count, kind = r.unpack("<qb", f"the count of word {i}")
        if kind != 0 or count < 0:
            raise r.error(f"entry {i} ({raw[:40]!r}) is not a word entry (type {kind})")
        words.append(raw.decode("utf-8", errors="backslashreplace"))
        counts[i] = count
    if prune > 0:
        if 8 * prune > r.remaining:
            raise r.error(f"prune index of {prune} pairs exceeds the file")
        r.read(8 * prune, "the prune index")
    return _Dictionary(words, counts, n_tokens)


def _read_input_matrix(r, header, nwords):
    """The input matrix (words, then n-gram buckets), after the quantization flag."""
    if header.new_format:
        (quant,) = r.unpack("<?", "the quantization flag")
        if quant:
            raise ValueError(
                f"{r.path}: quantized fastText models (.ftz) are not supported; use the "
                "unquantized .bin model."
            )
    start = r.offset
    rows, cols = r.unpack("<2q", "the input matrix shape")
    if cols != header.dim or rows != nwords + header.bucket:
        raise r.error(
            f"input matrix is {rows} x {cols}, expected {nwords + header.bucket} x "
            f"{header.dim} (nwords + bucket x dim)",
            start,
        )
    return r.read_floats(rows * cols, "the input matrix").reshape(rows, cols)


def _read_output_matrix(r, header, nwords, load_output):
    """The output matrix, checked to fill the rest of the file; read only with ``load_output``.

    Returns
    -------
    output_matrix : numpy.ndarray of shape (n_outputs, dim) or None
        ``None`` without ``load_output``.
    """
    if header.new_format:
        r.unpack("<?", "the output quantization flag")
    start = r.offset
    orows, ocols = r.unpack("<2q", "the output matrix shape")
    if ocols != header.dim or not (0 < orows <= nwords):
        raise r.error(
            f"output matrix is {orows} x {ocols}, expected {nwords} x {header.dim}", start
        )
    if 4 * orows * ocols != r.remaining:
        raise r.error(
            f"the output matrix needs {4 * orows * ocols} bytes but {r.remaining} remain",
            start,
        )
    if not load_output:
        return None
    return r.read_floats(orows * ocols, "the output matrix").reshape(orows, ocols)


def read_facebook_bin(path, load_output=False) -> FacebookModel:
    """Read a Facebook fastText ``.bin`` model trained with ``fasttext skipgram``/``cbow``.

    The file's sections in order: the header (:func:`_read_header`), the
    dictionary (:func:`_read_dictionary`), the input matrix
    (:func:`_read_input_matrix`) and the output matrix
    (:func:`_read_output_matrix`).

    Parameters
    ----------
    path : str or os.PathLike
        Uncompressed ``.bin`` file (old or new format).
    load_output : bool, default=False
        Also read the output matrix (needed only to continue training).

    Returns
    -------
    model : FacebookModel

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is corrupt or truncated (the message names the file and
        the byte offset), a supervised (labelled) or quantized (``.ftz``)
        model, or an unsupported loss.
    """
    path = os.fspath(path)
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        r = _Reader(fh, path, size)
        h = _read_header(r)
        d = _read_dictionary(r, h.new_format)
        input_matrix = _read_input_matrix(r, h, len(d.words))
        output_matrix = _read_output_matrix(r, h, len(d.words), load_output)
    if not np.isfinite(input_matrix).all():
        raise ValueError(f"{path}: the input matrix holds NaN or infinite values.")
    return FacebookModel(
        words=d.words,
        counts=d.counts,
        input_matrix=input_matrix.astype(np.float32, copy=False),
        output_matrix=output_matrix,
        dim=h.dim,
        window=h.ws,
        epochs=h.epoch,
        min_count=h.min_count,
        negative=h.neg,
        loss=h.loss,
        model=h.model,
        bucket=h.bucket,
        min_n=h.minn,
        max_n=h.maxn,
        sample=h.t,
        n_tokens=d.n_tokens,
        version=h.version,
    )


def load_facebook_vectors(path):
    """Load the word and n-gram vectors of a Facebook fastText ``.bin`` model.

    Parameters
    ----------
    path : str or os.PathLike
        An unsupervised model saved by ``fasttext skipgram``/``cbow`` (or
        gensim's ``save_facebook_model``), old or new format, uncompressed.

    Returns
    -------
    kv : FastTextKeyedVectors
        Vectors equal to gensim's ``load_facebook_model(path).wv[word]``
        (and to fastText's ``get_word_vector``) for known and unknown words.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is corrupt or truncated (file and byte offset named), a
        supervised or quantized model.

    See Also
    --------
    skembed.text.word2vec._fasttext.FastTextTransformer.from_facebook : the model as a fitted transformer.
    skembed.KeyedVectors.load_word2vec_format : for ``.vec`` files (no n-grams).

    References
    ----------
    Bojanowski, Grave, Joulin & Mikolov (2017), "Enriching Word Vectors with
    Subword Information", TACL 5.

    Examples
    --------
    >>> from gensim.test.utils import datapath
    >>> kv = load_facebook_vectors(datapath("lee_fasttext.bin"))
    >>> kv["governmentz"].shape  # any string gets a vector, from its n-grams
    (10,)
    """
    m = read_facebook_bin(path)
    n = len(m.words)
    return FastTextKeyedVectors(
        m.input_matrix[:n], m.input_matrix[n:], m.words, m.min_n, m.max_n, counts=m.counts
    )
