#!/usr/bin/env bash
# The test command: set-up (idempotent), lint, then the whole test suite (slow tests included),
# in two pytest-xdist workers: sequential it took 17-18 min on the 2-core machine, with two
# workers 11 min while another CPU-bound job shared the cores. Pass "-n 0" to run it in one
# process (arguments go to pytest; a later -n wins).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
.venv/bin/python -m ruff check skembed tests benchmarks examples
.venv/bin/python -m pytest -n 2 "$@"
