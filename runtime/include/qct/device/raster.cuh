//===- qct/device/raster.cuh - The order in which CTAs take their tiles ---===//
//
// The hardware starts a grid's CTAs in linear order, x fastest. A dense tile
// kernel's x runs along M (128-token tiles) and y along K (feature spans), so
// the CTAs resident at once cover a few K spans across all of M: each source
// row is read a few hundred bytes at a time, rows kilobytes apart. Banding
// renumbers the CTAs so that the linear index walks `group` CTAs along M and
// then the next K span: the resident CTAs cover a band of tokens across all
// of K (rows read whole, each output row written in long runs). Host-testable
// (tests/unit/device/ColPassTest.cpp, Raster.*).
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_RASTER_CUH
#define QCT_DEVICE_RASTER_CUH

#include "qct/device/codecs.cuh"

namespace qct {
namespace dev {

/// The tile (bx, by) that CTA (bx, by) of an nx x ny grid takes when the
/// grid is walked in bands of `group` columns of x: a bijection of the grid
/// (the last band may be narrower). 32-bit (64-bit index math cost spills
/// under the tile kernels' register caps): a grid of 2^31 CTAs or more
/// (M * K over ~2^45 elements) keeps the hardware order.
QCT_HD void raster_band(int &bx, int &by, unsigned nx, unsigned ny,
                        int group) {
  if (group <= 1 || (unsigned long long)nx * ny > 0x7FFFFFFFull)
    return;
  const int lin = by * (int)nx + bx;
  const int first = lin / (group * (int)ny) * group;
  const int gm = (int)nx - first < group ? (int)nx - first : group;
  const int l = lin - first * (int)ny;
  bx = first + l % gm;
  by = l / gm;
}

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_RASTER_CUH
