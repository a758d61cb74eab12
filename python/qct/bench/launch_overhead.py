"""Host time of one launch from Python, qct's paths beside a trivial torch op and a Triton kernel.

    python3 -m qct.bench.launch_overhead [--iters 2000] [--json out.json] [--md out.md]

Every variant launches a small kernel (no GPU-bound queue: each launch is far shorter on the GPU
than on the host) and is timed call by call with perf_counter_ns, in rounds that interleave the
variants so that they share the host's noise; the figure is the median over all calls. The ratio
is to `torch.abs(x, out=y)` measured in the same loop and process (performance.md: qct.load's
callable at most 0.5x, the torch op at most 1.0x).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

from qct.env import REPO_ROOT

GENERATED = REPO_ROOT / "generated"
# Small shapes: the GPU finishes each launch long before the host issues the next.
M, K = 256, 512
KERNELS = ("mxfp4_to_fp8_e4m3_row", "bf16_to_fp8_e4m3_row_col_mn")
_LIBRARIES: list[Any] = []


def _triton_copy(x: Any, y: Any) -> Callable[[], object] | None:
    """A launch of a one-block-per-1024-elements Triton copy of x into y (None without Triton)."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def copy(src, dst, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)

    n = x.numel()
    grid = (triton.cdiv(n, 1024),)
    return lambda: copy[grid](x, y, n, BLOCK=1024)


def _variants(torch: Any) -> dict[str, Callable[[], object]]:
    import qct
    import qct.ops
    from qct import _fastlaunch, _ffi, verify

    device = torch.device("cuda")
    x = torch.randn(M * K // 64, device=device)
    y = torch.empty_like(x)
    variants: dict[str, Callable[[], object]] = {"torch.abs(x, out=y)": lambda: torch.abs(x, out=y)}
    triton_launch = _triton_copy(x, y)
    if triton_launch is not None:
        variants["triton copy kernel"] = triton_launch
    # The floor of an op whose CUDA kernel is Python: a torch.library op that does nothing.
    lib = torch.library.Library("qct_bench", "FRAGMENT")
    lib.define("noop(Tensor x, Tensor(a!) y) -> ()")
    lib.impl("noop", lambda x, y: None, "CUDA")
    noop = torch.ops.qct_bench.noop.default
    variants["torch.library op with a Python CUDA kernel that does nothing"] = lambda: noop(x, y)
    _LIBRARIES.append(lib)  # a dropped Library takes its registrations with it
    for name in KERNELS:
        path = GENERATED / f"{name}.cu"
        meta = verify.load_metadata(path.with_suffix(".json"))
        src = verify.make_source(meta, M, K, seed=1)
        inputs = verify.kernel_inputs(meta, src, None, device)
        kernel = qct.load(path)
        outs = kernel.allocate_outputs(M, K)
        named = {**inputs, **outs}
        ordered = [named[b.name] for b in kernel.buffers]
        op = qct.ops.register(kernel)
        ins = [inputs[b.name] for b in op.inputs]
        out_op = op.out_op
        tensors = list(ordered)
        variants[f"{name}: qct.load callable, by name"] = lambda k=kernel, n=named: k(**n)
        variants[f"{name}: qct.load callable, positional"] = lambda k=kernel, t=ordered: k(*t)
        variants[f"{name}: ctypes path (before)"] = \
            lambda k=kernel, t=ordered: k._launch_general(t, None)
        # The parts: the extension called directly (no Kernel.__call__), and the C ABI's launch
        # alone with its descriptors built once (validation + cuLaunchKernel + a ctypes call).
        fast = _fastlaunch.launcher()
        if fast is not None:
            variants[f"{name}: extension, direct"] = \
                lambda f=fast, k=kernel, t=ordered: f(k._handle_value, k._names, None, *t)
        keep: list[object] = []
        descs = kernel._descriptors(ordered, keep)
        stream = ctypes.c_void_p(int(torch.cuda.current_stream().cuda_stream))
        launch_c = _ffi.lib().qct_kernel_launch
        variants[f"{name}: C ABI alone, descriptors prepared"] = \
            lambda c=launch_c, k=kernel, d=descs, n=len(ordered), s=stream, _k=keep: \
            c(k._handle, d, n, s)
        variants[f"{name}: torch op _out"] = lambda o=out_op, t=tensors: o(*t)
        variants[f"{name}: torch op, allocating"] = lambda o=op.op, i=ins: o(*i)
    return variants


def measure(iters: int, rounds: int = 8) -> dict[str, Any]:
    import torch

    import qct.ops
    from qct import _fastlaunch

    variants = _variants(torch)
    for fn in variants.values():  # compile, load, warm every path
        for _ in range(50):
            fn()
    torch.cuda.synchronize()
    samples: dict[str, list[int]] = {name: [] for name in variants}
    per_round = max(1, iters // rounds)
    clock = time.perf_counter_ns
    for _ in range(rounds):
        for name, fn in variants.items():
            out = samples[name]
            for _ in range(per_round):
                t0 = clock()
                fn()
                out.append(clock() - t0)
            torch.cuda.synchronize()
    base = statistics.median(samples["torch.abs(x, out=y)"]) / 1000
    rows = []
    for name, values in samples.items():
        median = statistics.median(values) / 1000
        rows.append({"variant": name, "median_us": round(median, 2),
                     "p10_us": round(sorted(values)[len(values) // 10] / 1000, 2),
                     "ratio_to_torch_abs": round(median / base, 3), "calls": len(values)})
    return {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "python": sys.version.split()[0], "M": M, "K": K,
            "fast_path": _fastlaunch.available(),
            "op_kernels": next((op.kernels for op in qct.ops.registered().values()), "none"),
            "rows": rows}


def markdown(result: dict[str, Any]) -> str:
    lines = [f"Host time per launch, {result['gpu']}, torch {result['torch']}, Python "
             f"{result['python']}, M = {result['M']}, K = {result['K']} "
             f"(compiled launch path: {'yes' if result['fast_path'] else 'NO'}; the torch ops' "
             f"CUDA kernels: {result['op_kernels']})", "",
             "| variant | median µs | p10 µs | × torch.abs |", "|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['variant']} | {r['median_us']} | {r['p10_us']} | "
                     f"{r['ratio_to_torch_abs']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m qct.bench.launch_overhead",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--iters", type=int, default=2000, help="timed calls per variant (≥ 2000)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--md", type=Path, help="write the markdown table here")
    args = parser.parse_args(argv)
    result = measure(args.iters)
    text = markdown(result)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.md:
        args.md.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
