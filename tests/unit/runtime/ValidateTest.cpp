//===- ValidateTest.cpp - Launch arguments checked against metadata
//--------===//
//
// Validation runs before any driver call, so these run without a GPU; the
// pointers are fake (never dereferenced).
//
//===----------------------------------------------------------------------===//
#include "TestKernel.h"

#include "qct/runtime/Error.h"
#include "qct/runtime/Metadata.h"
#include "qct/runtime/Validate.h"

#include <gtest/gtest.h>

using namespace qct::rt;
using qct::test::tinyMetadata;

namespace {
void *fakePtr(std::uintptr_t offset = 0) {
  return reinterpret_cast<void *>(std::uintptr_t(0x7f0000000000ull) + offset);
}

qct_tensor t(qct_dtype dtype, std::vector<std::int64_t> shape,
             std::uintptr_t addr = 0, std::vector<std::int64_t> strides = {}) {
  static std::uintptr_t next = 0;
  qct_tensor x{};
  x.data = fakePtr(addr ? addr : (next += 1 << 20));
  x.dtype = dtype;
  x.ndim = int(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    x.shape[i] = shape[i];
  for (size_t i = 0; i < strides.size(); ++i)
    x.strides[i] = strides[i];
  return x;
}

struct Fixture : ::testing::Test {
  KernelMeta meta = parseMetadata(tinyMetadata(), {});
  // M = 1000, K = 64, G = 4.
  std::vector<qct_tensor> good() {
    return {t(QCT_DTYPE_U8, {1000, 64}), t(QCT_DTYPE_I32, {5}),
            t(QCT_DTYPE_U8, {64, 1000})};
  }
  // The validation error message ("" if it passed).
  std::string error(const std::vector<qct_tensor> &ts) {
    qct_launch_plan plan;
    qct_kernel_args args;
    try {
      validateLaunch(meta, ts.data(), ts.size(), plan, args);
    } catch (const RuntimeError &e) {
      EXPECT_EQ(e.status, QCT_ERR_VALIDATION);
      return e.what();
    }
    return "";
  }
};

#define EXPECT_HAS(text, part)                                                 \
  EXPECT_NE((text).find(part), std::string::npos) << (text)
} // namespace

TEST_F(Fixture, GoodArgumentsFillArgsAndPlan) {
  auto ts = good();
  qct_launch_plan plan;
  qct_kernel_args args;
  validateLaunch(meta, ts.data(), ts.size(), plan, args);
  EXPECT_EQ(plan.M, 1000);
  EXPECT_EQ(plan.K, 64);
  EXPECT_EQ(plan.G, 4);
  EXPECT_EQ(plan.grid[0], 250u); // cdiv(64000, 256)
  EXPECT_EQ(plan.block[0], 256u);
  EXPECT_EQ(plan.dynamic_smem_bytes, 0u);
  EXPECT_EQ(args.src, ts[0].data);
  EXPECT_EQ(args.offsets, ts[1].data);
  EXPECT_EQ(args.out[0], ts[2].data);
  EXPECT_EQ(args.out[1], nullptr);
  EXPECT_EQ(args.error_flag, nullptr);
  EXPECT_EQ(args.M, 1000);
  EXPECT_EQ(args.K, 64);
  EXPECT_EQ(args.G, 4);
}

TEST_F(Fixture, ScheduleChangesLaunchShape) {
  meta = parseMetadata(tinyMetadata(), {"QCT_THREADS=128"});
  auto ts = good();
  qct_launch_plan plan;
  qct_kernel_args args;
  validateLaunch(meta, ts.data(), ts.size(), plan, args);
  EXPECT_EQ(plan.grid[0], 500u);
  EXPECT_EQ(plan.block[0], 128u);
}

TEST_F(Fixture, WrongCount) {
  auto ts = good();
  ts.pop_back();
  std::string e = error(ts);
  EXPECT_HAS(e, "takes 3 tensors (src, offsets, y), found 2");
}

TEST_F(Fixture, WrongOutputShapeNamesArgumentAndValues) {
  auto ts = good();
  ts[2] = t(QCT_DTYPE_U8, {64, 999});
  std::string e = error(ts);
  EXPECT_HAS(e, "argument 'y' (out[0])");
  EXPECT_HAS(e, "expected shape [64, 1000] = [K, M]");
  EXPECT_HAS(e, "found [64, 999]");
}

TEST_F(Fixture, WrongRank) {
  auto ts = good();
  ts[0] = t(QCT_DTYPE_U8, {64000});
  EXPECT_HAS(error(ts),
             "argument 'src' (src): expected 2 dims [M, K], found 1 dims");
}

TEST_F(Fixture, WrongDtype) {
  auto ts = good();
  ts[1].dtype = QCT_DTYPE_I64;
  EXPECT_HAS(error(ts),
             "argument 'offsets' (offsets): expected dtype i32, found i64");
  ts = good();
  ts[2].dtype = QCT_DTYPE_F32;
  EXPECT_HAS(error(ts), "expected dtype u8, found f32");
}

TEST_F(Fixture, RawByteBuffersTakeAnyOneByteType) {
  auto ts = good();
  ts[0].dtype = QCT_DTYPE_FP8_E4M3;
  ts[2].dtype = QCT_DTYPE_E8M0;
  EXPECT_EQ(error(ts), "");
}

TEST_F(Fixture, ElementNarrowsARawByteBuffer) {
  // A buffer that names its codes takes that type or a uint8 view, and
  // refuses another 8-bit format.
  std::string text = tinyMetadata();
  std::string plain = R"("name": "y",       "field": "out[0]",  "dir": "out", "dtype": "u8",)";
  std::size_t at = text.find(plain);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + plain.size(), R"( "element": "fp8_e4m3",)");
  meta = parseMetadata(text, {});
  auto ts = good();
  EXPECT_EQ(error(ts), "");
  ts[2].dtype = QCT_DTYPE_FP8_E4M3;
  EXPECT_EQ(error(ts), "");
  ts[2].dtype = QCT_DTYPE_FP8_E5M2;
  EXPECT_HAS(error(ts), "argument 'y' (out[0]): expected dtype fp8_e4m3 (or a "
                        "u8 view), found fp8_e5m2");
  ts[2].dtype = QCT_DTYPE_I8;
  EXPECT_HAS(error(ts), "found i8");
  // The unnarrowed source still takes any one-byte type.
  ts = good();
  ts[0].dtype = QCT_DTYPE_FP8_E5M2;
  EXPECT_EQ(error(ts), "");
}

TEST(MetadataElement, UnknownElementIsAMetadataError) {
  std::string text = tinyMetadata();
  std::string plain = R"("dtype": "i32",)";
  std::size_t at = text.find(plain);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + plain.size(), R"( "element": "fp8_e4m3",)");
  try {
    parseMetadata(text, {});
    FAIL() << "accepted an element on an i32 buffer";
  } catch (const RuntimeError &e) {
    EXPECT_EQ(e.status, QCT_ERR_METADATA);
    EXPECT_HAS(std::string(e.what()), "buffer 'offsets': element 'fp8_e4m3'");
  }
}

TEST_F(Fixture, ConstraintViolation) {
  auto ts = good();
  ts[0] = t(QCT_DTYPE_U8, {1000, 40});
  ts[2] = t(QCT_DTYPE_U8, {40, 1000});
  std::string e = error(ts);
  EXPECT_HAS(e, "K must be a multiple of 16 (test: 16-column rows), found 40");
}

TEST_F(Fixture, EqualsConstraint) {
  meta = parseMetadata(tinyMetadata(R"(, "extra": 0)"), {});
  meta.constraints.push_back(
      {ShapeExpr::parse("K", {}), 0, true, 128, "static.K"});
  std::string e = error(good());
  EXPECT_HAS(e, "K must equal 128 (static.K), found 64");
}

TEST_F(Fixture, Misaligned) {
  auto ts = good();
  ts[2].data = fakePtr((1 << 28) + 8);
  std::string e = error(ts);
  EXPECT_HAS(e, "argument 'y' (out[0]): data pointer must be 16-byte aligned");
  EXPECT_HAS(e, "8 past a 16-byte boundary");
}

TEST_F(Fixture, NullPointer) {
  auto ts = good();
  ts[0].data = nullptr;
  EXPECT_HAS(error(ts), "argument 'src' (src): data pointer is NULL");
}

TEST_F(Fixture, NonContiguous) {
  auto ts = good();
  ts[0] = t(QCT_DTYPE_U8, {1000, 64}, 0, {128, 1}); // a slice of wider rows
  std::string e = error(ts);
  EXPECT_HAS(
      e,
      "argument 'src' (src): must be row-major contiguous: expected stride 64");
  ts[0] = t(QCT_DTYPE_U8, {1000, 64}, 0, {1, 1000}); // transposed view
  EXPECT_HAS(error(ts), "must be row-major contiguous");
  ts[0] =
      t(QCT_DTYPE_U8, {1000, 64}, 0, {64, 1}); // explicit contiguous strides
  EXPECT_EQ(error(ts), "");
}

TEST_F(Fixture, OffsetsLengthDeterminesG) {
  auto ts = good();
  ts[1] = t(QCT_DTYPE_I32, {0});
  EXPECT_HAS(error(ts),
             "argument 'offsets' (offsets): cannot derive G from shape [0]");
}

TEST_F(Fixture, EmptyProblemIsValid) {
  std::vector<qct_tensor> ts = {t(QCT_DTYPE_U8, {0, 64}), t(QCT_DTYPE_I32, {1}),
                                t(QCT_DTYPE_U8, {64, 0})};
  ts[0].data = nullptr; // zero elements: NULL allowed
  // torch gives an empty [64, 0] tensor strides [1, 1]: not a layout error.
  ts[2] = t(QCT_DTYPE_U8, {64, 0}, 0, {1, 1});
  qct_launch_plan plan;
  qct_kernel_args args;
  validateLaunch(meta, ts.data(), ts.size(), plan, args);
  EXPECT_EQ(plan.M, 0);
  EXPECT_EQ(plan.grid[0], 0u); // launch becomes a no-op
}

TEST(Metadata, ScheduleOverridesAreChecked) {
  try {
    parseMetadata(tinyMetadata(), {"QCT_THREADS=100"});
    FAIL();
  } catch (const RuntimeError &e) {
    EXPECT_EQ(e.status, QCT_ERR_SCHEDULE);
    EXPECT_HAS(std::string(e.what()),
               "QCT_THREADS=100 is not a legal value (legal: 128, 256)");
  }
  try {
    parseMetadata(tinyMetadata(), {"QCT_TILE=1"});
    FAIL();
  } catch (const RuntimeError &e) {
    EXPECT_EQ(e.status, QCT_ERR_SCHEDULE);
    EXPECT_HAS(std::string(e.what()),
               "no schedule knob 'QCT_TILE' (knobs: QCT_THREADS)");
  }
}

// schedule.rules: a schedule that sets one knob to a value must give another
// one of the listed values (here: 128 threads need the second knob at 2).
TEST(Metadata, ScheduleRulesAreChecked) {
  std::string json = tinyMetadata();
  const std::string knobs =
      R"({"name": "QCT_THREADS", "values": [128, 256], "default": 256}])";
  const size_t at = json.find(knobs);
  ASSERT_NE(at, std::string::npos);
  json.replace(at, knobs.size(),
               R"({"name": "QCT_THREADS", "values": [128, 256], "default": 256},
          {"name": "QCT_UNROLL", "values": [1, 2], "default": 1}],
          "rules": [{"if": {"QCT_THREADS": 128}, "then": {"QCT_UNROLL": [2]}}])");
  EXPECT_EQ(parseMetadata(json, {}).rules.size(), 1u);
  EXPECT_EQ(parseMetadata(json, {"QCT_THREADS=128", "QCT_UNROLL=2"})
                .schedule.at("QCT_UNROLL"),
            2);
  try {
    parseMetadata(json, {"QCT_THREADS=128"});
    FAIL();
  } catch (const RuntimeError &e) {
    EXPECT_EQ(e.status, QCT_ERR_SCHEDULE);
    EXPECT_HAS(std::string(e.what()), "schedule knob QCT_THREADS=128 needs "
                                      "QCT_UNROLL to be one of 2 (got 1");
  }
  // A rule must name the kernel's knobs, one on each side.
  for (
      const char *rule :
      {R"({"if": {"QCT_NOPE": 1}, "then": {"QCT_UNROLL": [2]}})",
       R"({"if": {"QCT_THREADS": 128, "QCT_UNROLL": 1}, "then": {"QCT_UNROLL": [2]}})",
       R"({"if": {"QCT_THREADS": 128}, "then": {"QCT_UNROLL": "two"}})",
       R"({"if": {"QCT_THREADS": 128}})"}) {
    std::string bad = json;
    const std::string good =
        R"({"if": {"QCT_THREADS": 128}, "then": {"QCT_UNROLL": [2]}})";
    bad.replace(bad.find(good), good.size(), rule);
    try {
      parseMetadata(bad, {});
      ADD_FAILURE() << rule;
    } catch (const RuntimeError &e) {
      EXPECT_EQ(e.status, QCT_ERR_METADATA) << e.what();
    }
  }
}

TEST(Metadata, MalformedIsAMetadataError) {
  for (const std::string &bad :
       {std::string("{"), std::string("[]"),
        std::string(R"({"format_version": 2})"),
        tinyMetadata().replace(tinyMetadata().find("\"out[0]\""), 8,
                               "\"out[7]\"")}) {
    try {
      parseMetadata(bad, {});
      ADD_FAILURE() << bad;
    } catch (const RuntimeError &e) {
      EXPECT_EQ(e.status, QCT_ERR_METADATA) << e.what();
    }
  }
}

TEST_F(Fixture, MemoReusesSizesButStillChecksEveryTensor) {
  ShapeMemo memo;
  qct_launch_plan plan;
  qct_kernel_args args;
  auto ts = good();
  validateLaunch(meta, ts.data(), ts.size(), plan, args, &memo);
  EXPECT_TRUE(memo.valid);
  EXPECT_EQ(plan.grid[0], 250u);
  // Same source shape, wrong output: the memo must not hide it.
  ts[2] = t(QCT_DTYPE_U8, {64, 999});
  EXPECT_THROW(validateLaunch(meta, ts.data(), ts.size(), plan, args, &memo),
               RuntimeError);
  ts = good();
  ts[1].dtype = QCT_DTYPE_I64;
  EXPECT_THROW(validateLaunch(meta, ts.data(), ts.size(), plan, args, &memo),
               RuntimeError);
  // A new source shape and offsets length re-derive M, K, G.
  ts = {t(QCT_DTYPE_U8, {10, 32}), t(QCT_DTYPE_I32, {3}),
        t(QCT_DTYPE_U8, {32, 10})};
  validateLaunch(meta, ts.data(), ts.size(), plan, args, &memo);
  EXPECT_EQ(plan.M, 10);
  EXPECT_EQ(plan.K, 32);
  EXPECT_EQ(plan.G, 2);
  EXPECT_EQ(args.M, 10);
  EXPECT_EQ(plan.grid[0], 2u); // cdiv(320, 256)
  // A failing resolution leaves no stale memo behind.
  ts = {t(QCT_DTYPE_U8, {10, 40}), t(QCT_DTYPE_I32, {3}),
        t(QCT_DTYPE_U8, {40, 10})};
  EXPECT_THROW(validateLaunch(meta, ts.data(), ts.size(), plan, args, &memo),
               RuntimeError);
  EXPECT_FALSE(memo.valid);
  EXPECT_THROW(validateLaunch(meta, ts.data(), ts.size(), plan, args, &memo),
               RuntimeError);
}

TEST(Metadata, UnknownDtypeIsAMetadataError) {
  std::string m = tinyMetadata();
  m.replace(m.find("\"dtype\": \"i32\""), 14, "\"dtype\": \"q7\"");
  try {
    parseMetadata(m, {});
    FAIL();
  } catch (const RuntimeError &e) {
    EXPECT_EQ(e.status, QCT_ERR_METADATA);
    EXPECT_HAS(std::string(e.what()), "unknown dtype 'q7'");
  }
}
