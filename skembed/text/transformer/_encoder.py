"""Running a loaded encoder over documents, shared by BertPooledEmbedder and SetFitEmbedder.

:class:`EncoderMixin` holds the steps between the tokenizer and the pooled
vectors (sentence-transformers' ``encode``): word-piece ids without special
tokens, windows of ``max_length`` (overlapping by ``stride`` with
``truncation="chunk"``), length-sorted batches, the hidden states of the
selected layers (torch or an exported session), pooling and the merging of
windows; the namespace of the embedding cache; and the pickling of the model
(weights travel as plain data, the model is reloaded on the fitted device or,
failing that, on the CPU with a warning).

The estimator sets ``device_``, ``batch_size``, ``pooling``, ``layers``,
``layer_combine``, ``truncation``, ``stride``, ``n_jobs``, ``verbose`` and
defines ``_load(device, stored=None)``.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from numbers import Integral
from typing import NamedTuple

import numpy as np

from ...utils._compute import device_after_unpickling, limit_threads
from ...utils._progress import progress
from ._export import calibration_hash, input_names
from ._loading import TORCH_INT8_METHOD, LoadedEncoder, never_download, special_ids
from ._pipeline import Plan, apply_dense
from ._weights import StoredWeightsError, export_weights

__all__ = ["EncoderMixin", "Window"]


def _dense_digest(dense):
    """Identity of Dense layers' weights and activations (a part of the cache key)."""
    h = hashlib.blake2b(digest_size=12)
    for layer in dense:
        h.update(layer.activation.encode() + layer.weight.tobytes())
        if layer.bias is not None:
            h.update(layer.bias.tobytes())
    return h.hexdigest()


class Window(NamedTuple):
    """One sequence to run: ``content`` (ids, special tokens not added) of document ``doc``.

    ``content[:n_repeat]`` repeats the prompt's ids (windows after the first
    of a chunked document with a prompt); the rest starts at word piece
    ``start`` of the document.
    """

    doc: int
    start: int
    content: list
    n_repeat: int = 0


class EncoderMixin:
    """Batched inference, cache namespace and pickling of a transformer-encoder estimator."""

    def _calibrated(self):
        return self.backend == "openvino" and self.quantize == "int8"

    def _calibration_key(self):
        chunk = self._cuts_nothing()
        return calibration_hash(
            self._calibration, self.max_length_, chunk and self.stride, self.batch_size
        )

    def _calibration_feeds(self, names):
        """Input batches (numpy) of the calibration sample, for a calibrated export."""
        seqs = self._windows(self._tokenize(self._calibration))
        return [{n: t[n].numpy() for n in names} for _, t in self._batches(seqs)]

    def _resolve_plan(self, encoder: LoadedEncoder):
        """The estimator's own pooling and normalisation (no model pipeline is read)."""
        if encoder.decoder:
            raise ValueError(
                f"{encoder.source.location!r} is a decoder-only (causal language) model; "
                f"{type(self).__name__} needs a bidirectional encoder (BERT, RoBERTa, MiniLM, "
                "MPNet, ...); BertPooledEmbedder embeds with decoder models."
            )
        return Plan(self.pooling, self.normalize)

    def _current_plan(self):
        """The plan of the fitted state (None before ``fit``)."""
        if "_pool_mode" not in self.__dict__:
            return None
        return Plan(
            self._pool_mode,
            self._normalize_out,
            self._prompt,
            self._include_prompt,
            tuple(self._dense),
            self._truncate_dim,
        )

    def _setup(self, encoder: LoadedEncoder, plan=None):
        self.model_ = encoder.model
        self.tokenizer_ = encoder.tokenizer
        self._source = encoder.source
        config = encoder.model.config
        n_hidden = encoder.n_hidden_states
        layers = [self.layers] if isinstance(self.layers, Integral) else list(self.layers)
        if not layers or any(
            not isinstance(i, Integral) or not -n_hidden <= i < n_hidden for i in layers
        ):
            raise ValueError(
                f"layers={self.layers!r} is out of range: the model has {n_hidden - 1} layers plus "
                f"the embedding layer, so indices go from {-n_hidden} to {n_hidden - 1} "
                "(-1 is the last layer, 0 the embeddings)."
            )
        self.layers_ = [int(i) % n_hidden for i in layers]
        pos_limit = getattr(config, "max_position_embeddings", None)
        if config.model_type in ("roberta", "xlm-roberta", "camembert") and pos_limit:
            pos_limit -= (config.pad_token_id or 0) + 1
        max_length = self.max_length if self.max_length is not None else encoder.max_length
        # late chunking runs the longest pass the positions allow; chunks are max_length long
        self._pass_length = int(pos_limit or max_length)
        if pos_limit and max_length > pos_limit:
            raise ValueError(
                f"max_length={max_length} exceeds the model's position limit ({pos_limit}); use "
                f"max_length<={pos_limit} and truncation='chunk' for longer documents."
            )
        self.max_length_ = int(max_length)
        self._prefix, self._suffix = special_ids(self.tokenizer_)
        self._window = self.max_length_ - len(self._prefix) - len(self._suffix)
        if self._window < 1:
            raise ValueError(f"max_length={self.max_length_} leaves no room for text tokens.")
        width = encoder.hidden_size
        self._token_width = width * len(self.layers_) if self.layer_combine == "concat" else width
        self._apply_plan(plan if plan is not None else self._resolve_plan(encoder))
        self._decoder = bool(encoder.decoder)
        self._use_token_types = "token_type_ids" in input_names(self.tokenizer_)
        pad = self.tokenizer_.pad_token_id
        self._pad_id = int(pad) if pad is not None else 0

    def _apply_plan(self, plan):
        """Keep the plan's settings as plain fitted state; check them against the windows."""
        self._pool_mode, self._normalize_out = plan.pooling, plan.normalize
        self._prompt, self._include_prompt = plan.prompt, plan.include_prompt
        self._dense, self._truncate_dim = list(plan.dense), plan.truncate_dim
        self._n_prompt = len(self._tokenize([""])[0]) if plan.prompt else 0
        room = self._window - self._n_prompt
        if room < 1:
            raise ValueError(
                f"The prompt {plan.prompt!r} takes {self._n_prompt} word pieces, which leaves no "
                f"room for text in max_length={self.max_length_}; use a larger max_length or a "
                "shorter prompt."
            )
        if self._late():  # the stride is the overlap of late chunking's long passes
            room += self._pass_length - self.max_length_
        if self._cuts_nothing() and self.stride >= room:
            raise ValueError(
                f"stride={self.stride} must be smaller than the window of {room} text "
                f"tokens (max_length={self.max_length_} minus special tokens and prompt)."
            )
        if plan.dense and plan.dense[0].weight.shape[1] != self._token_width:
            raise ValueError(
                f"The model's first Dense layer takes {plan.dense[0].weight.shape[1]} inputs but "
                f"the pooled vectors have {self._token_width} dimensions (layers={self.layers!r}, "
                f"layer_combine={self.layer_combine!r}); use layers=-1 with this model."
            )
        self._pooled_width = plan.dense[-1].weight.shape[0] if plan.dense else self._token_width
        self._n_features_out = plan.truncate_dim or self._pooled_width

    def _namespace(self):
        """Digest of everything that changes a cached vector (``truncate_dim`` and normalisation
        are applied after the cache, so every width and both norms share one entry)."""
        parts = {
            "model": self._source.key,
            "revision": self.revision,
            "dtype": str(self.torch_dtype),
            "quantize": TORCH_INT8_METHOD
            if self.quantize == "int8" and self.backend == "torch"
            else self.quantize,
            "max_length": self.max_length_,
            **({"backend": self.backend} if self.backend != "torch" else {}),
            **({"calibration": self._calibration_key()} if self._calibrated() else {}),
            "chunk": self._cuts_nothing(),
            **({"late_chunking": self._pass_length} if self._late() else {}),
            "stride": self.stride if self._cuts_nothing() else None,
            "pooling": self._pool_mode,
            # present only when set, so the caches of plain models stay valid
            **({"prompt": self._prompt} if self._prompt else {}),
            **({"pool_prompt": False} if self._n_skip() else {}),
            **({"dense": _dense_digest(self._dense)} if self._dense else {}),
            **({"left_padding": True} if self._decoder else {}),
            "layers": self.layers_,
            "combine": self.layer_combine if len(self.layers_) > 1 else None,
        }
        return hashlib.blake2b(
            json.dumps(parts, sort_keys=True).encode(), digest_size=12
        ).hexdigest()

    def _count_truncated(self, texts):
        if self._cuts_nothing():
            return 0
        return int(sum(len(x) > self._window for x in self._tokenize(texts)))

    def _check_lengths(self, n_pieces):
        """Warn or raise (per ``truncation``) about documents longer than the window."""
        if self._cuts_nothing() or self.truncation == "truncate":
            return
        long_rows = np.flatnonzero(n_pieces > self._window)
        if not len(long_rows):
            return
        msg = (
            f"{len(long_rows)} of {len(n_pieces)} documents are longer than max_length="
            f"{self.max_length_} word pieces (first rows: {long_rows[:10].tolist()})"
        )
        if self.truncation == "error":
            raise ValueError(
                f"{msg}. Set truncation='chunk' to embed whole documents in overlapping windows, "
                "'truncate' to keep their beginning, or a larger max_length."
            )
        warnings.warn(
            f"{msg} and were truncated. Set truncation='chunk' to embed whole documents or "
            "truncation='truncate' to silence this warning.",
            UserWarning,
            stacklevel=3,
        )

    def _tokenize(self, texts):
        """Word-piece ids of each text, the prompt put before it, without special tokens or
        truncation (prompt and text are tokenized as one string, as sentence-transformers)."""
        tok = self.tokenizer_
        prompt = self.__dict__.get("_prompt") or ""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = tok(
                [prompt + t for t in texts] if prompt else list(texts),
                add_special_tokens=False,
                truncation=False,
                verbose=False,
                return_attention_mask=False,
                return_token_type_ids=False,
            )
        return out["input_ids"]

    def _windows(self, ids):
        """The :class:`Window` sequences to run, each window of a chunked document led by the
        prompt (so every window is embedded as the model was trained)."""
        W, chunk, p = self._window, self._cuts_nothing(), self._n_prompt
        if self._late():  # one pass as long as the positions allow; chunks are pooled inside
            W = self._pass_length - len(self._prefix) - len(self._suffix)
        span = W - p
        step = span - self.stride
        seqs = []
        for d, x in enumerate(ids):
            if len(x) <= W or not chunk:
                seqs.append(Window(d, 0, x[:W]))
                continue
            head, body = list(x[:p]), x[p:]
            start = 0
            while True:
                content = head + list(body[start : start + span])
                seqs.append(Window(d, p + start, content, p if start else 0))
                if start + span >= len(body):
                    break
                start += step
        return seqs

    def _inputs(self, contents, device):
        """One batch of content-id sequences as padded tensors, special tokens added."""
        import torch

        prefix, suffix = self._prefix, self._suffix
        length = max(len(c) for c in contents) + len(prefix) + len(suffix)
        input_ids = np.full((len(contents), length), self._pad_id, np.int64)
        mask = np.zeros((len(contents), length), np.int64)
        left = self.__dict__.get("_decoder", False)  # a decoder's last token is the last column
        for r, content in enumerate(contents):
            row = prefix + list(content) + suffix
            cols = slice(length - len(row), length) if left else slice(0, len(row))
            input_ids[r, cols] = row
            mask[r, cols] = 1
        inputs = {
            "input_ids": torch.from_numpy(input_ids).to(device),
            "attention_mask": torch.from_numpy(mask).to(device),
        }
        if self._use_token_types:
            inputs["token_type_ids"] = torch.zeros_like(inputs["input_ids"])
        if left:  # positions count from each row's first real token, not from the padding
            positions = (np.cumsum(mask, axis=1) - 1).clip(min=0)
            inputs["position_ids"] = torch.from_numpy(positions).to(device)
        return inputs

    def _batches(self, seqs):
        """Length-sorted batches of padded tensors: yields (sequence indices, tensors)."""
        order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i].content))
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            yield idx, self._inputs([seqs[i].content for i in idx], self.device_)

    def _hidden(self, inputs):
        """Token vectors of the selected layers for one batch, shape (batch, seq, width)."""
        runner = getattr(self, "_runner", None)
        if runner is not None:  # exported backend: the graph combines the layers
            return runner(inputs)
        return self._torch_hidden(inputs)

    def _torch_hidden(self, inputs):
        """:meth:`_hidden` of the torch model (with gradients unless under inference mode)."""
        from ...nn.pooling import combine_layers

        last = self.layers_ == [self.model_.config.num_hidden_layers]
        out = self.model_(**inputs, output_hidden_states=not last, return_dict=True)
        if last:
            return out.last_hidden_state
        return combine_layers(out.hidden_states, self.layers_, self.layer_combine)

    def _late(self):
        return self.truncation == "late_chunking"

    def _cuts_nothing(self):
        """Whether whole documents are embedded (windows, or late chunking's long passes)."""
        return self.truncation in ("chunk", "late_chunking")

    def _n_skip(self):
        """Real tokens left out of the pool at each sequence's start: the special prefix and
        the prompt, where the model pools without its prompt (``include_prompt=False``)."""
        if self._include_prompt or not self._n_prompt:
            return 0
        return len(self._prefix) + self._n_prompt

    def _embed(self, ids):
        """Pooled vectors of tokenized documents (Dense layers applied), shape (len(ids),
        ``_pooled_width``), float32."""
        import torch

        from ...nn.pooling import chunk_pool_sums, finalize_pool, pool_stats

        seqs = self._windows(ids)
        n_docs, mode, n_skip = len(ids), self._pool_mode, self._n_skip()
        late, size = self._late(), self.max_length_  # late: chunk vectors are summed, counted
        fill = -np.inf if mode == "max" and not late else 0.0
        stat = np.full((n_docs, self._token_width), fill, np.float32)
        count = np.zeros(n_docs, np.float32)
        n_windows = np.zeros(n_docs, np.float32)
        n_batches = -(-len(seqs) // self.batch_size)
        bar = progress(total=n_batches, verbose=self.verbose, desc="embedding", unit="batch")
        with limit_threads(self.n_jobs), torch.inference_mode():
            for idx, inputs in self._batches(seqs):
                tokens = self._hidden(inputs)
                mask = inputs["attention_mask"]
                if late:
                    s, c = chunk_pool_sums(tokens, mask, mode, size, n_skip)
                else:
                    s, c = pool_stats(tokens, mask, mode, n_skip)
                s = s.float().cpu().numpy()
                c = c.float().cpu().numpy()
                docs = np.fromiter((seqs[i].doc for i in idx), np.int64, len(idx))
                if len(seqs) == n_docs:  # one window per document: no merging needed
                    stat[docs], count[docs] = s, c
                elif mode == "max" and not late:
                    np.maximum.at(stat, docs, s)
                else:
                    np.add.at(stat, docs, s)
                    np.add.at(count, docs, c)
                np.add.at(n_windows, docs, 1.0)
                bar.update(1)
        bar.close()
        if late:  # the mean of every chunk vector of the document
            pooled = stat / np.maximum(count, 1.0)[:, None]
        elif mode in ("cls", "lasttoken"):  # one token per window: the windows' mean
            pooled = stat / n_windows[:, None]
        else:
            pooled = finalize_pool(stat, count, mode)
        return apply_dense(pooled.astype(np.float32, copy=False), self._dense)

    def _finish(self, vectors):
        """Cached-width vectors to the output: the first ``truncate_dim`` dimensions, then
        L2 normalisation (so a Matryoshka prefix of a normalising model is unit length)."""
        if self._truncate_dim is not None:
            vectors = vectors[:, : self._truncate_dim]
        if self._normalize_out:
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.maximum(norms, np.float32(1e-12))
        return vectors

    def transform_tokens(self, X, return_pieces=False):
        """Contextual vectors of each document's word pieces.

        Parameters
        ----------
        X : iterable of str or of list of str, length n_documents
            Documents (strings, split by the model's tokenizer).
        return_pieces : bool, default=False
            Also return the word pieces (``tokenizer_.convert_ids_to_tokens``).

        Returns
        -------
        vectors : list of numpy.ndarray, length n_documents
            One array of shape (n_word_pieces_i, width) per document, where
            width is the hidden states' (before any Dense layer of the
            model), ``dtype`` (float32 by default): the hidden states of
            ``layers`` combined per ``layer_combine``, special tokens and padding
            excluded (a prompt's word pieces, which lead the document, are
            included). Documents are cut to ``max_length`` as in ``transform``;
            with ``truncation="chunk"`` a word piece in several windows gets
            the mean of its vectors, so every piece is covered.
        pieces : list of list of str, length n_documents
            Only with ``return_pieces=True``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            Per ``truncation="error"``.

        Examples
        --------
        >>> from skembed.text import BertPooledEmbedder
        >>> emb = BertPooledEmbedder(device="cpu").fit(["A cat sat."])  # doctest: +SKIP
        >>> vectors, pieces = emb.transform_tokens(["A cat sat."], return_pieces=True)  # doctest: +SKIP
        >>> vectors[0].shape, pieces[0]  # doctest: +SKIP
        ((4, 384), ['a', 'cat', 'sat', '.'])
        """
        import torch

        texts = self._fitted_texts(X)
        index: dict[str, int] = {}
        inverse = [index.setdefault(t, len(index)) for t in texts]
        unique = list(index)
        ids = self._tokenize(unique)
        self._check_lengths(np.array([len(ids[i]) for i in inverse], np.int64))
        chunk = self._cuts_nothing()
        kept = [x if chunk else x[: self._window] for x in ids]
        width = self._token_width
        sums = [np.zeros((len(x), width), np.float32) for x in kept]
        counts = [np.zeros(len(x), np.float32) for x in kept]
        seqs = self._windows(ids)
        n_pre = len(self._prefix)
        with limit_threads(self.n_jobs), torch.inference_mode():
            for idx, inputs in self._batches(seqs):
                tokens = self._hidden(inputs).float().cpu().numpy()
                for r, i in enumerate(idx):
                    w = seqs[i]
                    n, rep = len(w.content), w.n_repeat
                    # the row's first content column: after the padding of a decoder's batch
                    pad = tokens.shape[1] - n_pre - n - len(self._suffix) if self._decoder else 0
                    at = pad + n_pre
                    sums[w.doc][:rep] += tokens[r, at : at + rep]  # a repeated prompt
                    counts[w.doc][:rep] += 1.0
                    sums[w.doc][w.start : w.start + n - rep] += tokens[r, at + rep : at + n]
                    counts[w.doc][w.start : w.start + n - rep] += 1.0
        vecs = [s / np.maximum(c, 1.0)[:, None] for s, c in zip(sums, counts, strict=True)]
        vectors = [vecs[i].astype(self.dtype) for i in inverse]  # astype copies: no aliasing
        if not return_pieces:
            return vectors
        pieces = [self.tokenizer_.convert_ids_to_tokens(list(x)) for x in kept]
        return vectors, [list(pieces[i]) for i in inverse]

    def _check_stored_model(self):
        """Run the model rebuilt from a file once: a config value that transformers accepts
        (a negative head count, a zero epsilon) fails or overflows only in a forward pass, so
        it is refused at load rather than at the first ``transform``."""
        vectors = self._embed(self._tokenize(["a"]))
        if not np.isfinite(vectors).all():
            raise StoredWeightsError(
                f"{type(self).__name__}: the stored weights or config (_stored_weights) give "
                "NaN or infinite vectors; the file is damaged or crafted."
            )

    def _check_finite(self, vectors):
        """Refuse NaN or infinite vectors from the model (an overflow in its weights or in a
        half-precision forward pass) instead of returning them."""
        bad = ~np.isfinite(vectors).all(axis=1)
        if bad.any():
            raise ValueError(
                f"{type(self).__name__}: the model gives NaN or infinite vectors for "
                f"{int(bad.sum())} distinct document(s). Its weights overflow in "
                f"{self.torch_dtype}: use torch_dtype='float32'; for a model loaded from a "
                "file, its stored weights or config (_stored_weights) are damaged: refit."
            )

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        state = dict(super().__getstate__())  # object.__getstate__ returns __dict__ itself
        for key in ("model_", "tokenizer_", "_runner", "_from_file"):
            state.pop(key, None)
        loaded = self.__dict__.get("model_") is not None
        if self.store_weights and loaded and not isinstance(self.model, (tuple, list)):
            state["_stored_weights"] = export_weights(self)
        return state

    def __setstate__(self, state):
        stored = state.pop("_stored_weights", None)
        state.setdefault("_calibration", [])
        cache = state.get("cache")
        if not (cache is None or (isinstance(cache, str) and cache == "memory")):
            # a file does not choose where this process writes: its cache directory is dropped
            warnings.warn(
                f"{type(self).__name__}: the stored cache={cache!r} is not used (a loaded file "
                "does not choose where this process writes); set_params(cache=...) to use one.",
                UserWarning,
                stacklevel=2,
            )
            state["cache"] = None
        state["_from_file"] = True  # its model loads from local files only, never downloads
        super().__setstate__(state)
        if "device_" not in state:
            return
        self.model_ = None
        device = device_after_unpickling(self, self.device_)
        try:
            with never_download():
                self._load(device, stored)
                if stored is not None:
                    self._check_stored_model()
        except StoredWeightsError:  # damaged or crafted stored weights: refused, not retried
            raise
        except Exception as exc:  # noqa: BLE001 - reported, retried at transform
            if stored is not None and not isinstance(exc, (ImportError, OSError)):
                # weights from the file that do not build a model: refused too
                raise StoredWeightsError(
                    f"{type(self).__name__}: the stored weights (_stored_weights) do not build "
                    f"a model ({type(exc).__name__}: {exc}); the file is damaged or crafted."
                ) from None
            warnings.warn(
                f"{type(self).__name__} could not reload its model after unpickling ({exc}); "
                "transform will retry and raise if it still fails.",
                UserWarning,
                stacklevel=2,
            )
            self.model_ = None
