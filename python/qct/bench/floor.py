"""The floor: the fewest bytes a kernel must move (docs/performance.md, "The floor").

Each input byte is read once and each output byte written once, scales included. For a dense
kernel that is exactly the sum of its metadata buffers. A ragged kernel's `col` outputs are sized
by capacity (docs/kernel-abi.md: C = rup(M + G·(P−1), 128) columns for P > 1, S = cdiv(C,B) + G
scale columns),
because the host never reads the offsets; the floor counts only what the groups own:

- data: the padded columns p[G] = Σ_g ceil(n_g / P)·P (the zero columns between groups are part of
  the layout a grouped GEMM consumes, so the kernel must write them; the capacity tail past p[G]
  is not counted, and a spec with `"capacity_tail": "untouched"` does not write it),
- scales: Σ_g ceil(n'_g / B) scale columns (n'_g the padded group size, B the block),
- the G+1 offsets read and, when the spec asks for them, the G+1 padded offsets written.

Everything here is plain Python on the spec and the host copy of the offsets: no GPU, no runtime.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any, Sequence

from qct.verify import untouched_tail

# Bytes per element of each storage format (mxfp4 packs two codes per byte: see row_bytes).
ELEMENT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "mxfp8_e4m3": 1, "mxfp8_e5m2": 1,
                 "fp8_e4m3": 1, "fp8_e5m2": 1}
MX_FORMATS = ("mxfp4", "mxfp8_e4m3", "mxfp8_e5m2")
FP8_BLOCK_FORMATS = ("fp8_e4m3", "fp8_e5m2")
DTYPE_BYTES = {"u8": 1, "u16": 2, "bf16": 2, "f16": 2, "f32": 4, "i32": 4, "i64": 8}


def row_bytes(fmt: str, n: int) -> int:
    """Bytes of one stored row of n elements (mxfp4: cdiv(n, 2), a trailing odd nibble is 0)."""
    if fmt == "mxfp4":
        return (n + 1) // 2
    return n * ELEMENT_BYTES[fmt]


def block_of(fmt: str) -> int:
    """Block length of an output format: 32 for MX, 128 for FP8 1x128, 0 (no scales) otherwise."""
    if fmt in MX_FORMATS:
        return 32
    if fmt in FP8_BLOCK_FORMATS:
        return 128
    return 0


def scale_bytes_each(fmt: str) -> int:
    """MX scales are e8m0 bytes, FP8 scales f32 scale_inv."""
    return 1 if fmt in MX_FORMATS else 4


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def rup(a: int, b: int) -> int:
    return cdiv(a, b) * b


@dataclass(frozen=True)
class GroupLayout:
    """What the groups of a ragged col output own, from the host copy of the offsets."""

    padded_columns: int               # p[G]
    scale_columns: int                # Σ ceil(n'_g / 128) for a 128-block (per block size below)
    groups: int


def ragged_capacity(M: int, G: int, pad_to: int) -> int:
    """The columns C of a ragged col output (docs/kernel-abi.md): M + G·(P−1), an upper bound on
    the groups' padded columns, rounded up to a multiple of 128 for P > 1 (16-byte-aligned rows)."""
    return M if pad_to == 1 else rup(M + G * (pad_to - 1), 128)


def group_layout(offsets: Sequence[int], pad_to: int, block: int) -> GroupLayout:
    sizes = [int(offsets[g + 1]) - int(offsets[g]) for g in range(len(offsets) - 1)]
    padded = [rup(n, pad_to) for n in sizes]
    scale_cols = sum(cdiv(n, block) for n in padded) if block else 0
    return GroupLayout(sum(padded), scale_cols, len(sizes))


@dataclass(frozen=True)
class FloorBytes:
    read: int
    written: int

    @property
    def total(self) -> int:
        return self.read + self.written


def floor_bytes(spec: dict[str, Any], M: int, K: int,
                offsets: Sequence[int] | None = None) -> FloorBytes:
    """The floor of one launch of a kernel of this (normalized) spec at shape [M, K]."""
    source = spec["source"]["format"]
    read = M * row_bytes(source, K)
    if source in MX_FORMATS:
        read += M * (K // 32)
    elif source in FP8_BLOCK_FORMATS:
        read += M * (K // 128) * 4
    ragged = spec.get("ragged")
    if ragged is not None and offsets is None:
        raise ValueError("a ragged spec's floor needs the offsets")
    written = 0
    for out in spec["outputs"]:
        fmt, layout = out["format"], out["layout"]
        block = block_of(fmt)
        mn_major = (out.get("scale_layout") or "row_major") == "mn_major"
        if layout == "row":
            written += M * row_bytes(fmt, K)
            if block:
                n_blocks, n_rows = K // block, M
                written += (n_blocks * rup(n_rows, 4) if mn_major else n_rows * n_blocks) \
                    * scale_bytes_each(fmt)
            continue
        if ragged is None:
            columns, scale_columns = M, cdiv(M, block) if block else 0
        else:
            owned = group_layout(offsets or [], int(ragged["pad_groups_to"]), block)
            columns, scale_columns = owned.padded_columns, owned.scale_columns
        written += K * row_bytes(fmt, columns)
        if block:
            written += (scale_columns * rup(K, 4) if mn_major else K * scale_columns) \
                * scale_bytes_each(fmt)
    if ragged is not None:
        offset_bytes = 8 if ragged.get("offsets_dtype") == "int64" else 4
        n = len(offsets or [])
        read += n * offset_bytes
        if ragged.get("write_padded_offsets"):
            written += n * offset_bytes
    return FloorBytes(read, written)


@dataclass(frozen=True)
class Prefix:
    """The bytes of a buffer, viewed as `rows` rows of `row_bytes`, that a kernel writes: the first
    `keep_bytes` of each of the first `keep_rows` rows."""

    rows: int
    row_bytes: int
    keep_rows: int
    keep_bytes: int


def written_prefixes(meta: dict[str, Any], M: int, K: int,
                     offsets: Sequence[int]) -> dict[str, Prefix]:
    """For a ragged kernel whose spec leaves the capacity tail untouched, the written part of each
    col output buffer, by buffer name (docs/kernel-abi.md): data rows up to the byte that holds
    column p[G] − 1, row_major scale rows up to the groups' scale columns, mn_major scale rows
    (one per scale column) up to those. Empty for every other kernel: it writes every byte."""
    spec = meta["spec"]
    if not untouched_tail(spec):
        return {}
    ragged = spec["ragged"]
    G = len(offsets) - 1
    C = ragged_capacity(M, G, int(ragged["pad_groups_to"]))
    prefixes = {}
    for i, out in enumerate(spec["outputs"]):
        if out["layout"] != "col":
            continue
        fmt, block = out["format"], block_of(out["format"])
        owned = group_layout(offsets, int(ragged["pad_groups_to"]), block)
        for b in meta["buffers"]:
            if b.get("output") != i:
                continue
            if not b["field"].startswith("out_scales"):
                prefixes[b["name"]] = Prefix(K, row_bytes(fmt, C), K,
                                             row_bytes(fmt, owned.padded_columns))
                continue
            each = scale_bytes_each(fmt)
            S = cdiv(C, block) + G
            if (out.get("scale_layout") or "row_major") == "mn_major":
                prefixes[b["name"]] = Prefix(S, rup(K, 4) * each, owned.scale_columns,
                                             rup(K, 4) * each)
            else:
                prefixes[b["name"]] = Prefix(K, S * each, K, owned.scale_columns * each)
    return prefixes


# --- The metadata's shape grammar (docs/kernel-abi.md), for capacity bytes and cross-checks -----

_FUNCS = {"cdiv": cdiv, "rup": rup, "min": min, "max": max}


def eval_shape(expr: str, M: int, K: int, G: int = 0, knobs: dict[str, int] | None = None) -> int:
    """Evaluates one metadata shape expression in Python ('/' must divide exactly)."""
    names = {"M": M, "K": K, "G": G, **(knobs or {})}

    def walk(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp):
            a, b = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div):
                if b == 0 or a % b:
                    raise ValueError(f"{expr}: {a}/{b} is not exact")
                return a // b
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in _FUNCS and len(node.args) == 2:
            return int(_FUNCS[node.func.id](walk(node.args[0]), walk(node.args[1])))
        raise ValueError(f"{expr}: unsupported expression")

    return walk(ast.parse(expr, mode="eval"))


def buffer_bytes(meta: dict[str, Any], M: int, K: int, G: int = 0) -> dict[str, int]:
    """Every buffer's allocated bytes (capacity, for ragged outputs), by name."""
    sizes = {}
    for b in meta["buffers"]:
        n = math.prod(eval_shape(dim, M, K, G) for dim in b["shape"])
        sizes[b["name"]] = n * DTYPE_BYTES[b["dtype"]]
    return sizes
