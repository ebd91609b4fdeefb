#!/usr/bin/env bash
# The docs command: set-up (idempotent), then the site into docs/_build/html with Sphinx,
# warnings as errors. Every gallery example (examples/plot_*.py) runs during the build;
# sphinx-gallery re-runs only the examples whose file changed since the last build. Then
# tests/test_docs.py checks the docstrings and the built pages.
# Extra arguments go to sphinx-build (e.g. -D plot_gallery=0 to skip running the examples).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
stamp=.venv/.skembed-docs-stamp
want=$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    .venv/bin/python -m pip --disable-pip-version-check -q install -e ".[docs]"
    .venv/bin/python -c "import sphinx, numpydoc, sphinx_gallery, myst_parser, pydata_sphinx_theme"
    echo "$want" > "$stamp"
fi
# the gallery examples print no progress bars
export TQDM_DISABLE=1
start=$(date +%s)
.venv/bin/python -m sphinx -W --keep-going -b html docs docs/_build/html "$@"
echo "docs built in $(( $(date +%s) - start )) s: docs/_build/html/index.html"
# tests/test_docs.py, now that numpydoc is installed and the site built: numpydoc validation of
# every public object, an API page for each, and the built pages opened in headless Chromium
# (title, navigation and images rendered; screenshots in docs/_build/screenshots/; skipped where
# no Chromium is installed). tools/test.sh skips this module when the docs extra is missing.
.venv/bin/python -m pytest -p no:xdist -q -p no:cacheprovider tests/test_docs.py
