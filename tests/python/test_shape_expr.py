"""qct.shape_expr (the Python evaluator torch's fake tensors use) agrees with the runtime's on
every shape and launch expression of the bundled kernels, and refuses what the grammar does not
have."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qct import runtime, shape_expr

GEN = Path(__file__).resolve().parents[2] / "generated"
SHAPES = [(1, 128, 0), (1000, 256, 7), (4097, 7168, 33), (32768, 2048, 256)]  # K: every constraint


def _expressions() -> list[tuple[str, str, dict[str, int]]]:
    found = []
    for path in sorted(GEN.glob("**/*.json")):
        meta = json.loads(path.read_text())
        knobs = {k["name"]: int(k["default"]) for k in meta["schedule"]["knobs"]}
        exprs = [e for b in meta["buffers"] for e in b["shape"]]
        launch = meta["launch"]
        exprs += list(launch["grid"]) + list(launch["block"]) + [launch["dynamic_smem_bytes"]]
        found += [(path.stem, str(e), knobs) for e in exprs]
    return found


@pytest.mark.parametrize("M,K,G", SHAPES)
def test_agrees_with_the_runtime(M: int, K: int, G: int) -> None:
    for kernel, expr, knobs in _expressions():
        want = runtime.eval_expr(expr, M, K, G, knobs)
        got = shape_expr.evaluate(expr, {"M": M, "K": K, "G": G, **knobs})
        assert got == want, f"{kernel}: {expr} at M={M} K={K} G={G}: {got} != {want}"


@pytest.mark.parametrize("bad", ["M+", "foo", "cdiv(M)", "M K", "(M", "M$2"])
def test_refuses_what_the_grammar_lacks(bad: str) -> None:
    with pytest.raises(shape_expr.ShapeExprError, match="shape expression"):
        shape_expr.evaluate(bad, {"M": 1, "K": 2, "G": 3})
