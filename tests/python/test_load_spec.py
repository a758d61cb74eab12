"""Loading a kernel straight from a spec: the runtime dlopens the compiler library
(libqct_compiler.so) and compiles the spec at run time; NVRTC then compiles it for sm_90a."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qct import runtime
from qct.env import build_dir

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "specs" / "mxfp4_to_fp8_e4m3_col_ragged.json"


def test_spec_compiles_to_the_generated_kernel() -> None:
    source, metadata = runtime.compile_spec(SPEC)
    assert '"entry": "qct_mxfp4_to_fp8_e4m3_col_ragged"' in metadata
    assert "qct::dev::tile_kernel<Config, QCT_THREADS, QCT_TILE_K, QCT_K_TILES," in source
    assert "QCT_M_TILES, QCT_GROUP_M, QCT_TILE_M, QCT_CLUSTER_M,\n" in source
    assert "QCT_SPLIT_LAST_SPAN>(args);" in source


def test_load_from_a_spec_with_a_shape_picks_a_schedule() -> None:
    kernel = runtime.load(SPEC, arch="sm_90a", shape=(100, 256, 4))
    assert kernel.name == "mxfp4_to_fp8_e4m3_col_ragged"
    assert set(kernel.schedule) == {"QCT_THREADS", "QCT_TILE_K", "QCT_K_TILES", "QCT_M_TILES",
                                   "QCT_GROUP_M", "QCT_TILE_M", "QCT_CLUSTER_M",
                                   "QCT_SPLIT_LAST_SPAN"}
    assert kernel.cubin[:4] == b"\x7fELF"


def test_a_bad_spec_raises_with_the_compiler_diagnostics() -> None:
    bad = REPO / "tests" / "lit" / "spec" / "block-mismatch.json"
    with pytest.raises(runtime.QctRuntimeError) as info:
        runtime.load(bad, arch="sm_90a")
    assert info.value.status_name == "QCT_ERR_SPEC"
    assert "outputs[1].block: found 64, allowed for fp8_e4m3: 128" in str(info.value)


def test_a_missing_compiler_library_is_a_clear_error() -> None:
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from qct import runtime\n"
            "try:\n    runtime.compile_spec(%r)\n"
            "except runtime.QctRuntimeError as e:\n    print(e.status_name); print(e)\n") % (
                str(REPO / "python"), str(SPEC))
    env = {**os.environ, "QCT_COMPILER_LIBRARY": "/nonexistent/libqct_compiler.so"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.startswith("QCT_ERR_COMPILER_UNAVAILABLE"), out.stdout + out.stderr
    assert "QCT_COMPILER_LIBRARY" in out.stdout


def test_host_app_compiles_a_spec_at_run_time() -> None:
    """The C++ example: spec -> compiler library -> NVRTC; without a GPU it stops before the
    launch with exit code 2 and says so."""
    app = build_dir() / "bin" / "qct_host_app"
    out = subprocess.run([str(app), str(SPEC), "--arch", "sm_90a"], capture_output=True, text=True)
    assert "kernel mxfp4_to_fp8_e4m3_col_ragged (qct_mxfp4_to_fp8_e4m3_col_ragged), arch sm_90a" \
        in out.stdout, out.stderr
    if out.returncode == 2:
        assert "no GPU to launch on" in out.stderr
    else:
        assert out.returncode == 0, out.stderr


STANDALONE = build_dir() / "lib" / "standalone" / "libqct_compiler.so"


@pytest.mark.skipif(not STANDALONE.exists(),
                    reason="built only with -DQCT_COMPILER_STANDALONE=ON")
def test_the_standalone_compiler_library_brings_no_llvm() -> None:
    """The self-contained library (what tools/carry takes to the GPU machine) compiles the spec
    with LLVM/MLIR linked in: neither libMLIR nor libLLVM is mapped into the process, and it
    exports only the qct_compiler_* C ABI."""
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from qct import runtime\n"
            "source, metadata = runtime.compile_spec(%r)\n"
            "print(len(source) > 0 and 'qct_mxfp4_to_fp8_e4m3_col_ragged' in metadata)\n"
            "print(open('/proc/self/maps').read())\n") % (str(REPO / "python"), str(SPEC))
    env = {**os.environ, "QCT_COMPILER_LIBRARY": str(STANDALONE)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    verdict, maps = out.stdout.split("\n", 1)
    assert verdict == "True", out.stdout
    assert str(STANDALONE) in maps
    assert "libMLIR" not in maps and "libLLVM" not in maps
    dynsym = subprocess.run(["nm", "-D", "--defined-only", str(STANDALONE)],
                            capture_output=True, text=True, check=True).stdout.split()
    assert sorted(s for s in dynsym if s.startswith("qct_")) == [
        "qct_compiler_abi_version", "qct_compiler_compile_spec", "qct_compiler_free",
        "qct_compiler_version"]
    assert not [s for s in dynsym[2::3] if not s.startswith("qct_")], dynsym
