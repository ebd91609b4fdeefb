"""The word2vec text and binary vector formats (word2vec, GloVe, fastText ``.vec``, gensim).

The writer and readers behind :meth:`skembed.KeyedVectors.save_word2vec_format` and
:meth:`~skembed.KeyedVectors.load_word2vec_format`; every
malformed input raises a ``ValueError`` that names the file and the line
(text) or byte offset (binary).
"""

from __future__ import annotations

import os

import numpy as np

from .utils._files import write_atomically


def write(path, vectors, words, *, binary=False, write_header=True):
    """Write ``vectors`` (row ``i`` is ``words[i]``) in the text or binary format.

    Parameters
    ----------
    path : str or os.PathLike
    vectors : numpy.ndarray of shape (n_words, vector_size), float
    words : list of str
    binary : bool, default=False
        word2vec's binary layout: ``word`` + space + ``vector_size``
        little-endian float32, then ``\\n``; text (``repr`` of each float) otherwise.
    write_header : bool, default=True
        The ``n_words vector_size`` first line (``False``: GloVe's text format).

    Notes
    -----
    Written through a temporary file renamed into place (:func:`write_atomically`): a fault
    during the write leaves a previous file at ``path`` as it was.
    """
    write_atomically(path, lambda tmp: _write_to(tmp, vectors, words, binary, write_header))


def _write_to(path, vectors, words, binary, write_header):
    with open(path, "wb") as fh:
        if write_header:
            fh.write(f"{len(words)} {vectors.shape[1]}\n".encode())
        if binary:
            for word, vec in zip(words, vectors.astype("<f4"), strict=True):
                fh.write(word.encode("utf-8") + b" " + vec.tobytes() + b"\n")
        else:
            for word, vec in zip(words, vectors, strict=True):
                line = word + " " + " ".join(repr(float(x)) for x in vec) + "\n"
                fh.write(line.encode("utf-8"))


def read_text(path, *, no_header=False, limit=None, unicode_errors="strict"):
    """Read the text format.

    Parameters
    ----------
    path : str
    no_header : bool, default=False
        The file has no ``n_words vector_size`` header (GloVe).
    limit : int or None, default=None
        Read only the first ``limit`` vectors.
    unicode_errors : str, default="strict"
        ``errors`` of :meth:`bytes.decode` for the words.

    Returns
    -------
    vectors : numpy.ndarray of shape (n_words, vector_size), float32
    words : list of str

    Raises
    ------
    ValueError
        A malformed header or line, a word that is not valid UTF-8 (strict),
        a duplicate word, a truncated file or no vectors at all.
    """
    words, rows, seen = [], [], {}
    with open(path, "rb") as fh:
        dim = None
        n_expected = None
        if not no_header:
            header = fh.readline().decode("utf-8", errors="replace").split()
            if len(header) != 2 or not all(h.isdigit() for h in header):
                raise ValueError(
                    f"{path}: line 1 is not a 'n_words vector_size' header "
                    f"({' '.join(header)[:60]!r}); pass no_header=True for GloVe files."
                )
            n_expected, dim = int(header[0]), int(header[1])
        for lineno, raw in enumerate(fh, start=1 if no_header else 2):
            if limit is not None and len(words) >= limit:
                break
            where = f"{path}: line {lineno}"
            line = _decode(raw, unicode_errors, where)
            parts = line.rstrip("\n").rstrip("\r").rstrip(" ").split(" ")
            if len(parts) < 2:
                if not line.strip():
                    continue
                raise ValueError(f"{where} has no vector.")
            if dim is None:
                dim = len(parts) - 1
            if len(parts) != dim + 1:
                raise ValueError(f"{where} has {len(parts) - 1} values, expected {dim}.")
            try:
                rows.append(np.array(parts[1:], dtype=np.float32))
            except ValueError:
                raise ValueError(f"{where} holds a non-numeric value.") from None
            _add_word(words, seen, parts[0], where, f"line {lineno}")
        if n_expected is not None and limit is None and len(words) != n_expected:
            raise ValueError(
                f"{path}: header announces {n_expected} vectors but the file holds {len(words)} "
                "(truncated file?)."
            )
    if not words:
        raise ValueError(f"{path}: no vectors found.")
    return np.vstack(rows), words


def read_binary(path, *, no_header=False, limit=None, unicode_errors="strict"):
    """Read the binary format of the original word2vec tool.

    Parameters
    ----------
    path : str
    no_header : bool, default=False
        Ignored: the binary format always has a header.
    limit, unicode_errors
        As :func:`read_text`.

    Returns
    -------
    vectors : numpy.ndarray of shape (n_words, vector_size), float32
    words : list of str

    Raises
    ------
    ValueError
        A malformed or oversized header, a file that ends inside a word or a
        vector, an unterminated word, invalid UTF-8 (strict), a duplicate word.
    """
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        header = fh.readline()
        parts = header.split()
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(
                f"{path}: byte offset 0: not a word2vec binary header ({header[:60]!r})."
            )
        n_words, dim = int(parts[0]), int(parts[1])
        if dim <= 0 or n_words <= 0 or n_words * dim * 4 > size:
            raise ValueError(
                f"{path}: byte offset 0: header announces {n_words} x {dim} float32 values, more "
                f"than the file's {size} bytes hold (corrupt or truncated file)."
            )
        if limit is not None:
            n_words = min(n_words, int(limit))
        vectors = np.empty((n_words, dim), dtype=np.float32)
        words, seen = [], {}
        nbytes = 4 * dim
        for i in range(n_words):
            offset = fh.tell()
            word = bytearray()
            while True:
                ch = fh.read(1)
                if ch == b"":
                    raise ValueError(f"{path}: byte offset {offset}: file ends inside word {i}.")
                if ch == b" ":
                    break
                if ch == b"\n" and not word:
                    offset += 1  # the newline that ends the previous vector
                else:
                    word += ch
                if len(word) > 10_000:
                    raise ValueError(f"{path}: byte offset {offset}: word {i} is not terminated.")
            where = f"{path}: byte offset {offset}"
            buf = fh.read(nbytes)
            if len(buf) != nbytes:
                raise ValueError(f"{where}: file ends inside the vector of word {i}.")
            vectors[i] = np.frombuffer(buf, dtype="<f4")
            text = _decode(bytes(word), unicode_errors, where)
            _add_word(words, seen, text, where, f"byte offset {offset}")
    return vectors, words


def _decode(raw, unicode_errors, where):
    """UTF-8 text of ``raw``; a ``strict`` decoding error names the position and the fix."""
    try:
        return raw.decode("utf-8", errors=unicode_errors)
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{where}: {raw[:60]!r} is not valid UTF-8 ({err.reason} at byte {err.start}); "
            "pass unicode_errors='ignore' or 'replace' to load such words."
        ) from None


def _add_word(words, seen, word, where, position):
    """Append ``word``, refusing a word met before (the error names both positions)."""
    first = seen.setdefault(word, position)
    if first is not position:
        raise ValueError(
            f"{where}: duplicate word {word!r} (first at {first}); each word must appear once."
        )
    words.append(word)
