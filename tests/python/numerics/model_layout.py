"""Independent model of whole-tensor outputs: source decoding, row/col layouts, ragged
placement and buffer filling, from docs/kernel-abi.md and the numerics contract, on top of the
block model in model.py. Returns the exact bytes the reference must produce."""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

import numpy as np

from model import (BF16, E2M1, E4M3, E5M2, FP16, FP32, POS_NAN, V, decode_code, encode,
                   fp8_block, mx_block)

ELEM = {"mxfp4": E2M1, "mxfp8_e4m3": E4M3, "mxfp8_e5m2": E5M2, "fp8_e4m3": E4M3,
        "fp8_e5m2": E5M2, "bf16": BF16, "fp16": FP16, "fp32": FP32}


def block_of(fmt: str) -> int:
    return 32 if fmt.startswith("mx") else 128 if fmt.startswith("fp8") else 0


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def decode_source(fmt: str, data: np.ndarray, scales: Optional[np.ndarray], M: int, K: int):
    """Exact values [M][K] and, for MX sources, each element's scale byte."""
    X = [[None] * K for _ in range(M)]
    SB = [[0] * K for _ in range(M)]
    flat = np.ascontiguousarray(data).reshape(-1)
    for m in range(M):
        for k in range(K):
            if fmt in ("bf16", "fp16"):
                X[m][k] = decode_code(ELEM[fmt], int(flat.view(np.uint16)[m * K + k]))
            elif fmt == "fp32":
                X[m][k] = decode_code(FP32, int(flat.view(np.uint32)[m * K + k]))
            elif fmt.startswith("mx"):
                if fmt == "mxfp4":
                    byte = int(flat.view(np.uint8)[m * (K // 2) + k // 2])
                    code = (byte >> (4 * (k % 2))) & 0xF
                else:
                    code = int(flat.view(np.uint8)[m * K + k])
                b = int(scales.reshape(-1)[m * (K // 32) + k // 32])
                SB[m][k] = b
                e = decode_code(ELEM[fmt], code)
                if b == 0xFF:
                    X[m][k] = POS_NAN
                elif e.kind != "fin":
                    X[m][k] = e
                else:
                    X[m][k] = V(e.neg, "fin", e.mag * Fraction(2) ** (b - 127))
            else:  # fp8 1x128, f32 scale_inv
                e = decode_code(ELEM[fmt], int(flat.view(np.uint8)[m * K + k]))
                s = float(scales.reshape(-1)[m * (K // 128) + k // 128])
                if s != s or (e.kind == "fin" and e.mag == 0 and abs(s) == float("inf")) \
                        or (e.kind == "inf" and s == 0):
                    X[m][k] = POS_NAN
                elif e.kind == "nan":
                    X[m][k] = e
                elif e.kind == "inf" or abs(s) == float("inf"):
                    X[m][k] = V(e.neg != (s < 0), "inf")
                else:
                    X[m][k] = V(e.neg != (s < 0), "fin", e.mag * abs(Fraction(s)))
    return X, SB


_DECODED: dict = {}


def model_convert(src_fmt: str, data: np.ndarray, scales: Optional[np.ndarray], M: int, K: int,
                  out_fmt: str, layout: str, scale: str, scale_layout: str = "row_major",
                  via_bf16: bool = False, offsets: Optional[list[int]] = None, P: int = 1):
    """(data bytes, scales array or None, padded offsets or None), as docs/kernel-abi.md."""
    key = (id(data), id(scales), src_fmt, M, K, via_bf16)
    if key not in _DECODED:  # the tests convert one source many ways
        X, SB = decode_source(src_fmt, data, scales, M, K)
        if via_bf16:
            X = [[decode_code(BF16, encode(BF16, x)) for x in row] for row in X]
        _DECODED[key] = (X, SB, data, scales)  # keeps the arrays alive: ids stay unique
    X, SB = _DECODED[key][:2]
    B = block_of(out_fmt)
    elem = ELEM[out_fmt]
    padded = None
    if layout == "row":
        lines = [(X[m], SB[m]) for m in range(M)]
        groups = [(0, K, 0, K, 0)]
        line_len = K
        scale_cols = K // B if B else 0
    else:
        lines = [([X[m][k] for m in range(M)], [SB[m][k] for m in range(M)]) for k in range(K)]
        if offsets is None:
            groups = [(0, M, 0, M, 0)]
            line_len = M
            scale_cols = cdiv(M, B) if B else 0
        else:
            G = len(offsets) - 1
            # docs/kernel-abi.md: the capacity, 16-byte-aligned rows for P > 1
            line_len = M if P == 1 else cdiv(M + G * (P - 1), 128) * 128
            scale_cols = cdiv(line_len, B) + G if B else 0
            groups, col, scol = [], 0, 0
            padded = [0]
            for g in range(G):
                n = offsets[g + 1] - offsets[g]
                n_pad = cdiv(n, P) * P
                groups.append((offsets[g], n, col, n_pad, scol))
                col += n_pad
                scol += cdiv(n_pad, B) if B else 0
                padded.append(col)
    if offsets is not None and padded is None:
        padded = [0]
        for g in range(len(offsets) - 1):
            padded.append(padded[-1] + cdiv(offsets[g + 1] - offsets[g], P) * P)
    n_lines = len(lines)
    codes = [[0] * line_len for _ in range(n_lines)]
    pad_scale = 127 if out_fmt.startswith("mx") else Fraction(1)
    S = [[pad_scale] * scale_cols for _ in range(n_lines)]
    for r, (x, sb) in enumerate(lines):
        for (start, n, dst, n_pad, scol) in groups:
            seg, segb = x[start:start + n], sb[start:start + n]
            if not B:
                for i, v in enumerate(seg):
                    codes[r][dst + i] = encode(elem, v)
                continue
            for kb in range(cdiv(n_pad, B)):
                part, partb = seg[kb * B:(kb + 1) * B], segb[kb * B:(kb + 1) * B]
                if not part:
                    continue  # padding only: codes 0, scale stays the padding value
                if out_fmt.startswith("mx"):
                    s, cs = mx_block(part, elem, scale)
                else:
                    s, cs = fp8_block(part, elem, scale, partb, ELEM[src_fmt])
                S[r][scol + kb] = s
                for i, c in enumerate(cs):
                    codes[r][dst + kb * B + i] = c
    # Serialize.
    if out_fmt == "mxfp4":
        row_bytes = cdiv(line_len, 2)
        buf = np.zeros((n_lines, row_bytes), np.uint8)
        for r in range(n_lines):
            for c, code in enumerate(codes[r]):
                buf[r, c // 2] |= (code & 0xF) << (4 * (c % 2))
        out = buf.reshape(-1)
    else:
        dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32}[
            4 if out_fmt == "fp32" else 2 if out_fmt in ("bf16", "fp16") else 1]
        out = np.array(codes, dtype=dtype).reshape(-1).view(np.uint8) if n_lines else \
            np.zeros(0, np.uint8)
    scales_out = None
    if B:
        sdt = np.uint8 if out_fmt.startswith("mx") else np.float32
        arr = np.array([[float(v) if sdt is np.float32 else v for v in row] for row in S],
                       dtype=sdt).reshape(n_lines, scale_cols)
        if scale_layout == "mn_major":
            ld = cdiv(n_lines, 4) * 4
            mn = np.full((scale_cols, ld), pad_scale if sdt is np.uint8 else 1.0, sdt)
            mn[:, :n_lines] = arr.T
            arr = mn
        scales_out = arr.reshape(-1)
    return out, scales_out, padded
