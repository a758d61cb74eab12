"""The wheel, installed: `pip wheel` of this tree, installed into a fresh venv, then the `qct`
command and the package run from another folder with no QCT_BUILD_DIR, so only the wheel's files
can answer (README "Using it", docs/runtime.md "Installing").

Two wheels: the one `pip install .` builds (the compiler in it where LLVM/MLIR 22 is installed),
and one built without the compiler, whose spec commands must say so in one line while generated
kernels still load. Both build with scikit-build-core into build-pkg/ (git-ignored), which
persists, so a second run rebuilds only what changed; a fresh clone builds everything once.
The venvs see the system's site-packages (numpy, ml_dtypes, scikit-build-core) but import qct
from the wheel: the tests assert where qct, its libraries and qct-compile come from.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

# The build backend (tools/setup installs it); the wheels build without build isolation, so that
# no test run depends on downloading it.
pytest.importorskip("scikit_build_core", reason="scikit-build-core is not installed (tools/setup "
                    "installs it)")

REPO = Path(__file__).resolve().parents[2]
VERSION = (REPO / "VERSION").read_text().strip()
SPEC = REPO / "specs" / "mxfp4_to_fp8_e4m3_row.json"
GENERATED = REPO / "generated" / "mxfp4_to_fp8_e4m3_row.cu"
# Where Debian's LLVM/MLIR 22 lives (tools/setup installs it): the wheel must carry the compiler.
HAS_LLVM = Path("/usr/lib/llvm-22/lib/cmake/mlir/MLIRConfig.cmake").is_file()
# The torch launch fast path (python/CMakeLists.txt) is built where Python's headers are.
HAS_LAUNCH_EXT = (REPO / "python" / "CMakeLists.txt").is_file() and \
    (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file()


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    cwd: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def qct(self) -> Path:
        return self.venv / "bin" / "qct"

    def env(self) -> dict[str, str]:
        """The caller's environment without what would point qct at the checkout."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("QCT_BUILD_DIR", "PYTHONPATH", "QCT_COMPILER_LIBRARY", "VIRTUAL_ENV")}
        env["QCT_CACHE_DIR"] = str(self.cwd / "cache")
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(a) for a in args], cwd=self.cwd, env=self.env(),
                              capture_output=True, text=True, timeout=600)

    def py(self, code: str) -> subprocess.CompletedProcess[str]:
        return self.run(self.python, "-c", code)


# scikit-build-core's editable install (tools/setup's) puts a finder on sys.meta_path from a .pth in
# the system's site-packages, which a --system-site-packages venv processes too: it would serve the
# checkout's qct ahead of the wheel's. The venv's sitecustomize, which runs after every .pth,
# takes such finders off again.
_SITECUSTOMIZE = """import sys
sys.meta_path[:] = [f for f in sys.meta_path
                    if not type(f).__module__.startswith("_editable_skbc_")]
"""


def _hide_editable_hooks(venv: Path) -> None:
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE)


def _build_and_install(tmp: Path, name: str, defines: dict[str, str]) -> Installed:
    build_dir = REPO / "build-pkg" / name
    build_dir.mkdir(parents=True, exist_ok=True)
    wheels = tmp / "wheels"
    env = {k: v for k, v in os.environ.items() if k not in ("QCT_BUILD_DIR", "PYTHONPATH")}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", os.environ.get("QCT_JOBS", str(os.cpu_count())))
    settings = [f"-Cbuild-dir={build_dir}"] + [f"-Ccmake.define.{k}={v}" for k, v in defines.items()]
    # One build at a time per folder: two test runs sharing build-pkg/ would trip over each other.
    with open(build_dir.parent / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                                "--no-build-isolation", "--disable-pip-version-check", "-w",
                                str(wheels), *settings, str(REPO)],
                               env=env, capture_output=True, text=True, timeout=3600)
    assert build.returncode == 0, build.stdout[-6000:] + build.stderr[-6000:]
    (wheel,) = wheels.glob("qct-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    # --ignore-installed: the venv sees the system's site-packages, where a development install
    # of qct may be; this one goes into the venv regardless.
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install",
                              "--disable-pip-version-check", "--no-deps", "--ignore-installed",
                              str(wheel)],
                             env=env, capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr
    _hide_editable_hooks(venv)
    cwd = tmp / "elsewhere"
    cwd.mkdir()
    return Installed(wheel, venv, cwd)


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """The wheel `pip install .` builds (pyproject.toml's settings)."""
    yield _build_and_install(tmp_path_factory.mktemp("full"), "full", {})


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """A wheel built without the compiler, as where LLVM/MLIR 22 is absent."""
    yield _build_and_install(tmp_path_factory.mktemp("bare"), "bare", {"QCT_BUILD_COMPILER": "OFF"})


def _wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def _common_files() -> set[str]:
    headers = {f"qct/include/qct/{h}" for h in ("qct.h", "qct.hpp", "kernel_args.h")}
    device = {f"qct/include/qct/device/{p.name}"
              for p in (REPO / "runtime" / "include" / "qct" / "device").glob("*.cuh")}
    tuning = {f"qct/share/qct/tuning/{p.name}" for p in (REPO / "specs" / "tuning").glob("*.json")}
    return headers | device | tuning | {
        "qct/__init__.py", "qct/cli.py", "qct/lib/libqct_runtime.so", "qct/lib/libqct_reference.so",
        "qct/ops.py", "qct/gemm.py", "qct/csrc/torch_kernels.cpp",
        "qct/share/qct/build-info.json", "qct/share/qct/generated/mxfp4_to_fp8_e4m3_row.cu",
        "qct/share/qct/generated/mxfp4_to_fp8_e4m3_row.json", "qct/lib/cmake/qct/qctConfig.cmake",
        "qct/lib/cmake/qct/qctConfigVersion.cmake", f"qct-{VERSION}.dist-info/licenses/LICENSE"}


def test_the_wheel_carries_libraries_headers_data_and_compiler(full: Installed) -> None:
    names = _wheel_names(full.wheel)
    assert full.wheel.name == f"qct-{VERSION}-py3-none-linux_x86_64.whl"
    expected = _common_files()
    if HAS_LLVM:
        expected |= {"qct/lib/libqct_compiler.so", "qct/bin/qct-compile"}
    if HAS_LAUNCH_EXT:
        expected.add("qct/lib/_qct_launch.abi3.so")
    assert not expected - names, sorted(expected - names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_qct_runs_from_the_venv_with_its_own_libraries(full: Installed) -> None:
    out = full.py("import json, qct, qct._ffi, qct.reference, qct.tuning, qct.layout\n"
                  "print(json.dumps({'file': qct.__file__, 'version': qct.__version__,\n"
                  "  'runtime': str(qct._ffi.library_path()), 'loaded': qct._ffi.text(\n"
                  "  qct._ffi.lib().qct_version()), 'reference': str(qct.reference.library_path()),\n"
                  "  'ref_ok': qct.reference.library() is not None,\n"
                  "  'tuning': [str(f.path) for f in qct.tuning.repository_files()],\n"
                  "  'generated': str(qct.layout.generated_dir())}))")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    venv = str(full.venv.resolve())
    for key in ("file", "runtime", "reference", "generated"):
        assert info[key].startswith(venv + "/"), (key, info[key])
    assert info["version"] == VERSION and info["loaded"] == VERSION
    assert info["tuning"] and all(t.startswith(venv + "/") for t in info["tuning"]), info["tuning"]


def test_qct_version(full: Installed) -> None:
    out = full.run(full.qct, "--version")
    assert (out.returncode, out.stdout.strip()) == (0, f"qct {VERSION}"), out.stderr


def test_qct_env_lists_the_runtime_variables(full: Installed) -> None:
    out = full.run(full.qct, "env")
    assert out.returncode == 0, out.stderr
    assert "QCT_CACHE_DIR" in out.stdout and "not listed" not in out.stderr, out.stderr


def test_qct_cache_info(full: Installed) -> None:
    out = full.run(full.qct, "cache", "info")
    assert out.returncode == 0, out.stderr
    assert f"folder     {full.cwd / 'cache'}" in out.stdout, out.stdout


def test_a_generated_kernel_loads_and_compiles(full: Installed) -> None:
    out = full.py(f"import qct; k = qct.load({str(GENERATED)!r}, arch='sm_90a')\n"
                  "print(k.name, k.cubin[:4] == b'\\x7fELF')")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["mxfp4_to_fp8_e4m3_row", "True"], out.stdout


@pytest.mark.skipif(not HAS_LLVM, reason="LLVM/MLIR 22 is not installed: the wheel has no compiler")
def test_qct_check_and_compile_through_the_wheels_qct_compile(full: Installed) -> None:
    check = full.run(full.qct, "check", SPEC)
    assert check.returncode == 0, check.stderr
    out = full.cwd / "out"
    compiled = full.run(full.qct, "compile", SPEC, "-o", out)
    assert compiled.returncode == 0, compiled.stderr
    metadata = json.loads((out / "mxfp4_to_fp8_e4m3_row.json").read_text())
    assert metadata["entry"] == "qct_mxfp4_to_fp8_e4m3_row"
    assert metadata["compiler_version"] == VERSION
    assert (out / "mxfp4_to_fp8_e4m3_row.cu").is_file()
    which = full.py("import qct.compiler; print(qct.compiler.compiler_path())").stdout.strip()
    assert which.startswith(f"{full.venv.resolve()}/") and which.endswith("/qct/bin/qct-compile"), \
        which


@pytest.mark.skipif(not HAS_LLVM, reason="LLVM/MLIR 22 is not installed: the wheel has no compiler")
def test_a_spec_loads_through_the_self_contained_compiler_library(full: Installed) -> None:
    """qct.load of a spec: the runtime dlopens the wheel's libqct_compiler.so, beside itself, which
    has LLVM/MLIR linked in (no libMLIR/libLLVM mapped into the process)."""
    out = full.py(f"import qct; k = qct.load({str(SPEC)!r}, arch='sm_90a'); print(k.name)\n"
                  "print(open('/proc/self/maps').read())")
    assert out.returncode == 0, out.stderr
    name, maps = out.stdout.split("\n", 1)
    assert name == "mxfp4_to_fp8_e4m3_row"
    assert "site-packages/qct/lib/libqct_compiler.so" in maps
    assert "libMLIR" not in maps and "libLLVM" not in maps


def test_the_bare_wheel_has_no_compiler(bare: Installed) -> None:
    names = _wheel_names(bare.wheel)
    expected = _common_files()
    assert not expected - names, sorted(expected - names)
    assert "qct/lib/libqct_compiler.so" not in names and "qct/bin/qct-compile" not in names


@pytest.mark.parametrize("command", [["check"], ["emit"], ["compile", "-o", "out"]])
def test_without_the_compiler_spec_commands_say_so_in_one_line(bare: Installed,
                                                               command: list[str]) -> None:
    out = bare.run(bare.qct, command[0], SPEC, *command[1:])
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith(f"qct {command[0]}: error: this qct was installed without its "
                                 "compiler (LLVM/MLIR 22 was not found when it was built)"), out.stderr


def test_without_the_compiler_a_spec_load_says_so_and_a_generated_kernel_loads(bare: Installed) -> None:
    out = bare.py("import qct, qct.runtime\n"
                  f"k = qct.load({str(GENERATED)!r}, arch='sm_90a'); print(k.name)\n"
                  f"try:\n    qct.load({str(SPEC)!r}, arch='sm_90a')\n"
                  "except qct.runtime.QctRuntimeError as e:\n    print(e.status_name); print(e)\n")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:2] == ["mxfp4_to_fp8_e4m3_row", "QCT_ERR_COMPILER_UNAVAILABLE"], out.stdout
    assert len(lines) == 3 and lines[2].startswith("this qct was built without its compiler"), lines
