"""The GPU tier's CPU half, run here: for every generated kernel the reference produces exactly
the buffers the kernel's metadata declares (names, byte sizes from the shape expressions, ragged
capacities included). A disagreement between compiler metadata and reference would otherwise
first show up on the GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qct import runtime, verify

REPO = Path(__file__).resolve().parents[2]
GENERATED = sorted((REPO / "generated").glob("**/*.json"))
ITEMSIZE = {"u8": 1, "u16": 2, "bf16": 2, "f16": 2, "f32": 4, "i32": 4, "i64": 8}


@pytest.mark.parametrize("meta_path", GENERATED, ids=lambda p: p.stem)
@pytest.mark.parametrize("M,groups", [(1, 1), (300, 7), (0, 3)])
def test_reference_fills_every_declared_output_buffer(meta_path: Path, M: int, groups: int) -> None:
    meta = verify.load_metadata(meta_path)
    K = (meta["spec"].get("static") or {}).get("K") or 256
    G = groups if verify.is_ragged(meta) else 0
    src = verify.make_source(meta, M, K, seed=M + groups)
    offsets = verify.make_offsets(meta, M, G, seed=M + groups)
    expected = verify.reference_outputs(meta, src, offsets)
    declared = {b["name"]: b for b in meta["buffers"] if b["dir"] == "out"}
    assert set(expected) == set(declared)
    for name, buf in declared.items():
        elements = int(np.prod([runtime.eval_expr(e, M, K, G) for e in buf["shape"]]))
        assert expected[name].size == elements * ITEMSIZE[buf["dtype"]], \
            f"{name}: reference {expected[name].size} bytes, metadata {buf['shape']} ({buf['dtype']})"
