"""tools/sass-report compiles a generated kernel the way the runtime does (NVRTC, through
qct.runtime.Kernel) and disassembles it: schedule knobs become the schedule, other -D defines extra
NVRTC options, and bad input exits non-zero with a message. Needs the runtime library (NVRTC) and
nvdisasm, not a GPU; skips without them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qct import _ffi
from qct.bench import sass

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "sass-report"
KERNEL = REPO / "generated" / "mxfp4_to_fp8_e4m3_col_mn.cu"


pytestmark = pytest.mark.skipif(
    sass.nvdisasm() is None or not _ffi.library_path().is_file(),
    reason="needs nvdisasm (pip install nvidia-cuda-nvdisasm) and the runtime built (tools/build)")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QCT_BUILD_DIR=str(_ffi.build_dir()))
    return subprocess.run([str(TOOL), *args], capture_output=True, text=True, env=env,
                          timeout=300, check=False)


def test_reports_the_runtime_build_of_a_schedule(tmp_path: Path) -> None:
    r = _run(str(KERNEL), "-DQCT_K_TILES=1",
             "-DQCT_EXPERIMENT_UNUSED=1", "--dump")
    assert r.returncode == 0, r.stderr
    head = r.stdout.splitlines()[0]
    assert head.startswith("qct_mxfp4_to_fp8_e4m3_col_mn (")
    assert "-DQCT_K_TILES=1" in head and "-DQCT_EXPERIMENT_UNUSED=1" in head
    assert "0 bytes spill stores" in head
    assert "SASS instructions:" in r.stdout
    # The dump is the machine code the runtime builds (nvcc's, which the tool used before, can
    # differ: bf16 -> fp8 row + col had 2192 instructions there against NVRTC's 2248). Compiled
    # in a fresh process like the tool's: in this one an earlier test may have loaded another
    # NVRTC (a pip wheel's), which the runtime's dlopen would then pick.
    cubin = tmp_path / "k.cubin"
    compile_cubin = (
        "import sys; from pathlib import Path; from qct import runtime; "
        "cu = Path(sys.argv[1]); "
        "k = runtime.Kernel(cu, cu.with_suffix('.json'), arch='sm_90a', disable_cache=True, "
        "schedule={'QCT_K_TILES': 1}, extra_nvrtc_options=['-DQCT_EXPERIMENT_UNUSED=1']); "
        "Path(sys.argv[2]).write_bytes(k.cubin)")
    env = dict(os.environ, QCT_BUILD_DIR=str(_ffi.build_dir()),
               PYTHONPATH=str(REPO / "python"))
    subprocess.run([sys.executable, "-c", compile_cubin, str(KERNEL), str(cubin)], env=env,
                   check=True, timeout=300)
    dump = subprocess.run([str(sass.nvdisasm()), str(cubin)], capture_output=True, text=True,
                          check=True).stdout
    assert "STG.E.128" in dump and dump in r.stdout


def test_illegal_knob_value_is_an_error() -> None:
    r = _run(str(KERNEL), "-DQCT_K_TILES=3")
    assert r.returncode == 1
    assert "QCT_K_TILES=3 is not a legal value" in r.stderr


def test_missing_kernel_and_unknown_argument() -> None:
    r = _run(str(REPO / "generated" / "no_such_kernel.cu"))
    assert r.returncode == 2 and "no_such_kernel.json" in r.stderr
    r = _run(str(KERNEL), "--sass")
    assert r.returncode == 2 and "unknown argument '--sass'" in r.stderr
