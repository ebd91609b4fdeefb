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

import numpy as np

from ...utils._compute import device_after_unpickling, limit_threads
from ...utils._progress import progress
from ._export import calibration_hash, input_names
from ._loading import TORCH_INT8_METHOD, LoadedEncoder, never_download, special_ids
from ._weights import StoredWeightsError, export_weights

__all__ = ["EncoderMixin"]


class EncoderMixin:
    """Batched inference, cache namespace and pickling of a transformer-encoder estimator."""

    def _calibrated(self):
        return self.backend == "openvino" and self.quantize == "int8"

    def _calibration_key(self):
        chunk = self.truncation == "chunk"
        return calibration_hash(
            self._calibration, self.max_length_, chunk and self.stride, self.batch_size
        )

    def _calibration_feeds(self, names):
        """Input batches (numpy) of the calibration sample, for a calibrated export."""
        seqs = self._windows(self._tokenize(self._calibration))
        return [{n: t[n].numpy() for n in names} for _, t in self._batches(seqs)]

    def _setup(self, encoder: LoadedEncoder):
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
        if self.truncation == "chunk" and self.stride >= self._window:
            raise ValueError(
                f"stride={self.stride} must be smaller than the window of {self._window} text "
                f"tokens (max_length={self.max_length_} minus special tokens)."
            )
        width = encoder.hidden_size
        self._n_features_out = (
            width * len(self.layers_) if self.layer_combine == "concat" else width
        )
        self._use_token_types = "token_type_ids" in input_names(self.tokenizer_)
        pad = self.tokenizer_.pad_token_id
        self._pad_id = int(pad) if pad is not None else 0

    def _namespace(self):
        """Digest of everything that changes a cached vector (normalisation is applied after)."""
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
            "chunk": self.truncation == "chunk",
            "stride": self.stride if self.truncation == "chunk" else None,
            "pooling": self.pooling,
            "layers": self.layers_,
            "combine": self.layer_combine if len(self.layers_) > 1 else None,
        }
        return hashlib.blake2b(
            json.dumps(parts, sort_keys=True).encode(), digest_size=12
        ).hexdigest()

    def _count_truncated(self, texts):
        if self.truncation == "chunk":
            return 0
        return int(sum(len(x) > self._window for x in self._tokenize(texts)))

    def _check_lengths(self, n_pieces):
        """Warn or raise (per ``truncation``) about documents longer than the window."""
        if self.truncation in ("chunk", "truncate"):
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
        """Word-piece ids of each text, without special tokens or truncation."""
        tok = self.tokenizer_
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = tok(
                list(texts),
                add_special_tokens=False,
                truncation=False,
                verbose=False,
                return_attention_mask=False,
                return_token_type_ids=False,
            )
        return out["input_ids"]

    def _windows(self, ids):
        """Sequences to run: (doc index, start offset, content ids) per window."""
        W, chunk, step = self._window, self.truncation == "chunk", self._window - self.stride
        seqs = []
        for d, x in enumerate(ids):
            if len(x) <= W or not chunk:
                seqs.append((d, 0, x[:W]))
                continue
            start = 0
            while True:
                seqs.append((d, start, x[start : start + W]))
                if start + W >= len(x):
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
        for r, content in enumerate(contents):
            row = prefix + list(content) + suffix
            input_ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        inputs = {
            "input_ids": torch.from_numpy(input_ids).to(device),
            "attention_mask": torch.from_numpy(mask).to(device),
        }
        if self._use_token_types:
            inputs["token_type_ids"] = torch.zeros_like(inputs["input_ids"])
        return inputs

    def _batches(self, seqs):
        """Length-sorted batches of padded tensors: yields (sequence indices, tensors)."""
        order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i][2]))
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            yield idx, self._inputs([seqs[i][2] for i in idx], self.device_)

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

    def _embed(self, ids):
        """Pooled vectors of tokenized documents, shape (len(ids), width), float32."""
        import torch

        from ...nn.pooling import finalize_pool, pool_stats

        seqs = self._windows(ids)
        width = self._n_features_out
        n_docs = len(ids)
        mode = self.pooling
        if mode == "max":
            stat = np.full((n_docs, width), -np.inf, np.float32)
        else:
            stat = np.zeros((n_docs, width), np.float32)
        count = np.zeros(n_docs, np.float32)
        n_windows = np.zeros(n_docs, np.float32)
        n_batches = -(-len(seqs) // self.batch_size)
        bar = progress(total=n_batches, verbose=self.verbose, desc="embedding", unit="batch")
        with limit_threads(self.n_jobs), torch.inference_mode():
            for idx, inputs in self._batches(seqs):
                tokens = self._hidden(inputs)
                s, c = pool_stats(tokens, inputs["attention_mask"], mode)
                s = s.float().cpu().numpy()
                c = c.float().cpu().numpy()
                docs = np.fromiter((seqs[i][0] for i in idx), np.int64, len(idx))
                if len(seqs) == n_docs:  # one window per document: no merging needed
                    stat[docs], count[docs] = s, c
                elif mode == "max":
                    np.maximum.at(stat, docs, s)
                else:
                    np.add.at(stat, docs, s)
                    np.add.at(count, docs, c)
                np.add.at(n_windows, docs, 1.0)
                bar.update(1)
        bar.close()
        if mode == "cls":
            return stat / n_windows[:, None]
        return finalize_pool(stat, count, mode).astype(np.float32, copy=False)

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
