"""The PyTorch peers of `qct bench` (python/qct/bench/peers.py) give the CPU reference's bytes on
small adversarial inputs, so the benchmark compares qct with implementations of the same contract.
Needs torch (CPU is enough) and the numerics reference library; skips with a message otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from qct import inputs, reference, verify
from qct.bench import floor, peers

torch = pytest.importorskip("torch", reason="torch is not installed: PyTorch peer checks skipped "
                            "(pip install torch --index-url https://download.pytorch.org/whl/cpu)")

REPO = Path(__file__).resolve().parents[2]
PEER_KERNELS = sorted(n for n, (_, spec) in peers.PEERS.items() if "ragged" not in spec)
RAGGED_PEER_KERNELS = sorted(n for n, (_, spec) in peers.PEERS.items() if "ragged" in spec)


@pytest.fixture(scope="module")
def ref_lib() -> None:
    try:
        reference.library()
    except reference.ReferenceUnavailable as e:
        pytest.skip(f"numerics reference not built: {e}")


def _meta(name: str) -> dict:
    path = REPO / "generated" / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"{path} not generated")
    return json.loads(path.read_text())


def _cpu_tensors(meta: dict, src: inputs.SourceTensor, offsets: np.ndarray | None = None) -> dict:
    return verify.kernel_inputs(meta, src, offsets, torch.device("cpu"))


@pytest.mark.parametrize("M", [256, 1000, 129])
@pytest.mark.parametrize("name", PEER_KERNELS)
def test_peer_matches_reference(ref_lib: None, name: str, M: int) -> None:
    meta = _meta(name)
    peer = peers.peer_for(meta)
    assert peer is not None, f"{name}: the peer no longer implements the generated spec"
    K = 512
    src = verify.make_source(meta, M, K, seed=M)
    expected = verify.reference_outputs(meta, src, None)
    got = peer(**peers.peer_inputs(meta, _cpu_tensors(meta, src)))
    assert set(got) == set(expected)
    for buffer, want in expected.items():
        found = got[buffer].contiguous().view(torch.uint8).reshape(-1).numpy()
        problems = verify.first_mismatches(buffer, want, found)
        assert not problems, "\n".join([f"{name} M={M}"] + problems)


@pytest.mark.parametrize("M,groups", [(256, 1), (1000, 4), (129, 37), (300, 256), (0, 3)])
@pytest.mark.parametrize("name", RAGGED_PEER_KERNELS)
def test_ragged_peer_matches_reference(ref_lib: None, name: str, M: int, groups: int) -> None:
    # Skewed groups with empty, one-row and non-multiple-of-128 ones (qct.inputs.ragged_offsets),
    # every byte of the capacity-sized outputs and the padded offsets. The peer writes the zero
    # tail; the spec leaves it untouched, so the benchmark compares the bytes before it
    # (floor.written_prefixes): those are checked against the untouched reference, and the rest
    # of that reference against the poison byte it started as.
    meta = _meta(name)
    peer = peers.peer_for(meta)
    assert peer is not None, f"{name}: the peer no longer implements the generated spec"
    K = 256
    src = verify.make_source(meta, M, K, seed=M + groups)
    offsets = verify.make_offsets(meta, M, groups, seed=M + groups)
    zero_tail = json.loads(json.dumps(meta))
    zero_tail["spec"]["ragged"]["capacity_tail"] = "zero"
    expected = verify.reference_outputs(zero_tail, src, offsets)
    got = peer(**peers.peer_inputs(meta, _cpu_tensors(meta, src, offsets)))
    assert set(got) == set(expected)
    for buffer, want in expected.items():
        found = got[buffer].contiguous().view(torch.uint8).reshape(-1).numpy()
        problems = verify.first_mismatches(buffer, want, found)
        assert not problems, "\n".join([f"{name} M={M} G={groups}"] + problems)
    untouched = verify.reference_outputs(meta, src, offsets)
    prefixes = floor.written_prefixes(meta, M, K, [int(o) for o in offsets])
    assert set(prefixes) == {b["name"] for b in meta["buffers"] if "output" in b}
    for buffer, prefix in prefixes.items():
        rows = untouched[buffer].reshape(prefix.rows, prefix.row_bytes)
        kept = rows[:prefix.keep_rows, :prefix.keep_bytes]
        np.testing.assert_array_equal(
            kept, expected[buffer].reshape(prefix.rows, prefix.row_bytes)[
                :prefix.keep_rows, :prefix.keep_bytes])
        tail = np.ones(rows.shape, bool)
        tail[:prefix.keep_rows, :prefix.keep_bytes] = False
        assert (rows[tail] == verify.POISON).all(), buffer


def test_exp2_int_is_exact() -> None:
    t = torch.arange(-149, 128, dtype=torch.int32)
    want = np.ldexp(np.float64(1.0), t.numpy()).astype(np.float32)
    np.testing.assert_array_equal(peers.exp2_int(t).numpy(), want)


def test_floor_log2_covers_subnormals() -> None:
    bits = torch.tensor([1, 2, 3, 0x7FFFFF, 0x800000, 0x3F800000, 0x3FFFFFFF, 0x7F7FFFFF],
                        dtype=torch.int32)
    values = bits.view(torch.float32)
    want = np.floor(np.log2(values.numpy().astype(np.float64))).astype(np.int32)
    np.testing.assert_array_equal(peers.floor_log2(values).numpy(), want)


def test_peers_skip_specs_they_do_not_implement() -> None:
    # Other group padding, no padded offsets, a fused spec marked unfused, another scale policy.
    ragged = _meta("mxfp4_to_fp8_e4m3_col_ragged")
    assert peers.peer_for(ragged) is not None
    for field, value in (("pad_groups_to", 1), ("write_padded_offsets", False),
                         ("capacity_tail", "zero")):
        changed = json.loads(json.dumps(ragged))
        changed["spec"]["ragged"][field] = value
        assert peers.peer_for(changed) is None, field
    unfused = json.loads(json.dumps(_meta("mxfp4_to_fp8_e4m3_row")))
    unfused["spec"]["fuse"] = False
    assert peers.peer_for(unfused) is None
    changed = json.loads(json.dumps(_meta("mxfp4_to_fp8_e4m3_row")))
    changed["spec"]["outputs"][0]["scale"] = "amax"
    assert peers.peer_for(changed) is None
