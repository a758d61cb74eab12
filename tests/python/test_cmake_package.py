"""A C++ host application against an installed qct: `cmake --install` of the build (QCT_BUILD_DIR)
into a temporary prefix, runtime/examples configured as a project of its own that finds it with
find_package(qct CONFIG REQUIRED), qct_host_app built and run (docs/runtime.md "Installing").

Without a GPU the app compiles the kernel with NVRTC and stops before the launch with exit code
2; on a GPU it launches and exits 0."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from qct.env import build_dir

REPO = Path(__file__).resolve().parents[2]
KERNEL = REPO / "generated" / "mxfp4_to_fp8_e4m3_row.cu"
SPEC = REPO / "specs" / "mxfp4_to_fp8_e4m3_row.json"


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("QCT_COMPILER_LIBRARY",)}
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def host_app(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(prefix, qct_host_app built against it)."""
    build = build_dir()
    rules = build / "cmake_install.cmake"
    if not rules.is_file() or "qctTargets" not in rules.read_text():
        pytest.fail(f"{build} has no install rules for qct's package config; rebuild it with "
                    "tools/build (CMake re-configures)")
    tmp = tmp_path_factory.mktemp("cmake-package")
    prefix = tmp / "prefix"
    installed = _run("cmake", "--install", build, "--prefix", prefix)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    examples = tmp / "build-examples"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configured = _run("cmake", "-S", REPO / "runtime" / "examples", "-B", examples, *generator,
                      f"-DCMAKE_PREFIX_PATH={prefix}")
    assert configured.returncode == 0, configured.stdout + configured.stderr
    built = _run("cmake", "--build", examples, "--target", "qct_host_app")
    assert built.returncode == 0, built.stdout + built.stderr
    return prefix, examples / "qct_host_app"


def test_the_prefix_has_the_package_config_and_headers(host_app: tuple[Path, Path]) -> None:
    prefix, _ = host_app
    for path in ("lib/cmake/qct/qctConfig.cmake", "lib/cmake/qct/qctConfigVersion.cmake",
                 "lib/cmake/qct/qctTargets.cmake", "include/qct/qct.h", "include/qct/qct.hpp",
                 "include/qct/kernel_args.h", "include/qct/device/qct_device.cuh",
                 "share/qct/tuning/h200.json", "share/qct/generated/mxfp4_to_fp8_e4m3_row.cu"):
        assert (prefix / path).is_file(), path


def test_the_app_links_the_installed_runtime(host_app: tuple[Path, Path]) -> None:
    prefix, app = host_app
    ldd = _run("ldd", app)
    line = next(x for x in ldd.stdout.splitlines() if "libqct_runtime.so" in x)
    assert f"=> {prefix}/lib/libqct_runtime.so" in line, ldd.stdout


def test_the_app_compiles_a_generated_kernel(host_app: tuple[Path, Path]) -> None:
    _, app = host_app
    usage = _run(app)
    assert usage.returncode == 1 and usage.stderr.startswith("usage: qct_host_app"), usage.stderr
    out = _run(app, KERNEL, "--arch", "sm_90a")
    assert "kernel mxfp4_to_fp8_e4m3_row (qct_mxfp4_to_fp8_e4m3_row), arch sm_90a" in out.stdout, \
        out.stdout + out.stderr
    if out.returncode == 2:
        assert "no GPU to launch on" in out.stderr
    else:
        assert out.returncode == 0, out.stderr


def test_the_app_compiles_a_spec_through_the_installed_compiler_library(
        host_app: tuple[Path, Path]) -> None:
    prefix, app = host_app
    if not (prefix / "lib" / "libqct_compiler.so").is_file():
        pytest.skip("the build has no compiler (QCT_BUILD_COMPILER)")
    out = _run(app, SPEC, "--arch", "sm_90a")
    assert "kernel mxfp4_to_fp8_e4m3_row (qct_mxfp4_to_fp8_e4m3_row), arch sm_90a" in out.stdout, \
        out.stdout + out.stderr
    assert out.returncode in (0, 2), out.stderr
