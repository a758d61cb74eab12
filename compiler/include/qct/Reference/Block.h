//===- Block.h - One block of the MX and FP8 1x128 formats -------*- C++
//-*-===//
//
// The block rules of the numerics contract (sections 3 and 4) on exact values:
// given the n values of one block (a full block, or the partial last block of
// a col row or ragged group), they choose the scale and the element codes.
// Layouts, padding and ragged placement live in Tensor.cpp; nothing here knows
// where a block came from.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_REFERENCE_BLOCK_H
#define QCT_REFERENCE_BLOCK_H

#include "qct/Reference/Scalar.h"

#include <cstdint>

namespace qct::ref {

/// Exponent of the largest normal element (emax_elem of the contract).
inline int emaxOf(const FloatFormat &F) { return F.emax; }

/// Largest finite value of a format, exact.
inline double maxValue(const FloatFormat &F) { return decode(F.maxCode, F); }

/// floor(log2(amax)) - emax_elem: the OCP `floor` exponent (amax > 0 finite).
int floorScaleExponent(double amax, const FloatFormat &F);

/// The smallest e with amax <= max_F * 2^e (amax > 0 finite): `rceil` and
/// `pow2` before clamping. Exact: compares the significand bits of amax with
/// those of max_F.
int ceilScaleExponent(double amax, const FloatFormat &F);

/// MX block (contract section 3). Writes n sign|magnitude codes of F (one per
/// byte, e2m1 in the low nibble) and returns the e8m0 scale byte.
uint8_t quantizeMxBlock(const double *x, int64_t n, const FloatFormat &F,
                        bool rceil, uint8_t *codes);

/// FP8 1x128 block, `amax` policy (section 4): s = fl32(amax / max_F),
/// q = round_F(fl32(x / s)). Returns s.
float quantizeFp8AmaxBlock(const double *x, int64_t n, const FloatFormat &F,
                           uint8_t *codes);

/// FP8 1x128 block, `pow2` policy: s = 2^clamp(ceil(log2(amax/max_F)),
/// -127, 127), q = round_F(x / s). Returns s.
float quantizeFp8Pow2Block(const double *x, int64_t n, const FloatFormat &F,
                           uint8_t *codes);

/// The `aligned` exponent: bmax - 127 + emax_src - emax_F, or 0 when every
/// covered source block has scale 0xFF (bmax < 0 here), clamped to the fp32
/// range [-149, 127] (only mxfp8_e5m2 -> e4m3 with bmax > 247 reaches the
/// clamp; see docs/numerics.md, Decisions).
int alignedScaleExponent(int bmax, const FloatFormat &src,
                         const FloatFormat &F);

/// FP8 1x128 block with the power-of-two scale s = 2^sExp fixed by the caller
/// (`aligned`): q = round_F(x / s), one rounding.
void quantizeFp8FixedBlock(const double *x, int64_t n, const FloatFormat &F,
                           int sExp, uint8_t *codes);

/// fl32(x / s) for an element: the double quotient rounded to fp32 when x
/// has at most 24 significant bits (then double rounding is innocuous:
/// 53 >= 2*24 + 2), else the exact integer division of divRoundF32.
double fp32Quotient(double x, double s);

} // namespace qct::ref

#endif // QCT_REFERENCE_BLOCK_H
