"""Runs the qct compiler (the `qct-compile` binary of the CMake build)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from qct.cli import QctError
from qct.env import build_dir


def compiler_path() -> Path:
    """The qct-compile binary: QCT_BUILD_DIR/bin first, then PATH."""
    candidate = build_dir() / "bin" / "qct-compile"
    if candidate.is_file():
        return candidate
    found = shutil.which("qct-compile")
    if found:
        return Path(found)
    raise QctError(
        f"qct-compile not found in {candidate.parent} or on PATH; build it with tools/build "
        "(or set QCT_BUILD_DIR to your build folder)")


def run_compiler(args: list[str], capture: bool = False) -> subprocess.CompletedProcess[str]:
    """Runs qct-compile with args; its diagnostics go straight to the user's stderr."""
    return subprocess.run([str(compiler_path()), *args], text=True,
                          stdout=subprocess.PIPE if capture else None)
