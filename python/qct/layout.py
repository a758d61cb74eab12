"""Where qct's files are: inside an installed package, or in a checkout and its build folder.

Installed (`pip install .`), the wheel carries everything under the package, laid out by CMake's
install rules (cmake/QCTInstall.cmake):

    qct/lib/            libqct_runtime.so, libqct_reference.so, libqct_compiler.so,
                        _qct_launch.abi3.so (the torch launch fast path)
    qct/bin/            qct-compile (where the wheel was built with the compiler)
    qct/include/qct/    qct.h, qct.hpp, kernel_args.h, device/*.cuh
    qct/share/qct/      tuning/*.json, generated/, build-info.json

Run from a checkout (tools/setup's editable install, or python/ on sys.path), the libraries and
qct-compile come from the CMake build folder, QCT_BUILD_DIR (default: the checkout's build/), and
the data from the tree (specs/tuning, generated/, runtime/include).

An installed package's own libraries come first, QCT_BUILD_DIR second: the wheel's Python and its
libraries were built together (the C ABI version is checked all the same).

This module imports nothing of qct at import time (qct.env reads CHECKOUT from here).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent


def _checkout_root() -> Path | None:
    """The checkout this package runs from: <root>/python/qct, with <root>/VERSION beside the
    CMake project; None for an installed package."""
    root = PACKAGE_DIR.parents[1]
    if PACKAGE_DIR.parent.name == "python" and (root / "VERSION").is_file() \
            and (root / "CMakeLists.txt").is_file():
        return root
    return None


CHECKOUT: Path | None = _checkout_root()
INSTALLED_LIB = PACKAGE_DIR / "lib"
INSTALLED_BIN = PACKAGE_DIR / "bin"
INSTALLED_SHARE = PACKAGE_DIR / "share" / "qct"

NO_COMPILER = ("this qct was installed without its compiler (LLVM/MLIR 22 was not found when it "
               "was built); reinstall where llvm-22-dev and libmlir-22-dev are installed, or load "
               "a generated kernel")


def installed() -> bool:
    """Whether this package carries its own libraries (a wheel install)."""
    return INSTALLED_LIB.is_dir()


def library_dir() -> Path:
    """The folder of libqct_runtime.so and its siblings: the package's lib/, else
    QCT_BUILD_DIR/lib (the package's, missing, where neither is there: see missing_library)."""
    from qct import env

    if installed() or not env.get("QCT_BUILD_DIR"):
        return INSTALLED_LIB
    return env.build_dir() / "lib"


def missing_library(path: Path, target: str) -> str:
    """What to do about a library that is not at `path` (built by CMake target `target`)."""
    from qct import env

    if installed():
        return (f"{path} is missing from the installed qct package; reinstall it "
                "(pip install --force-reinstall . from a qct clone)")
    if not env.get("QCT_BUILD_DIR"):
        return (f"this qct package has no libraries ({INSTALLED_LIB} does not exist) and "
                "QCT_BUILD_DIR is not set; reinstall it with `pip install .` from a qct clone, or "
                "set QCT_BUILD_DIR to a qct build folder")
    return (f"{path} does not exist; build it with tools/build (target {target}), or set "
            f"QCT_BUILD_DIR to the build folder that has lib/{path.name}")


def build_info() -> dict[str, Any]:
    """What the installed package was built with (share/qct/build-info.json: version, whether
    the compiler is in it); empty outside an installed package."""
    path = INSTALLED_SHARE / "build-info.json"
    if not installed() or not path.is_file():
        return {}
    info = json.loads(path.read_text())
    return info if isinstance(info, dict) else {}


def compiler_binary() -> Path | None:
    """The installed package's qct-compile; None outside an installed package. Raises QctError
    where the package was built without the compiler, or lost it."""
    if not installed():
        return None
    from qct.errors import QctError

    binary = INSTALLED_BIN / "qct-compile"
    if binary.is_file():
        return binary
    if build_info().get("compiler") is False:
        raise QctError(NO_COMPILER)
    raise QctError(f"{binary} is missing from the installed qct package; reinstall it "
                   "(pip install --force-reinstall . from a qct clone)")


def _data(checkout_path: str, installed_path: Path) -> Path:
    return CHECKOUT / checkout_path if CHECKOUT is not None else installed_path


def tuning_dir() -> Path:
    """The bundled tuning tables: specs/tuning in a checkout, share/qct/tuning installed."""
    return _data("specs/tuning", INSTALLED_SHARE / "tuning")


def generated_dir() -> Path:
    """The bundled generated kernels: generated/ in a checkout, share/qct/generated installed."""
    return _data("generated", INSTALLED_SHARE / "generated")


def include_dir() -> Path:
    """The device headers' root (qct/device/*.cuh under it): runtime/include in a checkout,
    include/ installed."""
    return _data("runtime/include", PACKAGE_DIR / "include")
