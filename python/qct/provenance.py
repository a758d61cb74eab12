"""Which commit produced a result (benchmarks, GPU-tier reports)."""

from __future__ import annotations

import subprocess

from qct import env, layout


def git_commit() -> str:
    """QCT_COMMIT when set (the GPU machine gets the tree without .git), else HEAD of the checkout
    (with -dirty for uncommitted changes to tracked files), else 'unknown'."""
    named = env.get("QCT_COMMIT")
    if named:
        return named
    # An installed package has no checkout: git would answer for whatever repository the
    # environment happens to sit in.
    if layout.CHECKOUT is None:
        return "unknown"
    try:
        head = subprocess.run(["git", "-C", str(layout.CHECKOUT), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode == 0:
            dirty = subprocess.run(["git", "-C", str(layout.CHECKOUT), "status", "--porcelain",
                                    "--untracked-files=no"], capture_output=True, text=True, timeout=10)
            return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"
