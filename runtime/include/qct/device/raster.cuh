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
// back. Which K tiles a grid row takes is k_span's: K_TILES each, or with
// QCT_SPLIT_LAST_SPAN the last row's one per row. Host-testable
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

/// The K tiles of the CTAs in grid row `by` (along y): `count` tiles from
/// `first` (the kernel's K loop also stops at K). Rows of `k_tiles`
/// consecutive tiles of the kernel's `tiles`; with `split_last` the last
/// row's tiles take a row each, so that the launch drains on CTAs of one
/// tile: a ragged CTA of several tiles lives about twice as long as its dense
/// twin's CTAs, and as a launch drains, its slots idle for up to a CTA's
/// life (docs/device-library.md, QCT_SPLIT_LAST_SPAN). The grid then has
/// k_span_rows rows. Host-testable (tests/unit/device/ColPassTest.cpp).
struct KSpan {
  i64 first;
  int count;
};
QCT_HD KSpan k_span(int by, i64 tiles, int k_tiles, bool split_last) {
  const i64 full = (tiles + k_tiles - 1) / k_tiles - 1; // rows before the last
  if (split_last && full >= 0 && by >= full)
    return {full * k_tiles + (by - full), 1};
  return {(i64)by * k_tiles, k_tiles};
}

/// The grid rows along y that k_span covers `tiles` with: cdiv(tiles,
/// k_tiles), and with split_last one more per tile of the last row past its
/// first (Metadata.cpp's expression for the launch's grid y).
QCT_HD i64 k_span_rows(i64 tiles, int k_tiles, bool split_last) {
  const i64 rows = (tiles + k_tiles - 1) / k_tiles;
  if (!split_last || rows == 0)
    return rows;
  return rows + (tiles - (rows - 1) * k_tiles) - 1;
}

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_RASTER_CUH
