"""Runs the qct compiler (the `qct-compile` binary: an installed package's, or the CMake build's)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from qct import env, layout
from qct.cli import QctError


def compiler_path() -> Path:
    """The qct-compile binary: the installed package's qct/bin (an error naming what to do where
    it was built without the compiler), else QCT_BUILD_DIR/bin, then PATH."""
    installed = layout.compiler_binary()
    if installed is not None:
        return installed
    where = "on PATH"
    if env.get("QCT_BUILD_DIR"):
        candidate = env.build_dir() / "bin" / "qct-compile"
        if candidate.is_file():
            return candidate
        where = f"in {candidate.parent} or on PATH"
    found = shutil.which("qct-compile")
    if found:
        return Path(found)
    raise QctError(f"qct-compile not found {where}; build it with tools/build (or set "
                   "QCT_BUILD_DIR to your build folder)")


def path_arg(path: Path) -> str:
    """`path` as a qct-compile argument that is always a file: a name that starts with `-` would
    be read as an option (`--version`) or as stdin (`-`, which is also what Path("./-") prints),
    so it gets a `./` in front. Callers pass the specs after `--` as well."""
    text = str(path)
    return f"./{text}" if text.startswith("-") else text


def run_compiler(args: list[str], capture: bool = False) -> subprocess.CompletedProcess[str]:
    """Runs qct-compile with args; its diagnostics go straight to the user's stderr."""
    return subprocess.run([str(compiler_path()), *args], text=True,
                          stdout=subprocess.PIPE if capture else None)
