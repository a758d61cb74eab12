"""qct's version. Its one source is the VERSION file at the top of the tree, which CMake (the
runtime's and the compiler's version strings) and the wheel's metadata (pyproject.toml) read too.

Run from a checkout, the checkout's VERSION is read: an editable install's metadata keeps the
version it was installed at. Installed, the version is the distribution's (importlib.metadata).
"""

from __future__ import annotations

import importlib.metadata

from qct.layout import CHECKOUT


def _version() -> str:
    if CHECKOUT is not None:
        return (CHECKOUT / "VERSION").read_text().strip()
    try:
        return importlib.metadata.version("qct")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


__version__ = _version()
