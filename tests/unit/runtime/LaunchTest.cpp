//===- LaunchTest.cpp - Launching: clear failure without a GPU, bits with one
//===//
//
// Without a driver, launch must fail with QCT_ERR_NO_DRIVER / NO_DEVICE after
// validation (validation errors still come first). With a GPU, the tiny
// kernel runs, its output is checked, and bad offsets raise
// QCT_ERR_BAD_OFFSETS through qct_kernel_check_errors.
//
//===----------------------------------------------------------------------===//
#include "TestKernel.h"

#include "qct/qct.hpp"
#include "qct/runtime/Driver.h"
#include "qct/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

using qct::test::kTinySource;
using qct::test::tinyMetadata;
using qct::test::useFreshCache;

namespace {
using CUdeviceptr = unsigned long long;

qct_tensor tensor(void *data, qct_dtype dtype, std::vector<int64_t> shape) {
  qct_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.ndim = int(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    t.shape[i] = shape[i];
  return t;
}

std::string noGpuReason() {
  try {
    qct::rt::Driver::get();
    return "";
  } catch (const qct::rt::RuntimeError &e) {
    return e.what();
  }
}
} // namespace

TEST(Launch, WithoutAGpuFailsClearlyAfterValidation) {
  if (qct::rt::Driver::available())
    GTEST_SKIP() << "a CUDA driver and GPU are present; this test covers "
                    "machines without one";
  useFreshCache("nogpu");
  qct::Kernel k(kTinySource, tinyMetadata(), [] {
    qct::LoadOptions o;
    o.arch = "sm_90";
    return o;
  }());
  alignas(16) static unsigned char fake[64];
  std::vector<qct_tensor> ts = {tensor(fake, QCT_DTYPE_U8, {2, 16}),
                                tensor(fake, QCT_DTYPE_I32, {2}),
                                tensor(fake, QCT_DTYPE_U8, {16, 3})};
  // A wrong shape is reported before the missing driver.
  EXPECT_EQ(qct_kernel_launch(k.get(), ts.data(), ts.size(), nullptr),
            QCT_ERR_VALIDATION);
  ts[2].shape[1] = 2;
  qct_status s = qct_kernel_launch(k.get(), ts.data(), ts.size(), nullptr);
  EXPECT_TRUE(s == QCT_ERR_NO_DRIVER || s == QCT_ERR_NO_DEVICE)
      << qct_status_name(s);
  EXPECT_NE(std::string(qct_last_error()).find("no "), std::string::npos)
      << qct_last_error();
  EXPECT_EQ(qct_kernel_prepare(k.get()), s);
  EXPECT_EQ(qct_driver_proc("cuMemAlloc_v2"), nullptr);
  const char *arch = nullptr;
  qct_status as = qct_default_arch(&arch);
  ::unsetenv("QCT_ARCH");
  EXPECT_NE(as, QCT_OK);
  EXPECT_NE(std::string(qct_last_error()).find("QCT_ARCH"), std::string::npos)
      << qct_last_error();
}

TEST(Launch, RunsOnTheGpuAndReportsBadOffsets) {
  std::string why = noGpuReason();
  if (!why.empty())
    GTEST_SKIP() << "no GPU: " << why;
  useFreshCache("gpu");
  qct::Kernel k(kTinySource, tinyMetadata(), qct::LoadOptions{});
  EXPECT_EQ(k.arch().substr(0, 3), "sm_");
  k.prepare();
  auto memAlloc = reinterpret_cast<int (*)(CUdeviceptr *, size_t)>(
      qct_driver_proc("cuMemAlloc_v2"));
  auto memFree =
      reinterpret_cast<int (*)(CUdeviceptr)>(qct_driver_proc("cuMemFree_v2"));
  auto htod = reinterpret_cast<int (*)(CUdeviceptr, const void *, size_t)>(
      qct_driver_proc("cuMemcpyHtoD_v2"));
  auto dtoh = reinterpret_cast<int (*)(void *, CUdeviceptr, size_t)>(
      qct_driver_proc("cuMemcpyDtoH_v2"));
  ASSERT_TRUE(memAlloc && memFree && htod && dtoh);
  const int64_t M = 300, K = 48, G = 3;
  std::vector<unsigned char> src(M * K);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<unsigned char>(i * 7);
  std::vector<int32_t> offsets = {0, 100, 100, 300};
  CUdeviceptr dSrc, dOff, dOut;
  ASSERT_EQ(memAlloc(&dSrc, src.size()), 0);
  ASSERT_EQ(memAlloc(&dOff, offsets.size() * 4), 0);
  ASSERT_EQ(memAlloc(&dOut, src.size()), 0);
  ASSERT_EQ(htod(dSrc, src.data(), src.size()), 0);
  ASSERT_EQ(htod(dOff, offsets.data(), offsets.size() * 4), 0);
  std::vector<qct_tensor> ts = {
      tensor(reinterpret_cast<void *>(dSrc), QCT_DTYPE_U8, {M, K}),
      tensor(reinterpret_cast<void *>(dOff), QCT_DTYPE_I32, {G + 1}),
      tensor(reinterpret_cast<void *>(dOut), QCT_DTYPE_U8, {K, M})};
  k.launch(ts, nullptr);
  k.checkErrors(nullptr);
  std::vector<unsigned char> out(src.size());
  ASSERT_EQ(dtoh(out.data(), dOut, out.size()), 0);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t c = 0; c < K; ++c)
      ASSERT_EQ(out[c * M + r], static_cast<unsigned char>(src[r * K + c] + 1))
          << r << "," << c;

  // Decreasing offsets: the kernel flags them; check_errors reports and clears.
  offsets = {0, 200, 100, 300};
  ASSERT_EQ(htod(dOff, offsets.data(), offsets.size() * 4), 0);
  k.launch(ts, nullptr);
  uint32_t flags = 0;
  EXPECT_EQ(qct_kernel_check_errors(k.get(), nullptr, &flags),
            QCT_ERR_BAD_OFFSETS);
  EXPECT_EQ(flags, 1u);
  EXPECT_NE(std::string(qct_last_error()).find("bad ragged offsets"),
            std::string::npos);
  EXPECT_EQ(qct_kernel_check_errors(k.get(), nullptr, &flags),
            QCT_OK); // cleared
  EXPECT_EQ(flags, 0u);
  memFree(dSrc);
  memFree(dOff);
  memFree(dOut);
}
