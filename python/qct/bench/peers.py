"""PyTorch peers: the numerics contract (docs/numerics.md) written in plain torch ops, the way a
user without qct would write it. Run eagerly (one kernel per op) and under torch.compile
(Inductor fuses them into Triton kernels). They must give qct's bytes: the benchmark compares them
bitwise with the kernel's output on the same input and reports any difference.

Every function takes the kernel's input tensors (bf16 values, or uint8 bytes for packed mxfp4 and
its e8m0 scales) and returns the kernel's output buffers by metadata name: fp8 data as uint8 bytes,
FP8 scales as float32 scale_inv, MX scales as uint8 e8m0 bytes.

Exactness, where torch alone would round differently:
- exponents come from the float bits (never a floating log2), and powers of two are built from
  bits (2^-127 .. 2^-149 are fp32 subnormals that exp2 would be trusted to produce exactly);
- every scaling is by a power of two, so it is exact wherever the result matters;
- torch's float -> float8_e4m3fn cast rounds to nearest even but turns overflow into NaN rather
  than saturating: inputs are clamped to ±448 first (only ±Inf sources reach it), and NaN codes are
  written from the source sign, since GPU arithmetic does not keep a NaN's sign.
"""

from __future__ import annotations

from typing import Any, Callable

from qct.bench import floor

Tensors = dict[str, Any]
Peer = Callable[..., Tensors]

E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
E4M3_MAX = 448.0
# mxfp4 -> e4m3 aligned: s = 2^(bmax - 133), so element j scales by 2^(b_j - 127) / s = 2^(6 - gap).
# A gap beyond 40 leaves every e2m1 value under 2^-30, far below e4m3's smallest half-subnormal
# (2^-10): clamping the gap there keeps the factor an fp32 normal and changes no code.
MAX_GAP = 40


def _torch() -> Any:
    import torch

    return torch


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def exp2_int(t: Any) -> Any:
    """2^t as exact float32 for an int32 tensor t in [-149, 127] (subnormals built from bits)."""
    torch = _torch()
    one = torch.ones_like(t)
    normal = torch.bitwise_left_shift(one, 23) * (t + 127).clamp(min=1)
    subnormal = torch.bitwise_left_shift(one, (t + 149).clamp(0, 22))
    return torch.where(t >= -126, normal, subnormal).view(torch.float32)


def floor_log2(a: Any) -> Any:
    """floor(log2(a)) as int32 for finite float32 a > 0, exactly, from the bits."""
    torch = _torch()
    field = (a.view(torch.int32) >> 23) & 0xFF
    # An fp32 subnormal times 2^64 is normal and exact; the product overflows only where unused.
    scaled = ((a * 18446744073709551616.0).view(torch.int32) >> 23) & 0xFF
    return torch.where(field == 0, scaled - 127 - 64, field - 127)


def _e2m1_code(v: Any) -> Any:
    """Round-to-nearest-even e2m1 magnitude code (0..7, saturating at 6) of |v| (v finite)."""
    torch = _torch()
    a = v.abs()
    # Ties go to the even code: 0.25 -> 0, 0.75 -> 1.0, 1.25 -> 1.0, 1.75 -> 2, 2.5 -> 2,
    # 3.5 -> 4, 5 -> 4; past 5 is 6 (saturated).
    code = (a > 0.25).to(torch.uint8)
    for threshold, inclusive in ((0.75, True), (1.25, False), (1.75, True), (2.5, False),
                                 (3.5, True), (5.0, False)):
        code += (a >= threshold if inclusive else a > threshold).to(torch.uint8)
    return code


def _sign_bits(x_bf16: Any) -> Any:
    torch = _torch()
    return (x_bf16.view(torch.int16) < 0).to(torch.uint8)


# --- bf16 -> mxfp4 row (floor) -------------------------------------------------------------------

def bf16_to_mxfp4_row(src: Any) -> Tensors:
    """numerics.md 3: 32-blocks along K, e = floor(log2 amax) - 2, e2m1 codes packed low nibble
    first; NaN/Inf blocks get scale 0xFF and code 0; zero blocks scale 0 and signed zeros."""
    torch = _torch()
    M, K = src.shape
    x = src.float().view(M, K // 32, 32)
    finite = torch.isfinite(x).all(-1)
    amax = x.abs().amax(-1)
    safe = torch.where(finite & (amax > 0), amax, torch.ones_like(amax))
    b = (floor_log2(safe) - 2 + 127).clamp(0, 254)
    b = torch.where(amax == 0, torch.zeros_like(b), b)
    v = x * exp2_int(127 - b).unsqueeze(-1)  # the exact quotient x / 2^(b-127)
    code = _e2m1_code(torch.where(finite.unsqueeze(-1), v, torch.zeros_like(v)))
    code = code | (_sign_bits(src).view(M, K // 32, 32) << 3)
    code = torch.where(finite.unsqueeze(-1), code, torch.zeros_like(code)).view(M, K)
    packed = code[:, 0::2] | (code[:, 1::2] << 4)
    scales = torch.where(finite, b, torch.full_like(b, 255)).to(torch.uint8)
    return {"y": packed.contiguous(), "y_scales": scales}


# --- bf16 -> fp8_e4m3 1x128 (pow2) ---------------------------------------------------------------

def _fp8_pow2_blocks(x: Any, sign: Any) -> tuple[Any, Any]:
    """x float32 [..., 128] (one FP8 block per last-axis row), sign uint8 of the source bits.
    numerics.md 4, pow2: amax ignores NaN and counts Inf as 448; s = 2^e, the smallest power of
    two with amax/s <= 448, e in [-127, 127]; elements round once; NaN keeps its sign."""
    torch = _torch()
    a = x.abs()
    a = torch.where(torch.isnan(a), torch.zeros_like(a), a)
    a = torch.where(torch.isinf(a), torch.full_like(a, E4M3_MAX), a)
    amax = a.amax(-1)
    bits = amax.view(torch.int32)
    field = (bits >> 23) & 0xFF
    # amax = 1.m * 2^(field-127) <= 1.75 * 2^(e+8) = 448 * 2^e: e = field-135, one more if m > .75.
    e = field - 135 + ((bits & 0x7FFFFF) > 0x600000).to(torch.int32)
    e = torch.where(field == 0, torch.full_like(e, -127), e).clamp(-127, 127)  # fp32 subnormal
    e = torch.where(amax == 0, torch.zeros_like(e), e)
    v = (x * exp2_int(-e).unsqueeze(-1)).clamp(-E4M3_MAX, E4M3_MAX)  # clamp: only ±Inf moves
    q = v.to(torch.float8_e4m3fn).view(torch.uint8)
    nan_code = (0x7F | (sign << 7)).to(torch.uint8)
    q = torch.where(torch.isnan(x), nan_code, q)
    return q, exp2_int(e)


def bf16_to_fp8_e4m3_row(src: Any) -> Tensors:
    torch = _torch()
    M, K = src.shape
    q, s = _fp8_pow2_blocks(src.float().view(M, K // 128, 128),
                            _sign_bits(src).view(M, K // 128, 128))
    return {"y": q.view(M, K), "y_scales": s}


def _fp8_pow2_col(src: Any) -> Tensors:
    """The transpose Y = Xᵀ [K, M] with 128-blocks along M; the last block may be partial (padding
    with zeros never changes an amax, and is cut off again)."""
    torch = _torch()
    M, K = src.shape
    Mp = _cdiv(M, 128) * 128
    xt = src.t()
    if Mp != M:
        xt = torch.nn.functional.pad(xt, (0, Mp - M))
    xt = xt.contiguous()
    q, s = _fp8_pow2_blocks(xt.float().view(K, Mp // 128, 128),
                            _sign_bits(xt).view(K, Mp // 128, 128))
    return {"yt": q.view(K, Mp)[:, :M].contiguous(), "yt_scales": s}


def bf16_to_fp8_e4m3_row_col(src: Any) -> Tensors:
    return {**bf16_to_fp8_e4m3_row(src), **_fp8_pow2_col(src)}


def bf16_to_mxfp4_row_fp8_col(src: Any) -> Tensors:
    return {**bf16_to_mxfp4_row(src), **_fp8_pow2_col(src)}


# --- mxfp4 -> fp8_e4m3 (aligned) -----------------------------------------------------------------

def _e2m1_values(src: Any, rows: int, K: int) -> tuple[Any, Any]:
    """Magnitudes (bf16: exact for e2m1) and sign flags of the unpacked codes, [rows, K]."""
    torch = _torch()
    codes = torch.stack((src & 0xF, src >> 4), dim=-1).view(rows, K)
    table = torch.tensor(E2M1_VALUES, dtype=torch.bfloat16, device=src.device)
    return table[(codes & 7).long()], codes >= 8


def _aligned_elements(mag: Any, negative: Any, factor: Any, nan_block: Any) -> Any:
    """round_e4m3(±mag · factor), NaN (0x7F) in source blocks with scale 0xFF. Every product is
    exact in bf16 (two significant bits times a power of two), so this is one rounding."""
    torch = _torch()
    v = mag * factor.to(torch.bfloat16)
    # The sign goes in as a bit after the cast, not as a negation before it: under torch.compile
    # (torch 2.11, H200) the negated zeros came out as +0 (0x00 where the contract has 0x80, 6% of
    # the bytes, every e2m1 code 8), while eager kept -0.
    q = v.float().to(torch.float8_e4m3fn).view(torch.uint8) | (negative.to(torch.uint8) << 7)
    return torch.where(nan_block, torch.full_like(q, 0x7F), q)


def _aligned_scale(bmax: Any) -> Any:
    """s = 2^(bmax - 133) (fp32 subnormal for bmax <= 6, kept exact); 1.0 where every covered
    source block is NaN (bmax = -1 here)."""
    torch = _torch()
    s = exp2_int(bmax.clamp(min=0) - 133)
    return torch.where(bmax < 0, torch.ones_like(s), s)


def mxfp4_to_fp8_e4m3_row(src: Any, src_scales: Any) -> Tensors:
    """numerics.md 4, aligned, 1x128 row blocks: bmax over the 4 source blocks of each FP8 block."""
    torch = _torch()
    M, K = src.shape[0], src.shape[1] * 2
    mag, negative = _e2m1_values(src, M, K)
    sc = src_scales.to(torch.int32).view(M, K // 128, 4)
    valid = sc != 255
    bmax = torch.where(valid, sc, torch.full_like(sc, -1)).amax(-1)
    gap = (bmax.unsqueeze(-1) - sc).clamp(0, MAX_GAP)
    factor = exp2_int(6 - gap).view(M, K // 32, 1)
    q = _aligned_elements(mag.view(M, K // 32, 32), negative.view(M, K // 32, 32), factor,
                          (~valid).view(M, K // 32, 1))
    return {"y": q.view(M, K), "y_scales": _aligned_scale(bmax)}


def mxfp4_to_fp8_e4m3_col(src: Any, src_scales: Any) -> Tensors:
    """numerics.md 4-5, aligned, 128x1 column blocks of the transpose: bmax over one source block
    from each of 128 rows; decode, scale and round in [M, K], then transpose the bytes."""
    torch = _torch()
    M, K = src.shape[0], src.shape[1] * 2
    Mp = _cdiv(M, 128) * 128
    if Mp != M:  # padding rows: scale 0xFF is ignored by bmax, and the rows are cut off again
        src = torch.nn.functional.pad(src, (0, 0, 0, Mp - M))
        src_scales = torch.nn.functional.pad(src_scales, (0, 0, 0, Mp - M), value=255)
    mag, negative = _e2m1_values(src, Mp, K)
    sc = src_scales.to(torch.int32).view(Mp // 128, 128, K // 32)
    valid = sc != 255
    bmax = torch.where(valid, sc, torch.full_like(sc, -1)).amax(1)        # [Mp/128, K/32]
    gap = (bmax.unsqueeze(1) - sc).clamp(0, MAX_GAP)
    factor = exp2_int(6 - gap).view(Mp, K // 32, 1)
    q = _aligned_elements(mag.view(Mp, K // 32, 32), negative.view(Mp, K // 32, 32), factor,
                          (~valid).view(Mp, K // 32, 1)).view(Mp, K)
    scales = _aligned_scale(bmax).repeat_interleave(32, dim=1).t()        # [K, Mp/128]
    return {"y": q.t()[:, :M].contiguous(), "y_scales": scales.contiguous()}


# --- mxfp4 -> fp8_e4m3 col (aligned) per ragged group, groups padded to 128 ---------------------

def mxfp4_to_fp8_e4m3_col_ragged(src: Any, src_scales: Any, offsets: Any) -> Tensors:
    """numerics.md 6 with pad_groups_to 128 and padded offsets written: token t of group g lands
    in column p[g] + (t − o[g]), p[g] = Σ_{h<g} ceil(n_h/128)·128, so every 128-block holds one
    group's tokens. The source rows are scattered to their columns (absent columns get scale
    0xFF, which bmax ignores), the dense col peer runs on that, absent columns become 0, and the
    capacity layout (docs/kernel-abi.md) follows: C = rup(M + G·127, 128) data columns, C/128 + G
    scale columns, 1.0 wherever no group owns the block. The bundled spec leaves the capacity tail
    untouched, so the benchmark compares the columns before it (floor.written_prefixes)."""
    torch = _torch()
    M, K = src.shape[0], src.shape[1] * 2
    G = offsets.shape[0] - 1
    o = offsets.long()
    sizes = o[1:] - o[:-1]
    p = torch.cat((torch.zeros(1, dtype=torch.long, device=o.device),
                   torch.cumsum((sizes + 127) // 128 * 128, 0)))
    C = floor.ragged_capacity(M, G, 128)  # a whole number of 128-column blocks
    t = torch.arange(M, device=o.device)
    group = torch.searchsorted(o, t, right=True) - 1  # the last g with o[g] <= t: never empty
    column = p[group] + (t - o[group])
    rows = torch.zeros((C, K // 2), dtype=src.dtype, device=src.device)
    rows[column] = src
    row_scales = torch.full((C, K // 32), 255, dtype=src_scales.dtype, device=src.device)
    row_scales[column] = src_scales
    dense = mxfp4_to_fp8_e4m3_col(rows, row_scales)
    present = torch.zeros(C, dtype=torch.bool, device=src.device)
    present[column] = True
    y = torch.where(present, dense["y"], torch.zeros_like(dense["y"]))
    scales = torch.cat((dense["y_scales"],
                        torch.ones((K, G), dtype=torch.float32, device=src.device)), dim=1)
    return {"y": y.contiguous(), "y_scales": scales.contiguous(),
            "padded_offsets": p.to(offsets.dtype)}


# --- GEMM-ready (mn_major) scales -----------------------------------------------------------------

def _mn_major(scales: Any) -> Any:
    """row_major block scales [R, S] (R output rows: features of a col output, tokens of a row
    output) as mn_major (numerics.md 5): [S, rup(R,4)], the padding rows' entries 1.0."""
    torch = _torch()
    R = scales.shape[0]
    pad = _cdiv(R, 4) * 4 - R
    t = scales.t()
    if pad:
        t = torch.cat((t, torch.ones((t.shape[0], pad), dtype=t.dtype, device=t.device)), dim=1)
    return t.contiguous()


def mxfp4_to_fp8_e4m3_col_mn(src: Any, src_scales: Any) -> Tensors:
    out = mxfp4_to_fp8_e4m3_col(src, src_scales)
    return {"y": out["y"], "y_scales": _mn_major(out["y_scales"])}


def mxfp4_to_fp8_e4m3_col_ragged_mn(src: Any, src_scales: Any, offsets: Any) -> Tensors:
    out = mxfp4_to_fp8_e4m3_col_ragged(src, src_scales, offsets)
    return {**out, "y_scales": _mn_major(out["y_scales"])}


def bf16_to_fp8_e4m3_row_col_mn(src: Any) -> Tensors:
    out = bf16_to_fp8_e4m3_row_col(src)
    return {**out, "y_scales": _mn_major(out["y_scales"]),
            "yt_scales": _mn_major(out["yt_scales"])}


def bf16_to_mxfp4_row_fp8_col_mn(src: Any) -> Tensors:
    out = bf16_to_mxfp4_row_fp8_col(src)
    return {**out, "yt_scales": _mn_major(out["yt_scales"])}


# --- mxfp4 -> bf16 row (decode) and the unfused mxfp4 -> bf16 -> fp8 row ---------------------------

BF16_NAN = 0x7FFF  # the reference's bf16 NaN (numerics.md 1: the format's NaN, no sign)


def mxfp4_to_bf16_row(src: Any, src_scales: Any) -> Tensors:
    """numerics.md 3 decoded into bf16: e2m1 · 2^(b−127) is exact in bf16 up to 1.5 · 2^127;
    2^128 and above (b = 254 with |e2m1| ≥ 2) round to Inf, as IEEE rounding does and the
    reference's decode into bf16 has it; a block with scale 0xFF is NaN."""
    torch = _torch()
    M, K = src.shape[0], src.shape[1] * 2
    mag, negative = _e2m1_values(src, M, K)
    b = src_scales.to(torch.int32).view(M, K // 32, 1)
    # Exact in fp32 but for 2^128 and up, which overflows to the same Inf.
    v = (mag.float().view(M, K // 32, 32) * exp2_int((b - 127).clamp(-127, 127)))
    v = v.to(torch.bfloat16).view(torch.int16).view(M, K)
    v = v | (negative.to(torch.int16) << 15)
    nan_block = (b == 255).expand(M, K // 32, 32).reshape(M, K)
    v = torch.where(nan_block, torch.full_like(v, BF16_NAN), v)
    return {"y": v.view(torch.bfloat16)}


def mxfp4_to_fp8_e4m3_row_unfused(src: Any, src_scales: Any) -> Tensors:
    """numerics.md 7, `fuse: false`: decode to bf16 values, then the bf16 → fp8 pow2 row kernel."""
    return bf16_to_fp8_e4m3_row(mxfp4_to_bf16_row(src, src_scales)["y"])


# --- fp8_e4m3 1x128 -> mxfp4 row (floor) -----------------------------------------------------------

def fp8_e4m3_to_mxfp4_row(src: Any, src_scales: Any) -> Tensors:
    """numerics.md 3 on the exact decoded values element · scale_inv (float64 holds every product
    of a 4-bit and a 24-bit significand); a NaN scale, 0 · Inf and NaN elements are NaN."""
    torch = _torch()
    M, K = src.shape
    elem = src.view(torch.uint8).view(torch.float8_e4m3fn).double().view(M, K // 128, 128)
    scale = src_scales.double().view(M, K // 128, 1)
    x = elem * scale
    x = torch.where(torch.isnan(scale) | ((elem == 0) & torch.isinf(scale)),
                    torch.full_like(x, float("nan")), x).view(M, K // 32, 32)
    finite = torch.isfinite(x).all(-1)
    amax = x.abs().amax(-1)
    safe = torch.where(finite & (amax > 0), amax, torch.ones_like(amax))
    # floor(log2 a) from the double's exponent field: every product here (2^-158 .. 2^137) is a
    # normal double. Not torch.frexp: Inductor does not compile it (torch 2.11, CPU and CUDA).
    floor_log2_a = ((safe.view(torch.int64) >> 52) & 0x7FF).to(torch.int32) - 1023
    b = (floor_log2_a - 2 + 127).clamp(0, 254)
    b = torch.where(amax == 0, torch.zeros_like(b), b)
    # The exact quotient. Not torch.ldexp: on CUDA it multiplies by an inexact power of two
    # (7168 · 2^-12 came out below 1.75 on the H200, 1% of the codes off by one).
    v = x * exp2_int((127 - b).to(torch.int32)).double().unsqueeze(-1)
    code = _e2m1_code(torch.where(finite.unsqueeze(-1), v, torch.zeros_like(v)))
    code = code | (torch.signbit(x).to(torch.uint8) << 3)
    code = torch.where(finite.unsqueeze(-1), code, torch.zeros_like(code)).view(M, K)
    packed = code[:, 0::2] | (code[:, 1::2] << 4)
    scales = torch.where(finite, b, torch.full_like(b, 255)).to(torch.uint8)
    return {"y": packed.contiguous(), "y_scales": scales}


# --- Which peer implements which generated kernel --------------------------------------------------

# Kernel name -> (peer, the spec fields it implements). A peer is used only when the kernel's spec
# matches, so a changed spec never gets compared with a stale peer.
PEERS: dict[str, tuple[Peer, dict[str, Any]]] = {
    "bf16_to_mxfp4_row": (bf16_to_mxfp4_row, {"source": "bf16", "outputs": [
        ("mxfp4", "row", "floor", "row_major")]}),
    "bf16_to_fp8_e4m3_row": (bf16_to_fp8_e4m3_row, {"source": "bf16", "outputs": [
        ("fp8_e4m3", "row", "pow2", "row_major")]}),
    "bf16_to_fp8_e4m3_row_col": (bf16_to_fp8_e4m3_row_col, {"source": "bf16", "outputs": [
        ("fp8_e4m3", "row", "pow2", "row_major"), ("fp8_e4m3", "col", "pow2", "row_major")]}),
    "bf16_to_mxfp4_row_fp8_col": (bf16_to_mxfp4_row_fp8_col, {"source": "bf16", "outputs": [
        ("mxfp4", "row", "floor", "row_major"), ("fp8_e4m3", "col", "pow2", "row_major")]}),
    "mxfp4_to_fp8_e4m3_row": (mxfp4_to_fp8_e4m3_row, {"source": "mxfp4", "outputs": [
        ("fp8_e4m3", "row", "aligned", "row_major")]}),
    "mxfp4_to_fp8_e4m3_col": (mxfp4_to_fp8_e4m3_col, {"source": "mxfp4", "outputs": [
        ("fp8_e4m3", "col", "aligned", "row_major")]}),
    "mxfp4_to_bf16_row": (mxfp4_to_bf16_row, {"source": "mxfp4", "outputs": [
        ("bf16", "row", "none", "row_major")]}),
    "mxfp4_to_fp8_e4m3_row_unfused": (mxfp4_to_fp8_e4m3_row_unfused, {
        "source": "mxfp4", "fuse": False, "outputs": [("fp8_e4m3", "row", "pow2", "row_major")]}),
    "fp8_e4m3_to_mxfp4_row": (fp8_e4m3_to_mxfp4_row, {"source": "fp8_e4m3", "outputs": [
        ("mxfp4", "row", "floor", "row_major")]}),
    "mxfp4_to_fp8_e4m3_col_ragged": (mxfp4_to_fp8_e4m3_col_ragged, {
        "source": "mxfp4", "ragged": ("int32", 128, True, "untouched"),
        "outputs": [("fp8_e4m3", "col", "aligned", "row_major")]}),
    "mxfp4_to_fp8_e4m3_col_mn": (mxfp4_to_fp8_e4m3_col_mn, {"source": "mxfp4", "outputs": [
        ("fp8_e4m3", "col", "aligned", "mn_major")]}),
    "mxfp4_to_fp8_e4m3_col_ragged_mn": (mxfp4_to_fp8_e4m3_col_ragged_mn, {
        "source": "mxfp4", "ragged": ("int32", 128, True, "untouched"),
        "outputs": [("fp8_e4m3", "col", "aligned", "mn_major")]}),
    "bf16_to_fp8_e4m3_row_col_mn": (bf16_to_fp8_e4m3_row_col_mn, {"source": "bf16", "outputs": [
        ("fp8_e4m3", "row", "pow2", "mn_major"), ("fp8_e4m3", "col", "pow2", "mn_major")]}),
    "bf16_to_mxfp4_row_fp8_col_mn": (bf16_to_mxfp4_row_fp8_col_mn, {"source": "bf16", "outputs": [
        ("mxfp4", "row", "floor", "row_major"), ("fp8_e4m3", "col", "pow2", "mn_major")]}),
}


def spec_summary(spec: dict[str, Any]) -> dict[str, Any]:
    """What a peer must match: source format, outputs, and `fuse` where it is false (an unfused
    spec rounds through bf16, a different function)."""
    summary: dict[str, Any] = {
        "source": spec["source"]["format"],
        "outputs": [(o["format"], o["layout"], o.get("scale") or "none",
                     o.get("scale_layout") or "row_major") for o in spec["outputs"]]}
    if spec.get("fuse", True) is False:
        summary["fuse"] = False
    ragged = spec.get("ragged")
    if ragged is not None:
        summary["ragged"] = (ragged.get("offsets_dtype", "int32"), ragged.get("pad_groups_to", 1),
                             bool(ragged.get("write_padded_offsets", False)),
                             ragged.get("capacity_tail", "zero"))
    return summary


def peer_for(meta: dict[str, Any]) -> Peer | None:
    """The peer of a generated kernel, if one implements exactly its spec."""
    entry = PEERS.get(meta["name"])
    spec = meta["spec"]
    if entry is None or (spec.get("static") or {}).get("K"):
        return None
    peer, implements = entry
    return peer if spec_summary(spec) == implements else None


def peer_inputs(meta: dict[str, Any], tensors: Tensors) -> Tensors:
    """The kernel's input tensors a peer takes, by the peer's argument names."""
    names = [b["name"] for b in meta["buffers"] if b["dir"] == "in"]
    return {name: tensors[name] for name in names}
