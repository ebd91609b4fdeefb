"""Helpers shared by the benchmark scripts: run a function in a fresh process and measure it."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap


def run_isolated(code: str, timeout: float = 3600.0) -> dict:
    """Run ``code`` in a fresh Python process and return the JSON it prints last.

    The code must print one JSON object on its last stdout line; a fresh
    process makes the peak RSS it reports (``ru_maxrss``) that run's own.
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed ({proc.returncode}):\n{err[-3000:]}")
    lines = [line for line in out.strip().splitlines() if line.strip()]
    result = json.loads(lines[-1])
    return result


def peak_rss_mb() -> float:
    """Peak resident set size of the calling process so far, in MB (Linux: ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def dumps(obj) -> str:
    return json.dumps(obj, default=float)
