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
    assert "qct::dev::tile_kernel<Config, QCT_THREADS, QCT_TILE_K, QCT_K_TILES>(args);" in source


def test_load_from_a_spec_with_a_shape_picks_a_schedule() -> None:
    kernel = runtime.load(SPEC, arch="sm_90a", shape=(100, 256, 4))
    assert kernel.name == "mxfp4_to_fp8_e4m3_col_ragged"
    assert set(kernel.schedule) == {"QCT_THREADS", "QCT_TILE_K", "QCT_K_TILES"}
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
