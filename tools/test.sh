#!/usr/bin/env bash
# The test command: set-up (idempotent), lint, then the whole test suite (slow tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
.venv/bin/python -m ruff check skembed tests benchmarks examples
.venv/bin/python -m pytest "$@"
