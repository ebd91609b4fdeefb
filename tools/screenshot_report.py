"""Render a ``leaderboard.html`` of ``skembed compare`` in headless Chromium and check the picture.

Usage::

    python tools/screenshot_report.py compare-output/leaderboard.html [--out shot.png]

Chromium runs with no network, no GPU and a fresh empty profile; the page is
self-contained, so what it shows is what a user opening the file sees. The
screenshot is then checked: it is not blank, and the chart's pixels (the
blue bars) are there. Exit status 0 when both hold, 1 otherwise, 2 when no
Chromium is installed (``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_browser():
    """The path of a Chromium-family browser on ``PATH``, or ``None``."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(html_path, png_path, width=1200, height=1400, browser=None, timeout=120):
    """Render ``html_path`` to ``png_path`` with headless Chromium; the PNG's path.

    Raises
    ------
    FileNotFoundError
        If no browser is found.
    RuntimeError
        If the browser fails or writes no screenshot (its stderr's tail in the message).
    """
    browser = browser or find_browser()
    if browser is None:
        raise FileNotFoundError("no chromium on PATH: apt-get install chromium")
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",  # let embedded images decode before the shot (under load)
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={os.path.abspath(png_path)}",
            "file://" + os.path.abspath(html_path),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if not os.path.exists(png_path) or os.path.getsize(png_path) == 0:
        raise RuntimeError(
            f"{browser} wrote no screenshot (exit {proc.returncode}): {proc.stderr[-500:]}"
        )
    return png_path


def check_picture(png_path):
    """``(non-white share, blue-bar share)`` of the screenshot's pixels."""
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(png_path)[..., :3]
    non_white = float(np.mean(img.min(axis=2) < 0.9))
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    blue = float(np.mean((b > 0.55) & (r < 0.45) & (g > 0.3) & (g < 0.65)))  # tab:blue bars
    return non_white, blue


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html")
    parser.add_argument("--out", default=None, help="screenshot path (default: next to the page)")
    args = parser.parse_args(argv)
    out = args.out or os.path.splitext(args.html)[0] + "_screenshot.png"
    try:
        screenshot(args.html, out)
    except FileNotFoundError as exc:
        print(f"screenshot_report: {exc}", file=sys.stderr)
        return 2
    non_white, blue = check_picture(out)
    ok = non_white > 0.02 and blue > 0.002
    print(
        f"{out}: {non_white:.1%} of pixels drawn, {blue:.2%} chart bars -> {'ok' if ok else 'BAD'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
