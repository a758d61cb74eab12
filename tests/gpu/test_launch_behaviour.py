"""GPU behaviours beyond per-kernel bits: CUDA-graph capture, two streams at once, a tensor over
2^31 bytes, and bad ragged offsets reported through the device error flag."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qct import verify

REPO = Path(__file__).resolve().parents[2]
GEN = REPO / "generated"


def _load(name: str):
    import qct.runtime

    path = GEN / f"{name}.json"
    return qct.runtime.load(path), verify.load_metadata(path)


def _prepared(name: str, M: int, K: int, groups: int, seed: int):
    import torch

    kernel, meta = _load(name)
    src = verify.make_source(meta, M, K, seed)
    offsets = verify.make_offsets(meta, M, groups, seed)
    expected = verify.reference_outputs(meta, src, offsets)
    dev = torch.device("cuda")
    tensors = verify.kernel_inputs(meta, src, offsets, dev)
    d_off = tensors.get("offsets")
    outs = kernel.allocate_outputs(M, K, d_off, device=dev)
    for t in outs.values():
        t.view(torch.uint8).fill_(verify.POISON)
    tensors.update(outs)
    return kernel, tensors, outs, expected


def _assert_equal(outs, expected) -> None:
    import torch

    problems = []
    for name, want in expected.items():
        got = outs[name].contiguous().view(torch.uint8).reshape(-1).cpu().numpy()
        problems += verify.first_mismatches(name, want, got)
    assert not problems, "\n".join(problems)


@pytest.mark.gpu
def test_cuda_graph_capture_replays_bit_exact() -> None:
    import torch

    kernel, tensors, outs, expected = _prepared("mxfp4_to_fp8_e4m3_col_ragged", 3000, 1024, 16, 21)
    kernel.prepare()  # module loaded before capture
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        kernel(**tensors)
    for t in outs.values():
        t.view(torch.uint8).fill_(verify.POISON)
    graph.replay()
    torch.cuda.synchronize()
    kernel.check_errors()
    _assert_equal(outs, expected)


@pytest.mark.gpu
def test_two_streams_at_once() -> None:
    import torch

    a = _prepared("bf16_to_mxfp4_row", 8192, 2048, 0, 31)
    b = _prepared("mxfp4_to_fp8_e4m3_col", 8192, 2048, 0, 32)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    for _ in range(3):
        with torch.cuda.stream(s1):
            a[0](**a[1])
        with torch.cuda.stream(s2):
            b[0](**b[1])
    torch.cuda.synchronize()
    _assert_equal(a[2], a[3])
    _assert_equal(b[2], b[3])


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["bf16_to_mxfp4_row", "bf16_to_fp8_e4m3_row_col"])
def test_tensor_over_2_pow_31_bytes(name: str) -> None:
    K = 7168
    M = (1 << 31) // (2 * K) + 300  # bf16 source just over 2^31 bytes
    kernel, tensors, outs, expected = _prepared(name, M, K, 0, 41)
    assert tensors["src"].numel() * tensors["src"].element_size() > (1 << 31)
    kernel(**tensors)
    kernel.check_errors()
    _assert_equal(outs, expected)


@pytest.mark.gpu
def test_bad_offsets_raise_the_device_error() -> None:
    import torch

    import qct.runtime

    kernel, tensors, outs, expected = _prepared("mxfp4_to_fp8_e4m3_col_ragged", 1000, 512, 4, 51)
    good = tensors["offsets"]
    tensors["offsets"] = torch.tensor([0, 600, 300, 900, 1000], dtype=good.dtype, device="cuda")
    kernel(**tensors)
    with pytest.raises(qct.runtime.QctError, match="offset"):
        kernel.check_errors()
    # The flag was consumed by check_errors: a good launch afterwards succeeds and verifies.
    tensors["offsets"] = good
    for t in outs.values():
        t.view(torch.uint8).fill_(verify.POISON)
    kernel(**tensors)
    kernel.check_errors()
    _assert_equal(outs, expected)
