//===- qct/device/raster.cuh - The order in which CTAs take their tiles ---===//
//
// The hardware starts a grid's CTAs in linear order, x fastest. A dense tile
// kernel's x runs along M (128-token tiles) and y along K (feature spans), so
// the CTAs resident at once cover a few K spans across all of M: each source
// row is read a few hundred bytes at a time, rows kilobytes apart. Banding
// renumbers the CTAs so that the linear index walks `group` CTAs along M and
// then the next K span: the resident CTAs cover a band of tokens across all
// of K (rows read whole, each output row written in long runs). Group 0 is a
// band of one M tile: the linear index walks every K span of an M tile
// before the next, so the CTAs that write one L2 sector of a token row's
// row_major block scales (one 4-byte scale each, TILE_K 128) run back to
// back. Host-testable (tests/unit/device/ColPassTest.cpp, Raster.*).
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_RASTER_CUH
#define QCT_DEVICE_RASTER_CUH

#include "qct/device/codecs.cuh"

namespace qct {
namespace dev {

/// The tile (bx, by) that CTA (bx, by) of an nx x ny grid takes when the
/// grid is walked in bands of `group` columns of x: a bijection of the grid
/// (the last band may be narrower). Group 1 keeps the hardware order (one
/// band of all of x); group 0 is bands of one column, y fastest. 32-bit
/// (64-bit index math cost spills under the tile kernels' register caps): a
/// grid of 2^31 CTAs or more (M * K over ~2^45 elements) keeps the hardware
/// order.
QCT_HD void raster_band(int &bx, int &by, unsigned nx, unsigned ny,
                        int group) {
  if (group == 1 || group < 0 || (unsigned long long)nx * ny > 0x7FFFFFFFull)
    return;
  // Unsigned: every quantity is non-negative, and the signed divisions'
  // fix-ups were ~30 instructions per CTA.
  const unsigned g = group == 0 ? 1u : (unsigned)group;
  const unsigned lin = (unsigned)by * nx + (unsigned)bx;
  const unsigned first = lin / (g * ny) * g;
  const unsigned gm = nx - first < g ? nx - first : g;
  const unsigned l = lin - first * ny;
  bx = (int)(first + l % gm);
  by = (int)(l / gm);
}

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_RASTER_CUH
