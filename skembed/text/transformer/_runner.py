"""Sessions of exported encoders (ONNX Runtime, OpenVINO), built once per process.

:func:`load_runner` finds or builds the export of :mod:`.export` and compiles
it into a :class:`Runner`; sessions are kept in-process, so ``clone()`` and the
folds of a grid search share one (:func:`clear_runner_cache` drops them).
"""

from __future__ import annotations

import json
import threading

import numpy as np

from ...utils._caches import register_cache
from . import _export

__all__ = ["Runner", "clear_runner_cache", "load_runner"]

_RUNNERS: dict = {}


class Runner:
    """A compiled session: ``runner(inputs)`` maps a batch of torch int64 tensors to token vectors.

    Not picklable on purpose (estimators drop it and reload it from the export).
    """

    def __init__(self, backend, path, n_threads):
        self.backend, self.path, self.n_threads = backend, path, n_threads
        if backend == "onnx":
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = n_threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            self._session = ort.InferenceSession(
                str(path / "model.onnx"), options, providers=["CPUExecutionProvider"]
            )
            self.input_names = [i.name for i in self._session.get_inputs()]
        else:
            import openvino as ov

            compiled = ov.Core().compile_model(
                str(path / "model.xml"),
                "CPU",
                {
                    "INFERENCE_NUM_THREADS": n_threads,
                    "PERFORMANCE_HINT": "LATENCY",
                    "INFERENCE_PRECISION_HINT": "f32",
                },
            )
            self._compiled = compiled
            self._output = compiled.outputs[0]
            self.input_names = [i.get_any_name() for i in compiled.inputs]
            self._local = threading.local()

    def __call__(self, inputs):
        import torch

        feed = {n: np.ascontiguousarray(inputs[n].cpu().numpy()) for n in self.input_names}
        if self.backend == "onnx":
            out = self._session.run(None, feed)[0]
        else:
            req = getattr(self._local, "request", None)
            if req is None:  # an infer request is not thread-safe: one per thread
                req = self._local.request = self._compiled.create_infer_request()
            out = np.array(req.infer(feed)[self._output], copy=True)
        return torch.from_numpy(out)

    def __reduce__(self):
        raise TypeError("A backend session cannot be pickled; the estimator reloads it.")


def load_runner(
    encoder,
    backend,
    *,
    quantize,
    layers,
    layer_combine,
    input_names,
    n_threads,
    calibration=None,
    calibration_feeds=None,
):
    """The cached session of ``encoder`` exported to ``backend`` (exporting it once if needed).

    Parameters
    ----------
    encoder : skembed.text.transformer._loading.LoadedEncoder
        The float32 torch encoder to export.
    backend : {"onnx", "openvino"}
    quantize : {None, "int8"}
    layers : list of int
        Non-negative hidden-state indices.
    layer_combine : {"mean", "sum", "concat"}
    input_names : tuple of str
        The model's inputs (``input_ids``, ``attention_mask`` and possibly
        ``token_type_ids``), in the order of the export.
    n_threads : int
        Intra-op threads of the session.
    calibration : str or None
        :func:`~skembed.text.transformer._export.calibration_hash` of the calibration sample and its windowing
        (used by ``openvino`` with ``quantize="int8"`` only).
    calibration_feeds : callable or None
        ``calibration_feeds(input_names)`` returns the list of numpy input
        batches for calibration; called only when the export is built.

    Returns
    -------
    runner : Runner

    Raises
    ------
    RuntimeError
        If the export fails (the message names the backend; ``backend="torch"``
        keeps working).
    """
    calibrated = backend == "openvino" and quantize == "int8"
    settings = _export.export_settings(
        encoder,
        backend,
        quantize,
        layers,
        layer_combine,
        calibration if calibrated else None,
        input_names,
    )
    key = (json.dumps(settings, sort_keys=True), str(_export.export_root()), n_threads)
    with _export._LOCK:
        hit = _RUNNERS.get(key)
        if hit is not None and _still_there(hit.path):
            return hit

        def build(out):
            if backend == "onnx":
                _export._build_onnx(encoder, layers, layer_combine, input_names, quantize, out)
            else:
                _export._build_openvino(
                    encoder, layers, layer_combine, input_names, quantize, calibration_feeds, out
                )

        try:
            path = _export._cached_export(settings, build)
            runner = Runner(backend, path, n_threads)
        except (ImportError, MemoryError, KeyboardInterrupt):
            raise
        except Exception as exc:
            raise RuntimeError(
                f"backend={backend!r}: exporting {encoder.source.location!r} "
                f"({type(encoder.model).__name__}) failed: {type(exc).__name__}: {exc}. "
                "backend='torch' runs this model without an export."
            ) from exc
        _RUNNERS[key] = runner
        return runner


def _still_there(path):
    return (path / "manifest.json").is_file()


@register_cache
def clear_runner_cache():
    """Drop every session held in this process (exports on disk are kept)."""
    with _export._LOCK:
        _RUNNERS.clear()
