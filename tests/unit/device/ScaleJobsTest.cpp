//===- ScaleJobsTest.cpp - Which scales the scale jobs write, on the CPU --===//
//
// The scale jobs (runtime/include/qct/device/scale_jobs.cuh) split a kernel's
// row_major 1x128 col scales among CTAs by arithmetic alone; a gap or an
// overlap would be a wrong or a racy scale that only some shapes show. These
// tests hold that arithmetic over every stride residue:
//  - the windows of 32 scales that the jobs write in a scale row cover the
//    columns below tile_end exactly once, each starting on an L2 sector
//    boundary where there is a lead, and reach back no further than the lead
//    tiles a job reduces;
//  - a kernel has no more jobs along the tiles than the grid has CTAs;
//  - the ragged lookup's collection of a job's tiles (collect_job_tiles)
//    gives every tile the tokens tile_kernel_body gives it, and leaves tiles
//    no group holds without tokens.
//
//===----------------------------------------------------------------------===//

#include "qct/device/scale_jobs.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace dev = qct::dev;
using i64 = long long;

namespace {

// Every scale column below tileEnd of rows 0..15 (every residue of
// row * stride mod 8, twice) is written by exactly one job, from the
// window's first tile on, within the tiles the job reduces.
void expectWindowsCoverOnce(i64 tiles, i64 stride, i64 tileEnd) {
  const i64 jobs = dev::scale_jobs_along(tiles, stride);
  ASSERT_LE(jobs, std::max<i64>(tiles, 1)) << "a job without a CTA";
  for (i64 row = 0; row < 16; ++row) {
    std::vector<int> writes(tileEnd, 0);
    for (i64 j = 0; j < jobs; ++j) {
      const i64 tile0 = 32 * j;
      const int back = dev::job_window_back(row, stride);
      ASSERT_GE(back, 0);
      ASSERT_LT(back, dev::kJobLead);
      if (!dev::jobs_lead(stride))
        ASSERT_EQ(back, 0) << "stride " << stride;
      const i64 first = tile0 - back;
      if (dev::jobs_lead(stride))
        EXPECT_EQ((row * stride + first) % 8, 0)
            << "row " << row << " stride " << stride << ": not a sector";
      for (int lane = 0; lane < 32; ++lane) {
        const i64 t = first + lane;
        if (t >= 0 && t < tileEnd)
          ++writes[t];
      }
    }
    for (i64 t = 0; t < tileEnd; ++t)
      ASSERT_EQ(writes[t], 1)
          << "tiles " << tiles << " stride " << stride << " tile_end "
          << tileEnd << " row " << row << " tile " << t;
  }
}

TEST(ScaleJobs, DenseWindowsCoverEveryScaleOnce) {
  // Dense: the stride is the tile count, and every tile is written.
  for (i64 tiles = 1; tiles <= 300; ++tiles)
    expectWindowsCoverOnce(tiles, tiles, tiles);
  expectWindowsCoverOnce(1024, 1024, 1024);
}

TEST(ScaleJobs, RaggedWindowsCoverEveryGroupScaleOnce) {
  // Ragged: the grid's tiles cdiv(C, 128), the stride those plus G, and the
  // groups' own tiles t[G] <= the grid's written (the tail is untouched).
  for (i64 groups : {1, 3, 8, 32, 256})
    for (i64 tiles = 1; tiles <= 200; ++tiles)
      for (i64 tileEnd : {tiles, tiles - 1, tiles / 2, tiles * 5 / 6, i64(0)})
        if (tileEnd >= 0)
          expectWindowsCoverOnce(tiles, tiles + groups, tileEnd);
  // The bench's 256-group shape: stride 766.
  expectWindowsCoverOnce(510, 766, 426);
}

TEST(ScaleJobs, JobCountPerFeatureSpan) {
  EXPECT_EQ(dev::scale_jobs(256, 7168, 256), 8 * 7);  // M = 32768, aligned
  EXPECT_EQ(dev::scale_jobs(288, 7168, 320), 9 * 7);  // 32 groups
  EXPECT_EQ(dev::scale_jobs(510, 7168, 766), 17 * 7); // 256 groups: + lead
  EXPECT_EQ(dev::scale_jobs(33, 1056, 33), 2 * 2);    // partial along K
}

// A group layout (tokens per group, padded to P) and, per tile, the tokens
// tile_kernel_body gives it: tile i of a group starts at its first token +
// 128 i and holds up to 128 of what is left.
struct Layout {
  std::vector<i64> first, count, firstTile, tiles;
  std::vector<dev::TileTokens> byTile;
};

Layout makeLayout(const std::vector<i64> &sizes, i64 pad) {
  Layout l;
  i64 token = 0, tile = 0;
  for (i64 n : sizes) {
    const i64 np = n > 0 ? (n + pad - 1) / pad * pad : 0;
    const i64 nt = (np + 127) / 128;
    l.first.push_back(token);
    l.count.push_back(n);
    l.firstTile.push_back(tile);
    l.tiles.push_back(nt);
    for (i64 i = 0; i < nt; ++i) {
      const i64 left = n - 128 * i;
      l.byTile.push_back({token + 128 * i, (int)std::clamp<i64>(left, 0, 128)});
    }
    token += n;
    tile += nt;
  }
  return l;
}

TEST(ScaleJobs, CollectedTilesMatchTheTilesOwnTokens) {
  constexpr int N = dev::kJobLead + 32;
  std::mt19937 rng(7);
  for (i64 pad : {128, 256, 32}) {
    for (int trial = 0; trial < 200; ++trial) {
      const int groups = 1 + (int)(rng() % 40);
      std::vector<i64> sizes(groups);
      for (i64 &n : sizes) {
        const unsigned r = rng() % 10;
        n = r < 2 ? 0 : (r < 4 ? 1 + rng() % 5 : rng() % 700);
      }
      const Layout l = makeLayout(sizes, pad);
      const i64 total = (i64)l.byTile.size();
      for (i64 first = -dev::kJobLead; first < total + 8; first += 5) {
        std::vector<dev::TileTokens> got(N, dev::TileTokens{0, 0});
        for (int g = 0; g < groups; ++g)
          dev::collect_job_tiles<N>(got.data(), first, l.first[g], l.count[g],
                                    l.firstTile[g], l.tiles[g]);
        for (int i = 0; i < N; ++i) {
          const i64 t = first + i;
          const dev::TileTokens want =
              t >= 0 && t < total ? l.byTile[t] : dev::TileTokens{0, 0};
          ASSERT_EQ(got[i].nt, want.nt) << "pad " << pad << " tile " << t;
          if (want.nt > 0)
            ASSERT_EQ(got[i].t0, want.t0) << "pad " << pad << " tile " << t;
        }
      }
    }
  }
}

} // namespace
