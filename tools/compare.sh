#!/usr/bin/env bash
# The main job: set-up (idempotent), then `skembed compare` (default: BBC News).
# Extra arguments are passed to `skembed compare`, e.g. --embedders tfidf,lsa --cv 3.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
exec .venv/bin/skembed compare "$@"
