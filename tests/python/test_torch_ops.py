"""qct.ops: kernels as torch ops, bit for bit against the CPU reference, in eager mode, under
torch.compile(fullgraph=True) (static and dynamic shapes), in CUDA-graph capture and on side
streams; torch's own dtypes in and out; argument errors that name the argument.

Needs torch and a CUDA GPU (the GPU machine, tools/gpu-session's torch-tests step); skips elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("qct.ops tests need a CUDA GPU", allow_module_level=True)

import qct  # noqa: E402
import qct.ops  # noqa: E402
from qct import _fastlaunch, verify  # noqa: E402
from qct.errors import QctError  # noqa: E402
from qct.runtime import QctRuntimeError  # noqa: E402

GEN = Path(__file__).resolve().parents[2] / "generated"
# A validation error inside an op: qct's own error from a Python kernel, torch's RuntimeError
# carrying qct's message from a C++ kernel (qct.ops.cpp_kernels).
OP_ERRORS = (QctRuntimeError, RuntimeError)


def _op(name: str) -> qct.ops.KernelOp:
    return qct.ops.register(GEN / f"{name}.cu")


def _case(name: str, M: int, K: int, groups: int = 0, seed: int = 3) -> tuple[Any, dict, dict]:
    meta = verify.load_metadata(GEN / f"{name}.json")
    src = verify.make_source(meta, M, K, seed)
    offsets = verify.make_offsets(meta, M, groups, seed)
    expected = verify.reference_outputs(meta, src, offsets)
    inputs = verify.kernel_inputs(meta, src, offsets, torch.device("cuda"))
    return meta, inputs, expected


def _native_inputs(op: qct.ops.KernelOp, inputs: dict[str, Any]) -> list[Any]:
    """The inputs in op order, codes viewed as torch's own dtypes."""
    from qct.runtime import torch_dtype

    return [inputs[b.name].view(torch_dtype(b)) for b in op.inputs]


def _assert_bits(op: qct.ops.KernelOp, outs: tuple[Any, ...], expected: dict) -> None:
    problems = []
    for b, t in zip(op.outputs, outs):
        got = t.contiguous().view(torch.uint8).reshape(-1).cpu().numpy()
        problems += verify.first_mismatches(b.name, expected[b.name], got)
    assert not problems, "\n".join(problems)


DENSE = ["bf16_to_fp8_e4m3_row_col_mn", "bf16_to_mxfp4_row", "mxfp4_to_fp8_e4m3_row",
         "bf16_to_mxfp4_row_fp8_col", "fp8_e4m3_to_mxfp4_row", "mxfp4_to_bf16_row"]


@pytest.mark.parametrize("name", DENSE)
def test_functional_op_is_bitwise_and_native(name: str) -> None:
    op = _op(name)
    _, inputs, expected = _case(name, 384, 512)
    outs = op(*_native_inputs(op, inputs))
    torch.cuda.synchronize()
    assert len(outs) == len(op.outputs)
    for b, t in zip(op.outputs, outs):
        assert t.dtype == qct.runtime.torch_dtype(b), b.name
    _assert_bits(op, outs, expected)


def test_native_dtypes_are_the_codes_own() -> None:
    op = _op("bf16_to_mxfp4_row_fp8_col")
    dtypes = {b.name: qct.runtime.torch_dtype(b) for b in op.outputs}
    assert dtypes["y"] == torch.float4_e2m1fn_x2
    assert dtypes["y_scales"] == torch.float8_e8m0fnu
    assert dtypes["yt"] == torch.float8_e4m3fn
    assert dtypes["yt_scales"] == torch.float32


@pytest.mark.parametrize("name", ["mxfp4_to_fp8_e4m3_col_ragged", "mxfp4_to_fp8_e4m3_col_ragged_mn"])
def test_ragged_out_op_is_bitwise(name: str) -> None:
    op = _op(name)
    _, inputs, expected = _case(name, 1000, 256, groups=7)
    offsets = inputs["offsets"]
    outs = op.allocate_outputs(1000, 256, offsets)
    for t in outs.values():
        t.view(torch.uint8).fill_(verify.POISON)
    op.out(*_native_inputs(op, inputs), **outs)
    op.kernel.check_errors()
    _assert_bits(op, tuple(outs[b.name] for b in op.outputs), expected)


def test_uint8_views_are_accepted() -> None:
    op = _op("mxfp4_to_fp8_e4m3_row")
    _, inputs, expected = _case("mxfp4_to_fp8_e4m3_row", 256, 256)
    outs = op(*[inputs[b.name] for b in op.inputs])  # raw uint8 codes and scales
    _assert_bits(op, outs, expected)


def test_compile_fullgraph_static_and_dynamic() -> None:
    op = _op("bf16_to_fp8_e4m3_row_col_mn")

    def quantize(x: Any) -> Any:
        y, ys, yt, yts = op(x * 1)  # an op of torch's beside ours in the graph
        return y, ys, yt, yts

    for dynamic in (False, True):
        torch._dynamo.reset()
        compiled = torch.compile(quantize, fullgraph=True, dynamic=dynamic)
        for M in (256, 640):
            _, inputs, expected = _case("bf16_to_fp8_e4m3_row_col_mn", M, 512, seed=M)
            outs = compiled(inputs["src"])
            torch.cuda.synchronize()
            _assert_bits(op, outs, expected)


@pytest.mark.parametrize("native", [True, False], ids=["native", "uint8"])
def test_compile_out_op(native: bool) -> None:
    op = _op("mxfp4_to_fp8_e4m3_row")
    _, inputs, expected = _case("mxfp4_to_fp8_e4m3_row", 512, 256)
    outs = op.allocate_outputs(512, 256)
    ins = _native_inputs(op, inputs) if native else [inputs[b.name] for b in op.inputs]

    @torch.compile(fullgraph=True)
    def run(src: Any, scales: Any, y: Any, y_scales: Any) -> None:
        op.out(src, scales, y, y_scales)

    torch._dynamo.reset()
    run(*ins, outs["y"], outs["y_scales"])
    torch.cuda.synchronize()
    _assert_bits(op, (outs["y"], outs["y_scales"]), expected)


def test_compile_functional_op_with_fp4_inputs() -> None:
    """The paper's forward conversion inside a compiled region, float4/e8m0 inputs as they are."""
    op = _op("mxfp4_to_fp8_e4m3_row_mn")
    _, inputs, expected = _case("mxfp4_to_fp8_e4m3_row_mn", 512, 256)
    torch._dynamo.reset()
    compiled = torch.compile(lambda s, sc: op(s, sc), fullgraph=True)
    outs = compiled(*_native_inputs(op, inputs))
    torch.cuda.synchronize()
    _assert_bits(op, outs, expected)


def test_cuda_graph_capture_and_side_stream() -> None:
    op = _op("bf16_to_mxfp4_row")
    _, inputs, expected = _case("bf16_to_mxfp4_row", 512, 1024)
    x = inputs["src"]
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        outs = op(x)  # launched on the side stream, torch's current one here
    stream.synchronize()
    _assert_bits(op, outs, expected)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = op(x)
    for t in captured:
        t.view(torch.uint8).fill_(verify.POISON)
    graph.replay()
    torch.cuda.synchronize()
    _assert_bits(op, captured, expected)


def test_compiled_region_uses_the_current_stream() -> None:
    """Inside a compiled region torch.cuda.current_stream() has no cuda_stream; the launch
    reads the raw stream instead (the reason qct failed under torch.compile)."""
    kernel = qct.load(GEN / "bf16_to_mxfp4_row.cu")
    _, inputs, expected = _case("bf16_to_mxfp4_row", 256, 256)
    outs = kernel.allocate_outputs(256, 256)

    @torch.compile
    def run(x: Any) -> None:
        kernel(src=x * 1, **outs)  # dynamo breaks the graph at the kernel call

    run(inputs["src"])
    torch.cuda.synchronize()
    problems = []
    for name, t in outs.items():
        problems += verify.first_mismatches(name, expected[name],
                                            t.view(torch.uint8).reshape(-1).cpu().numpy())
    assert not problems


def test_wrong_8bit_dtype_names_the_argument() -> None:
    op = _op("fp8_e4m3_to_mxfp4_row")
    _, inputs, _ = _case("fp8_e4m3_to_mxfp4_row", 128, 256)
    src = inputs["src"].view(torch.float8_e5m2)
    with pytest.raises(OP_ERRORS, match=r"argument 'src'.*expected dtype fp8_e4m3 \(or a u8 "
                                              r"view\), found fp8_e5m2"):
        op(src, inputs["src_scales"])


def test_cpu_tensor_names_the_argument() -> None:
    op = _op("bf16_to_mxfp4_row")
    with pytest.raises(QctError, match="argument 'src': a CUDA tensor is required"):
        op(torch.zeros(128, 256, dtype=torch.bfloat16))
    kernel = op.kernel
    outs = kernel.allocate_outputs(128, 256)
    with pytest.raises(QctError, match="argument 'src': a CUDA tensor is required"):
        kernel(torch.zeros(128, 256, dtype=torch.bfloat16), *outs.values())


def test_non_contiguous_tensor_is_refused() -> None:
    op = _op("bf16_to_mxfp4_row")
    x = torch.zeros(256, 512, dtype=torch.bfloat16, device="cuda")[:, :256]
    with pytest.raises(OP_ERRORS, match="argument 'src'.*contiguous"):
        op(x)
    with pytest.raises(QctRuntimeError, match="argument 'src'.*contiguous"):
        op.kernel(x, *op.kernel.allocate_outputs(256, 256).values())


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_tensor_on_another_device_is_refused() -> None:
    op = _op("bf16_to_mxfp4_row")
    kernel = op.kernel
    outs = kernel.allocate_outputs(128, 256, device=torch.device("cuda", 1))
    with pytest.raises(QctError, match="argument 'y'.*cuda:1"):
        kernel(torch.zeros(128, 256, dtype=torch.bfloat16, device="cuda:0"), *outs.values())


def test_launches_take_the_compiled_path() -> None:
    """The benchmark's host figures are those of the extension and the C++ op kernels: both must
    be built and found on the GPU machine."""
    assert _fastlaunch.available(), f"{_fastlaunch.extension_path()} was not loaded"
    assert _op("bf16_to_mxfp4_row").kernels == "cpp"


def test_python_kernels_are_bitwise_too() -> None:
    """With QCT_TORCH_KERNELS=python the ops run their Python kernels (in a fresh process: the
    choice is made once per process)."""
    import subprocess
    import sys

    code = ("import os, torch, qct.ops; from tests.python.test_torch_ops import _check_python;"
            " _check_python()")
    env = {**os.environ, "QCT_TORCH_KERNELS": "python"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=str(GEN.parent))
    assert run.returncode == 0, run.stdout + run.stderr


def _check_python() -> None:
    op = _op("bf16_to_fp8_e4m3_row_col_mn")
    assert op.kernels == "python"
    _, inputs, expected = _case("bf16_to_fp8_e4m3_row_col_mn", 256, 512)
    _assert_bits(op, op(inputs["src"]), expected)


def test_fake_shapes_match_the_runtime() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    op = _op("mxfp4_to_fp8_e4m3_col_ragged_mn")
    with FakeTensorMode():
        src = torch.empty(1000, 128, dtype=torch.uint8, device="cuda")
        scales = torch.empty(1000, 8, dtype=torch.uint8, device="cuda")
        offsets = torch.empty(8, dtype=torch.int32, device="cuda")
        outs = op(src, scales, offsets)
    want = op.kernel.output_shapes(1000, 256, 7)
    assert [tuple(t.shape) for t in outs] == [want[b.name] for b in op.outputs]
