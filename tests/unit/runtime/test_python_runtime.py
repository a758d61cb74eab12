"""The Python binding of the runtime (qct.load, qct.runtime.Kernel, qct cache/env) over its C ABI.

Registered with CTest by tests/unit/runtime/CMakeLists.txt (QCT_BUILD_DIR and PYTHONPATH set
there). Needs NVRTC, not a GPU; the launch test runs only where torch sees a GPU.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import qct
from qct import cli, runtime
from qct.runtime import QctRuntimeError

HERE = Path(__file__).resolve().parent


def _tiny(tmp_path: Path) -> Path:
    """Writes the C++ tests' tiny kernel (TestKernel.cpp) as tiny_transpose.cu + .json."""
    text = (HERE / "TestKernel.cpp").read_text()
    source = re.search(r'R"cuda\((.*?)\)cuda"', text, re.S).group(1)
    metadata = re.search(r'R"json\((.*?)\)json"', text, re.S).group(1) + "\n}\n"
    (tmp_path / "tiny_transpose.cu").write_text(source)
    (tmp_path / "tiny_transpose.json").write_text(metadata)
    return tmp_path / "tiny_transpose.cu"


class FakeCuda:
    """A __cuda_array_interface__ object; validation never dereferences its pointer."""

    def __init__(self, shape: tuple[int, ...], typestr: str, ptr: int,
                 strides: tuple[int, ...] | None = None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "strides": strides, "version": 3}


def _args(M: int = 1000, K: int = 64, G: int = 4) -> list[FakeCuda]:
    return [FakeCuda((M, K), "|u1", 1 << 20), FakeCuda((G + 1,), "<i4", 2 << 20),
            FakeCuda((K, M), "|u1", 3 << 20)]


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QCT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("QCT_CACHE_DISABLE", raising=False)
    from qct import _ffi

    _ffi.lib().qct_cache_clear_memory()


def test_device_headers_hash_is_a_stable_sha256() -> None:
    # The tuner keeps it with each entry (qct.tuning.stale_reason compares it): hex SHA-256, the
    # same on every call.
    digest = runtime.device_headers_hash()
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert runtime.device_headers_hash() == digest


def test_load_generated_source_and_metadata(tmp_path: Path) -> None:
    k = qct.load(_tiny(tmp_path), schedule={"QCT_THREADS": 128}, arch="sm_90")
    assert k.name == "tiny_transpose" and k.entry == "qct_tiny_transpose"
    assert k.arch == "sm_90" and k.origin == "compiled"
    assert k.schedule == {"QCT_THREADS": 128}
    assert "-DQCT_THREADS=128" in k.options and "--gpu-architecture=sm_90" in k.options
    assert k.metadata["spec_hash"].endswith("1")
    assert [b.name for b in k.buffers] == ["src", "offsets", "y"]
    assert k.stats["found"] == 1 and k.stats["registers"] > 0
    assert k.stats["local_memory_bytes"] == 0 and k.stats["spill_store_bytes"] <= 0
    assert k.cubin[:4] == b"\x7fELF"
    # Loading the metadata .json itself finds the source through "cuda_source".
    k2 = qct.load(tmp_path / "tiny_transpose.json", schedule=["QCT_THREADS=128"], arch="sm_90")
    assert k2.cache_key == k.cache_key and k2.origin == "memory"


def test_output_shapes_use_the_runtime_evaluator(tmp_path: Path) -> None:
    k = qct.load(_tiny(tmp_path), arch="sm_90")
    assert k.output_shapes(1000, 64, 4) == {"y": (64, 1000)}
    assert runtime.eval_expr("cdiv(M+G*127,128)+G", M=1000, G=4) == 16
    assert runtime.eval_expr("cdiv(K,QCT_TILE_K)", K=7168, knobs={"QCT_TILE_K": 128}) == 56
    with pytest.raises(QctRuntimeError, match="inexact division 7/2"):
        runtime.eval_expr("K/2", K=7)


def test_validation_names_argument_expected_and_found(tmp_path: Path) -> None:
    k = qct.load(_tiny(tmp_path), arch="sm_90")
    plan = k.validate(*_args())
    assert (plan.M, plan.K, plan.G) == (1000, 64, 4)
    assert plan.grid == (250, 1, 1) and plan.block == (256, 1, 1)
    a = _args()
    a[2] = FakeCuda((64, 999), "|u1", 3 << 20)
    with pytest.raises(QctRuntimeError) as e:
        k.validate(src=a[0], offsets=a[1], y=a[2])
    assert e.value.status_name == "QCT_ERR_VALIDATION"
    assert "argument 'y' (out[0]): expected shape [64, 1000]" in str(e.value)
    assert "found [64, 999]" in str(e.value)
    a = _args()
    a[1] = FakeCuda((5,), "<i8", 2 << 20)
    with pytest.raises(QctRuntimeError, match="expected dtype i32, found i64"):
        k.validate(*a)
    a = _args()
    a[0] = FakeCuda((1000, 64), "|u1", (1 << 20) + 4)
    with pytest.raises(QctRuntimeError, match="16-byte aligned"):
        k.validate(*a)
    a = _args()
    a[0] = FakeCuda((1000, 64), "|u1", 1 << 20, strides=(128, 1))  # byte strides of a slice
    with pytest.raises(QctRuntimeError, match="row-major contiguous"):
        k.validate(*a)
    with pytest.raises(cli.QctError, match="takes 3 tensors"):
        k.validate(*_args()[:2])
    with pytest.raises(cli.QctError, match="no buffer 'z'"):
        k.validate(src=1, offsets=2, y=3, z=4)


def test_dlpack_host_tensor_is_refused(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    k = qct.load(_tiny(tmp_path), arch="sm_90")
    a = _args()
    a[0] = np.zeros((1000, 64), dtype=np.uint8)  # __dlpack__ on the CPU
    with pytest.raises(cli.QctError, match="argument 'src': a CUDA"):
        k.validate(*a)


def test_compile_error_message_has_every_field(tmp_path: Path) -> None:
    cu = _tiny(tmp_path)
    bad = tmp_path / "bad.cu"
    bad.write_text(cu.read_text() + "not C++;\n")
    with pytest.raises(QctRuntimeError) as e:
        runtime.Kernel(bad, tmp_path / "tiny_transpose.json", arch="sm_90")
    err = e.value
    assert err.status_name == "QCT_ERR_COMPILE"
    assert "error" in err.log and "-std=c++17" in err.options
    assert "   25 | not C++;" in err.source and "NVRTC 13." in err.versions
    for section in ("--- versions ---", "--- NVRTC log ---", "--- source ---"):
        assert section in str(err)


def test_launch_without_gpu_is_a_clear_error(tmp_path: Path) -> None:
    from qct import _ffi

    if _ffi.lib().qct_driver_proc(b"cuInit"):
        pytest.skip("a CUDA driver is present")
    k = qct.load(_tiny(tmp_path), arch="sm_90")
    with pytest.raises(QctRuntimeError) as e:
        k(*_args())
    assert e.value.status_name in ("QCT_ERR_NO_DRIVER", "QCT_ERR_NO_DEVICE")
    assert "no CUDA driver" in str(e.value) or "no GPU" in str(e.value)


def test_launch_on_gpu_with_torch(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU visible to torch")
    k = qct.load(_tiny(tmp_path))
    M, K = 300, 48
    src = torch.randint(0, 256, (M, K), dtype=torch.uint8, device="cuda")
    offsets = torch.tensor([0, 100, 100, 300], dtype=torch.int32, device="cuda")
    outs = k.allocate_outputs(M, K, offsets=offsets)
    assert outs["y"].shape == (K, M)
    k(src=src, offsets=offsets, **outs)
    k.check_errors()
    assert torch.equal(outs["y"], (src.to(torch.int32) + 1).to(torch.uint8).t())
    k(src=src, offsets=torch.tensor([0, 200, 100, 300], dtype=torch.int32, device="cuda"), **outs)
    with pytest.raises(QctRuntimeError, match="bad ragged offsets"):
        k.check_errors()
    k.check_errors()  # the flag was cleared


def test_cli_env_and_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["env", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = [r["name"] for r in doc["variables"]]
    for name in ("QCT_CACHE_DIR", "QCT_CACHE_DISABLE", "QCT_CACHE_MAX_BYTES", "QCT_BUILD_DIR",
                 "QCT_NVRTC_WHEEL_DIR"):
        assert names.count(name) == 1
    assert doc["toolchain"]["nvrtc"]["version"] == runtime.nvrtc_version()
    k = qct.load(_tiny(tmp_path), arch="sm_90")
    assert cli.main(["cache", "list", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["key"] for e in entries] == [k.cache_key] and entries[0]["valid"]
    assert cli.main(["cache", "info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"] == 1
    assert cli.main(["cache", "clear"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert not list((tmp_path / "cache" / "v1").glob("*.qct"))
