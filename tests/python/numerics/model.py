"""A second, independent model of the numerics contract (docs/numerics.md), for checking the C++
reference. Written from the contract's text with exact rationals (fractions.Fraction) and plain
loops: no bit tricks, no code shared with compiler/lib/Reference. Slow; use small tensors.

A value is a `V`: sign, kind ('fin' | 'inf' | 'nan') and, for finite values, an exact magnitude.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Sequence

import numpy as np


@dataclass(frozen=True)
class V:
    neg: bool
    kind: str  # 'fin', 'inf', 'nan'
    mag: Fraction = Fraction(0)

    @staticmethod
    def of(x: Fraction) -> "V":
        return V(x < 0, "fin", abs(x))

    def is_finite(self) -> bool:
        return self.kind == "fin"


POS_NAN = V(False, "nan")


@dataclass(frozen=True)
class Fmt:
    name: str
    ebits: int
    mbits: int
    bias: int
    max: Fraction   # largest finite magnitude, from the contract's table
    ieee: bool      # overflow to Inf, has Inf/NaN encodings by IEEE rules

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def emax(self) -> int:
        # exponent of the largest normal: that of max
        return floor_log2(self.max)


E2M1 = Fmt("e2m1", 2, 1, 1, Fraction(6), False)
E4M3 = Fmt("e4m3", 4, 3, 7, Fraction(448), False)
E5M2 = Fmt("e5m2", 5, 2, 15, Fraction(57344), False)
BF16 = Fmt("bf16", 8, 7, 127, Fraction((2 ** 8 - 1) * 2 ** (127 - 7)), True)
FP16 = Fmt("fp16", 5, 10, 15, Fraction(65504), True)
FP32 = Fmt("fp32", 8, 23, 127, Fraction((2 ** 24 - 1) * 2 ** (127 - 23)), True)


def floor_log2(x: Fraction) -> int:
    """floor(log2(x)) for x > 0, exactly (integer comparisons of numerator and denominator)."""
    p, q = x.numerator, x.denominator
    e = p.bit_length() - q.bit_length()
    # now 2^(e-1) < p/q < 2^(e+1); decide whether p/q >= 2^e
    if (p << max(0, -e)) < (q << max(0, e)):
        e -= 1
    return e


def pow2(e: int) -> Fraction:
    return Fraction(2) ** e


# ---- decoding -------------------------------------------------------------------------------

def decode_code(fmt: Fmt, code: int) -> V:
    """The value a code stands for, from the sign/exponent/mantissa fields."""
    sign = (code >> (fmt.ebits + fmt.mbits)) & 1
    field = (code >> fmt.mbits) & ((1 << fmt.ebits) - 1)
    man = code & ((1 << fmt.mbits) - 1)
    all_ones = (1 << fmt.ebits) - 1
    if fmt.ieee and field == all_ones:
        return V(bool(sign), "inf" if man == 0 else "nan")
    if fmt.name == "e4m3" and field == all_ones and man == (1 << fmt.mbits) - 1:
        return V(bool(sign), "nan")
    if fmt.name == "e5m2" and field == all_ones:
        return V(bool(sign), "inf" if man == 0 else "nan")
    if field == 0:
        mag = Fraction(man, 1 << fmt.mbits) * pow2(fmt.emin)
    else:
        mag = (1 + Fraction(man, 1 << fmt.mbits)) * pow2(field - fmt.bias)
    return V(bool(sign), "fin", mag)


def e8m0(b: int) -> Optional[Fraction]:
    return None if b == 0xFF else pow2(b - 127)


# ---- rounding ---------------------------------------------------------------------------------

_CODE_OF: dict = {}


def _code_table(fmt: Fmt) -> dict:
    if fmt.name not in _CODE_OF:
        table = {}
        width = 1 + fmt.ebits + fmt.mbits
        for c in range(1 << (width - 1)):  # positive codes
            v = decode_code(fmt, c)
            if v.kind == "fin":
                table[v.mag] = c
        _CODE_OF[fmt.name] = table
    return _CODE_OF[fmt.name]


def round_mag(fmt: Fmt, a: Fraction) -> Optional[Fraction]:
    """a >= 0 rounded to nearest-even on fmt's grid (unbounded exponent); None beyond max."""
    if a == 0:
        return Fraction(0)
    t = max(floor_log2(a), fmt.emin) - fmt.mbits  # the quantum is 2^t
    num, den = a.numerator, a.denominator
    if t >= 0:
        den <<= t
    else:
        num <<= -t
    n, r = divmod(num, den)  # a / 2^t = n + r / den
    if 2 * r > den or (2 * r == den and n % 2 == 1):
        n += 1
    res = Fraction(n << t) if t >= 0 else Fraction(n, 1 << -t)
    return None if res > fmt.max else res


def encode(fmt: Fmt, v: V) -> int:
    """round_F(v) of the contract: satfinite for e2m1/e4m3/e5m2, IEEE for bf16/fp16/fp32."""
    width = 1 + fmt.ebits + fmt.mbits
    sign = (1 << (width - 1)) if v.neg else 0
    if fmt.ieee:
        if v.kind == "nan":
            return {16: 0x7FFF, 32: 0x7FFFFFFF}[width]  # the canonical NaN (Decisions)
        if v.kind == "inf":
            return sign | _ieee_inf(fmt)
        r = round_mag(fmt, v.mag)
        if r is None:
            return sign | _ieee_inf(fmt)
        return sign | _ieee_bits(fmt, r)
    if v.kind == "nan":
        return 0 if fmt.name == "e2m1" else (0x7F | sign)
    if v.kind == "inf":
        return sign | _code_table(fmt)[fmt.max]
    r = round_mag(fmt, v.mag)
    if r is None:
        r = fmt.max
    return sign | _code_table(fmt)[r]


def _ieee_inf(fmt: Fmt) -> int:
    return ((1 << fmt.ebits) - 1) << fmt.mbits


def _ieee_bits(fmt: Fmt, mag: Fraction) -> int:
    f = float(mag)  # exact: mag is on fmt's grid, which is inside float64's
    if fmt.name == "fp32":
        return struct.unpack("<I", struct.pack("<f", f))[0]
    if fmt.name == "bf16":
        return struct.unpack("<I", struct.pack("<f", f))[0] >> 16
    return int(np.array([f], np.float16).view(np.uint16)[0])


def value_of(fmt: Fmt, code: int) -> V:
    return decode_code(fmt, code)


def fl32(x: Fraction) -> Fraction:
    """IEEE fp32 rounding of an exact positive-or-zero rational (overflow -> None)."""
    r = round_mag(FP32, abs(x))
    if r is None:
        return None
    return -r if x < 0 else r


# ---- blocks -----------------------------------------------------------------------------------

EMAX = {"e2m1": 2, "e4m3": 8, "e5m2": 15}


def mx_block(xs: Sequence[V], elem: Fmt, rounding: str) -> tuple[int, list[int]]:
    """Contract section 3: (e8m0 byte, element codes)."""
    if any(not x.is_finite() for x in xs):
        return 0xFF, [0] * len(xs)
    amax = max(x.mag for x in xs)
    if amax == 0:
        return 0, [encode(elem, x) for x in xs]
    if rounding == "floor":
        e = floor_log2(amax) - EMAX[elem.name]
    else:  # rceil: the smallest e with amax <= max_elem * 2^e
        e = floor_log2(amax) - EMAX[elem.name] - 1
        while amax > elem.max * pow2(e):
            e += 1
    b = min(max(e + 127, 0), 254)
    s = pow2(b - 127)
    return b, [encode(elem, V(x.neg, "fin", x.mag / s)) for x in xs]


def fp8_block(xs: Sequence[V], elem: Fmt, policy: str,
              src_scale_bytes: Sequence[int] = (), src_elem: Optional[Fmt] = None
              ) -> tuple[Fraction, list[int]]:
    """Contract section 4: (scale_inv s, element codes)."""
    def amax_of() -> Fraction:
        m = Fraction(0)
        for x in xs:
            if x.kind == "nan":
                continue
            m = max(m, elem.max if x.kind == "inf" else x.mag)
        return m

    if policy == "amax":
        amax = amax_of()
        s = fl32(amax / elem.max) if amax else Fraction(0)
        if s is None:
            s = FP32.max  # beyond fp32 (Decisions)
        if s == 0:
            s = Fraction(1)
        codes = []
        for x in xs:
            if x.kind != "fin":
                codes.append(encode(elem, x))
                continue
            q = fl32(x.mag / s)
            codes.append(encode(elem, V(x.neg, "inf") if q is None else V(x.neg, "fin", q)))
        return s, codes
    if policy == "pow2":
        amax = amax_of()
        e = 0
        if amax:
            e = -200
            while amax > elem.max * pow2(e):
                e += 1
            e = min(max(e, -127), 127)
        s = pow2(e)
    else:  # aligned: from the source scale bytes only
        good = [b for b in src_scale_bytes if b != 0xFF]
        if good:
            e = max(good) - 127 + EMAX[src_elem.name] - EMAX[elem.name]
            s = pow2(min(max(e, -149), 127))
        else:
            s = Fraction(1)
    codes = [encode(elem, x if x.kind != "fin" else V(x.neg, "fin", x.mag / s)) for x in xs]
    return s, codes
