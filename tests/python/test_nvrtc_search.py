"""Where the runtime finds NVRTC, as a whole process sees it: CUDA_HOME, the pip wheel's layout
found through the Python binding, a libnvrtc already loaded, an explicit path, the one-line error.

NVRTC is loaded once per process, so every case runs in a fresh interpreter with an environment of
its own; the folders are symlinks to the NVRTC this machine has. Needs NVRTC (no GPU); skips with a
message where the machine has none. The search order itself: tests/unit/runtime/NvrtcSearchTest.cpp.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEST_KERNEL = REPO / "tests" / "unit" / "runtime" / "TestKernel.cpp"
LOADER = Path("/lib64/ld-linux-x86-64.so.2")
# What the search reads; each case starts with none of them set.
SEARCH_VARIABLES = ("QCT_NVRTC_PATH", "CUDA_HOME", "CUDA_PATH", "QCT_NVRTC_WHEEL_DIR")

_INFO = "import json; from qct import toolchain; print(json.dumps(toolchain.info()))"


def _env(extra: dict[str, str] | None = None, pythonpath: tuple[Path, ...] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SEARCH_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (REPO / "python", *pythonpath))
    env["LD_LIBRARY_PATH"] = ""
    env["QCT_CACHE_DISABLE"] = "1"
    env.update(extra or {})
    return env


def _python(code: str, env: dict[str, str],
            inhibit_cache: bool = False) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter; with inhibit_cache, without the ldconfig cache (ld.so
    --inhibit-cache), so only folders the runtime names can supply NVRTC's builtins."""
    prefix = [str(LOADER), "--inhibit-cache"] if inhibit_cache else []
    return subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=REPO)


def _info(env: dict[str, str]) -> dict:
    result = _python(_INFO, env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def machine_nvrtc() -> dict:
    """The NVRTC this machine's default search finds (path, builtins), or skip."""
    from qct import _ffi

    try:
        _ffi.lib()
    except _ffi.LibraryNotFound as e:
        pytest.skip(str(e))
    nvrtc = _info({**os.environ, "PYTHONPATH": str(REPO / "python")})["nvrtc"]
    if not nvrtc["loaded"]:
        pytest.skip(f"no NVRTC on this machine: {nvrtc['error']}")
    return nvrtc


def _link_nvrtc(folder: Path, nvrtc: dict) -> Path:
    """`folder` with libnvrtc.so.13 and its builtins as symlinks to the machine's."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "libnvrtc.so.13").symlink_to(nvrtc["path"])
    if nvrtc["builtins"]:
        (folder / Path(nvrtc["builtins"]).name).symlink_to(nvrtc["builtins"])
    return folder


def _compile_tiny(out: Path) -> str:
    """Python code that compiles the runtime tests' tiny kernel (no GPU: arch sm_90) and prints
    'compiled', or the QctRuntimeError's status name and text on two lines."""
    text = TEST_KERNEL.read_text()
    source = re.search(r'R"cuda\((.*?)\)cuda"', text, re.S).group(1)
    metadata = re.search(r'R"json\((.*?)\)json"', text, re.S).group(1) + "\n}\n"
    (out / "tiny.cu").write_text(source)
    (out / "tiny.json").write_text(metadata)
    return "\n".join([
        "import qct",
        "from qct.runtime import QctRuntimeError",
        "try:",
        f"    k = qct.load({str(out / 'tiny.cu')!r}, arch='sm_90')",
        "    assert len(k.cubin) > 0",
        "    print('compiled')",
        "except QctRuntimeError as e:",
        "    print(e.status_name)",
        "    print(str(e))",
    ])


def test_info_fields(machine_nvrtc: dict) -> None:
    nvrtc = machine_nvrtc
    assert re.fullmatch(r"13\.\d+", nvrtc["version"])
    assert Path(nvrtc["path"]).is_file() and nvrtc["error"] is None
    assert re.fullmatch(r"QCT_NVRTC_PATH=.+|already loaded|CUDA_HOME=.+|CUDA_PATH=.+|"
                        r"pip wheel nvidia-cuda-nvrtc \(.+\)|CUDA toolkit .+|loader path",
                        nvrtc["found_by"])
    assert all(isinstance(t, str) for t in nvrtc["tried"])
    driver = _info(_env())["driver"]
    assert set(driver) == {"loaded", "usable", "path", "version", "found_by", "status", "error"}
    if driver["loaded"]:
        assert Path(driver["path"]).is_file() and driver["found_by"]
    else:
        assert "libcuda.so.1" in driver["error"] and "\n" not in driver["error"]
        assert driver["status"] == "QCT_ERR_NO_DRIVER" and not driver["usable"]


def test_found_by_cuda_home(machine_nvrtc: dict, tmp_path: Path) -> None:
    _link_nvrtc(tmp_path / "lib64", machine_nvrtc)
    env = _env({"CUDA_HOME": str(tmp_path)})
    nvrtc = _info(env)["nvrtc"]
    assert nvrtc["found_by"] == f"CUDA_HOME={tmp_path}"
    assert nvrtc["path"] == str(tmp_path / "lib64" / "libnvrtc.so.13")
    assert nvrtc["tried"] == []
    result = _python(_compile_tiny(tmp_path), env)
    assert result.returncode == 0 and result.stdout == "compiled\n", result.stdout + result.stderr


def test_pip_wheel_layout_found_through_the_binding(machine_nvrtc: dict, tmp_path: Path) -> None:
    # nvidia-cuda-nvrtc 13.x installs site-packages/nvidia/cu13/lib/libnvrtc.so.13 and
    # libnvrtc-builtins.so.13.<minor> (a namespace package: no __init__.py); the binding finds it
    # on sys.path and names it in QCT_NVRTC_WHEEL_DIR for the runtime.
    site = tmp_path / "site-packages"
    wheel = _link_nvrtc(site / "nvidia" / "cu13" / "lib", machine_nvrtc)
    env = _env(pythonpath=(site,))
    nvrtc = _info(env)["nvrtc"]
    assert nvrtc["found_by"] == f"pip wheel nvidia-cuda-nvrtc ({wheel})"
    assert nvrtc["path"] == str(wheel / "libnvrtc.so.13")
    assert nvrtc["tried"] == ["CUDA_HOME (unset)", "CUDA_PATH (unset)"]
    if machine_nvrtc["builtins"]:
        assert nvrtc["builtins"] == str(wheel / Path(machine_nvrtc["builtins"]).name)
    # NVRTC opens its builtins by soname when it compiles, and the wheel sets no RUNPATH: with the
    # ldconfig cache off and LD_LIBRARY_PATH empty, only the runtime's preload from the wheel's
    # folder makes the compile work.
    inhibit = LOADER.is_file() and _python("pass", env, inhibit_cache=True).returncode == 0
    result = _python(_compile_tiny(tmp_path), env, inhibit_cache=inhibit)
    assert result.returncode == 0 and result.stdout == "compiled\n", result.stdout + result.stderr


def test_cuda_home_comes_before_the_wheel(machine_nvrtc: dict, tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    _link_nvrtc(site / "nvidia" / "cu13" / "lib", machine_nvrtc)
    home = tmp_path / "cuda"
    _link_nvrtc(home / "lib64", machine_nvrtc)
    nvrtc = _info(_env({"CUDA_HOME": str(home)}, pythonpath=(site,)))["nvrtc"]
    assert nvrtc["found_by"] == f"CUDA_HOME={home}"


def test_a_libnvrtc_already_loaded_is_used(machine_nvrtc: dict, tmp_path: Path) -> None:
    # As when torch loaded its NVRTC first: the runtime takes that one, not CUDA_HOME's.
    preloaded = _link_nvrtc(tmp_path / "torch-lib", machine_nvrtc) / "libnvrtc.so.13"
    home = _link_nvrtc(tmp_path / "cuda" / "lib64", machine_nvrtc).parent
    code = f"import ctypes; ctypes.CDLL({str(preloaded)!r}); {_INFO}"
    result = _python(code, _env({"CUDA_HOME": str(home)}))
    assert result.returncode == 0, result.stderr
    nvrtc = json.loads(result.stdout)["nvrtc"]
    assert nvrtc["found_by"] == "already loaded"
    assert nvrtc["path"] == str(preloaded)


def test_explicit_path_that_fails_is_a_one_line_error(machine_nvrtc: dict, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "libnvrtc.so.13"
    home = Path(machine_nvrtc["path"]).parent
    env = _env({"QCT_NVRTC_PATH": str(missing), "CUDA_HOME": str(home)})
    result = _python(_compile_tiny(tmp_path), env)
    assert result.returncode == 0, result.stderr
    status, message = result.stdout.rstrip("\n").split("\n")
    assert status == "QCT_ERR_NVRTC_UNAVAILABLE"
    assert message.startswith(f"NVRTC (libnvrtc.so.13) not loaded: QCT_NVRTC_PATH={missing} "
                              "(no such file); ")
    env_text = subprocess.run([sys.executable, "-m", "qct", "env"], capture_output=True, text=True,
                              env=env, cwd=REPO)
    assert env_text.returncode == 0, env_text.stderr
    assert f"NVRTC   {message}\n" in env_text.stdout


def test_nowhere_is_one_line_naming_what_to_install(machine_nvrtc: dict, tmp_path: Path) -> None:
    # Only where the toolkit's default folders have no NVRTC (not on CI, which has the toolkit):
    # with CUDA_HOME, CUDA_PATH and the wheel unset and the ldconfig cache off, nothing is left.
    toolkit = [Path(root, "lib64", "libnvrtc.so.13")
               for root in ("/usr/local/cuda", "/usr/local/cuda-13")]
    if any(p.exists() for p in toolkit):
        pytest.skip("this machine's /usr/local/cuda has NVRTC; the error for a machine without "
                    "any is checked by NvrtcSearchTest.NowhereIsOneLineNamingEverySourceAnd"
                    "WhatToInstall")
    if not LOADER.is_file():
        pytest.skip(f"no {LOADER} to run without the ldconfig cache")
    result = _python(_compile_tiny(tmp_path), _env(), inhibit_cache=True)
    assert result.returncode == 0, result.stderr
    status, message = result.stdout.rstrip("\n").split("\n")
    assert status == "QCT_ERR_NVRTC_UNAVAILABLE"
    assert message.startswith("NVRTC (libnvrtc.so.13) not found: tried CUDA_HOME (unset), "
                              "CUDA_PATH (unset), pip wheel nvidia-cuda-nvrtc (not installed")
    assert "install the CUDA 13 toolkit or `pip install nvidia-cuda-nvrtc`" in message


def test_qct_env_shows_the_toolchain(machine_nvrtc: dict, tmp_path: Path) -> None:
    _link_nvrtc(tmp_path / "lib64", machine_nvrtc)
    env = _env({"CUDA_HOME": str(tmp_path)})
    text = subprocess.run([sys.executable, "-m", "qct", "env"], capture_output=True, text=True,
                          env=env, cwd=REPO)
    assert text.returncode == 0, text.stderr
    loaded = tmp_path / "lib64" / "libnvrtc.so.13"
    assert f"NVRTC   {machine_nvrtc['version']}  {loaded}\n" in text.stdout
    assert f"        found by: CUDA_HOME={tmp_path}\n" in text.stdout
    assert "\ndriver  " in text.stdout
    out = subprocess.run([sys.executable, "-m", "qct", "env", "--json"], capture_output=True,
                         text=True, env=env, cwd=REPO)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["toolchain"]["nvrtc"]["found_by"] == f"CUDA_HOME={tmp_path}"
    assert set(doc["toolchain"]) == {"nvrtc", "driver"}
    assert "QCT_NVRTC_WHEEL_DIR" in [r["name"] for r in doc["variables"]]
