//===- NvrtcSearchTest.cpp - Where NVRTC is looked for --------------------===//
//
// The search order of NvrtcSearch.h, its found_by and tried texts, and the
// one-line error when no source has NVRTC. The process-wide NVRTC is loaded
// once, so these tests call the search itself with folders of their own
// (symlinks to the NVRTC this machine has); the search order with every
// source pointing at nothing is built with a soname no loader path has.
// Where a whole process must start without NVRTC, tests/python does it in a
// subprocess (test_nvrtc_search.py).
//
//===----------------------------------------------------------------------===//
#include "TestKernel.h"

#include "qct/runtime/Nvrtc.h"
#include "qct/runtime/NvrtcSearch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

using namespace qct::rt;
using qct::test::freshDir;

namespace {
const char *const kVariables[] = {"QCT_NVRTC_PATH", "CUDA_HOME", "CUDA_PATH",
                                  "QCT_NVRTC_WHEEL_DIR"};

/// Clears the variables the search reads, and restores them afterwards.
class NvrtcSearchTest : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *name : kVariables) {
      if (const char *v = std::getenv(name))
        saved_[name] = v;
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char *name : kVariables) {
      auto it = saved_.find(name);
      if (it != saved_.end())
        ::setenv(name, it->second.c_str(), 1);
      else
        ::unsetenv(name);
    }
  }

  /// The NVRTC this machine has (loaded through the real search), or "".
  static const Nvrtc *machineNvrtc() {
    const Nvrtc &n = Nvrtc::probe();
    return n.loaded() ? &n : nullptr;
  }

  /// `folder` with libnvrtc.so.13 and its builtins linked to this machine's.
  static void linkNvrtcInto(const std::string &folder, const Nvrtc &real) {
    std::string cmd = "mkdir -p '" + folder + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    ASSERT_EQ(
        ::symlink(real.path().c_str(), (folder + "/libnvrtc.so.13").c_str()),
        0);
    if (!real.builtinsPath().empty()) {
      std::string name =
          real.builtinsPath().substr(real.builtinsPath().rfind('/'));
      ASSERT_EQ(::symlink(real.builtinsPath().c_str(), (folder + name).c_str()),
                0);
    }
  }

  /// The order without the already-loaded source (this process has NVRTC
  /// loaded by now) and without the machine's toolkit folders.
  static std::vector<NvrtcSource> orderOfOwnFolders() {
    NvrtcSearchDefaults none;
    none.toolkits = {};
    none.runtimeFolder = "";
    std::vector<NvrtcSource> order;
    for (const NvrtcSource &s : nvrtcSearchOrder(none))
      if (!s.alreadyLoaded)
        order.push_back(s);
    return order;
  }

  std::map<std::string, std::string> saved_;
};

#define NEED_NVRTC(real)                                                       \
  const Nvrtc *real = machineNvrtc();                                          \
  if (!real)                                                                   \
  GTEST_SKIP() << "no NVRTC on this machine: " << Nvrtc::probe().error()
} // namespace

TEST_F(NvrtcSearchTest, OrderIsOverrideLoadedHomePathWheelToolkitLoader) {
  ::setenv("CUDA_HOME", "/opt/home/", 1);
  ::setenv("CUDA_PATH", "/opt/path", 1);
  ::setenv("QCT_NVRTC_WHEEL_DIR", "/site/nvidia/cu13/lib", 1);
  NvrtcSearchDefaults d;
  d.toolkits = {"/tk1", "/tk2"};
  d.runtimeFolder = "";
  std::vector<NvrtcSource> order = nvrtcSearchOrder(d);
  std::vector<std::string> foundBy;
  for (const NvrtcSource &s : order)
    foundBy.push_back(s.foundBy);
  EXPECT_EQ(foundBy,
            (std::vector<std::string>{
                "already loaded", "CUDA_HOME=/opt/home", "CUDA_PATH=/opt/path",
                "pip wheel nvidia-cuda-nvrtc (/site/nvidia/cu13/lib)",
                "CUDA toolkit /tk1", "CUDA toolkit /tk2", "loader path"}));
  EXPECT_TRUE(order[0].alreadyLoaded);
  EXPECT_EQ(order[1].files,
            (std::vector<std::string>{"/opt/home/lib64/libnvrtc.so.13",
                                      "/opt/home/lib/libnvrtc.so.13"}));
  EXPECT_EQ(order[3].files,
            std::vector<std::string>{"/site/nvidia/cu13/lib/libnvrtc.so.13"});
  EXPECT_EQ(order[4].files,
            std::vector<std::string>{"/tk1/lib64/libnvrtc.so.13"});
  EXPECT_EQ(order.back().files, std::vector<std::string>{"libnvrtc.so.13"});
  for (const NvrtcSource &s : order)
    EXPECT_FALSE(s.exclusive) << s.label;
}

TEST_F(NvrtcSearchTest, ExplicitPathComesFirstAndTakesAFolder) {
  std::string dir = freshDir("nvrtc-explicit");
  ::setenv("QCT_NVRTC_PATH", dir.c_str(), 1);
  ::setenv("CUDA_HOME", "/opt/home", 1);
  std::vector<NvrtcSource> order = nvrtcSearchOrder();
  ASSERT_GE(order.size(), 2u);
  EXPECT_TRUE(order[0].exclusive);
  EXPECT_EQ(order[0].foundBy, "QCT_NVRTC_PATH=" + dir);
  EXPECT_EQ(order[0].files, std::vector<std::string>{dir + "/libnvrtc.so.13"});
  EXPECT_TRUE(order[1].alreadyLoaded);
}

TEST_F(NvrtcSearchTest, UnsetSourcesAreAbsentNotSearched) {
  NvrtcSearchDefaults d;
  d.runtimeFolder = "";
  std::vector<NvrtcSource> order = nvrtcSearchOrder(d);
  ASSERT_GE(order.size(), 4u);
  EXPECT_EQ(order[1].label, "CUDA_HOME");
  EXPECT_EQ(order[1].absent, "unset");
  EXPECT_EQ(order[2].label, "CUDA_PATH");
  EXPECT_EQ(order[3].absent, "not installed; QCT_NVRTC_WHEEL_DIR unset");
  for (const NvrtcSource &s : {order[1], order[2], order[3]})
    EXPECT_TRUE(s.files.empty()) << s.label;
}

TEST_F(NvrtcSearchTest, FoundByCudaHomeInLib64OrLib) {
  NEED_NVRTC(real);
  for (const char *sub : {"lib64", "lib"}) {
    std::string home = freshDir("nvrtc-home");
    linkNvrtcInto(home + "/" + sub, *real);
    ::setenv("CUDA_HOME", home.c_str(), 1);
    NvrtcLocation at = findNvrtc(orderOfOwnFolders());
    ASSERT_NE(at.handle, nullptr) << at.error;
    EXPECT_EQ(at.foundBy, "CUDA_HOME=" + home);
    EXPECT_EQ(at.path, home + "/" + sub + "/libnvrtc.so.13");
    EXPECT_TRUE(at.tried.empty());
    EXPECT_TRUE(at.error.empty());
  }
}

TEST_F(NvrtcSearchTest, CudaPathAfterAnEmptyCudaHome) {
  NEED_NVRTC(real);
  std::string home = freshDir("nvrtc-empty-home");
  std::string path = freshDir("nvrtc-path");
  linkNvrtcInto(path + "/lib64", *real);
  ::setenv("CUDA_HOME", home.c_str(), 1);
  ::setenv("CUDA_PATH", path.c_str(), 1);
  NvrtcLocation at = findNvrtc(orderOfOwnFolders());
  ASSERT_NE(at.handle, nullptr) << at.error;
  EXPECT_EQ(at.foundBy, "CUDA_PATH=" + path);
  EXPECT_EQ(at.tried,
            std::vector<std::string>{"CUDA_HOME=" + home +
                                     " (no lib64/ or lib/libnvrtc.so.13)"});
}

TEST_F(NvrtcSearchTest, ABrokenFileIsReportedAndPassedOver) {
  NEED_NVRTC(real);
  std::string home = freshDir("nvrtc-broken");
  std::string cmd = "mkdir -p '" + home + "/lib64'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ofstream(home + "/lib64/libnvrtc.so.13") << "not an ELF file\n";
  std::string path = freshDir("nvrtc-good");
  linkNvrtcInto(path + "/lib64", *real);
  ::setenv("CUDA_HOME", home.c_str(), 1);
  ::setenv("CUDA_PATH", path.c_str(), 1);
  NvrtcLocation at = findNvrtc(orderOfOwnFolders());
  ASSERT_NE(at.handle, nullptr) << at.error;
  EXPECT_EQ(at.foundBy, "CUDA_PATH=" + path);
  ASSERT_EQ(at.tried.size(), 1u);
  // The loader's own reason, not "missing": the file is there.
  EXPECT_EQ(at.tried[0].rfind("CUDA_HOME=" + home + " (" + home +
                                  "/lib64/libnvrtc.so.13: ",
                              0),
            0u)
      << at.tried[0];
}

TEST_F(NvrtcSearchTest, FoundInTheWheelFolder) {
  NEED_NVRTC(real);
  std::string wheel = freshDir("nvrtc-wheel") + "/nvidia/cu13/lib";
  linkNvrtcInto(wheel, *real);
  ::setenv("QCT_NVRTC_WHEEL_DIR", wheel.c_str(), 1);
  NvrtcLocation at = findNvrtc(orderOfOwnFolders());
  ASSERT_NE(at.handle, nullptr) << at.error;
  EXPECT_EQ(at.foundBy, "pip wheel nvidia-cuda-nvrtc (" + wheel + ")");
  EXPECT_EQ(at.path, wheel + "/libnvrtc.so.13");
  EXPECT_EQ(at.tried, (std::vector<std::string>{"CUDA_HOME (unset)",
                                                "CUDA_PATH (unset)"}));
}

TEST_F(NvrtcSearchTest, FoundInTheSitePackagesOfAnInstalledQct) {
  // An installed qct is site-packages/qct/lib/libqct_runtime.so; the wheel's
  // NVRTC is site-packages/nvidia/cu13/lib beside it.
  NEED_NVRTC(real);
  std::string site = freshDir("nvrtc-site");
  std::string cmd = "mkdir -p '" + site + "/qct/lib'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  linkNvrtcInto(site + "/nvidia/cu13/lib", *real);
  NvrtcSearchDefaults d;
  d.toolkits = {};
  d.runtimeFolder = site + "/qct/lib";
  std::vector<NvrtcSource> order;
  for (const NvrtcSource &s : nvrtcSearchOrder(d))
    if (!s.alreadyLoaded)
      order.push_back(s);
  NvrtcLocation at = findNvrtc(order);
  ASSERT_NE(at.handle, nullptr) << at.error;
  char *realSite = ::realpath(site.c_str(), nullptr);
  ASSERT_NE(realSite, nullptr);
  std::string lib = std::string(realSite) + "/nvidia/cu13/lib";
  std::free(realSite);
  EXPECT_EQ(at.foundBy, "pip wheel nvidia-cuda-nvrtc (" + lib + ")");
}

TEST_F(NvrtcSearchTest, AlreadyLoadedComesBeforeEveryFolder) {
  NEED_NVRTC(real);
  std::string home = freshDir("nvrtc-home-unused");
  linkNvrtcInto(home + "/lib64", *real);
  ::setenv("CUDA_HOME", home.c_str(), 1);
  NvrtcLocation at = findNvrtc(nvrtcSearchOrder());
  ASSERT_NE(at.handle, nullptr) << at.error;
  EXPECT_EQ(at.foundBy, "already loaded");
  EXPECT_EQ(at.path, real->path());
  EXPECT_TRUE(at.tried.empty());
}

TEST_F(NvrtcSearchTest, NowhereIsOneLineNamingEverySourceAndWhatToInstall) {
  // A soname no folder or loader path has stands for a machine without NVRTC.
  std::string empty = freshDir("nvrtc-nowhere");
  ::setenv("CUDA_PATH", empty.c_str(), 1);
  NvrtcSearchDefaults d;
  d.soname = "libnvrtc-qct-test-absent.so.13";
  d.toolkits = {empty + "/toolkit"};
  d.runtimeFolder = "";
  NvrtcLocation at = findNvrtc(nvrtcSearchOrder(d), d.soname);
  EXPECT_EQ(at.handle, nullptr);
  EXPECT_EQ(at.error,
            "NVRTC (libnvrtc-qct-test-absent.so.13) not found: tried "
            "CUDA_HOME (unset), CUDA_PATH=" +
                empty +
                " (no lib64/ or lib/libnvrtc-qct-test-absent.so.13), pip "
                "wheel nvidia-cuda-nvrtc (not installed; QCT_NVRTC_WHEEL_DIR "
                "unset), " +
                empty +
                "/toolkit/lib64 (none), the loader path (not in "
                "LD_LIBRARY_PATH or the ldconfig cache); install the CUDA 13 "
                "toolkit or `pip install nvidia-cuda-nvrtc` (CUDA 13), or set "
                "CUDA_HOME to a CUDA 13 toolkit");
  EXPECT_EQ(at.error.find('\n'), std::string::npos);
  EXPECT_EQ(at.tried.size(), 5u);
}

TEST_F(NvrtcSearchTest, AnExplicitPathThatFailsEndsTheSearch) {
  NEED_NVRTC(real);
  std::string home = freshDir("nvrtc-home-valid");
  linkNvrtcInto(home + "/lib64", *real);
  std::string missing = freshDir("nvrtc-missing") + "/libnvrtc.so.13";
  ::setenv("QCT_NVRTC_PATH", missing.c_str(), 1);
  ::setenv("CUDA_HOME", home.c_str(), 1);
  NvrtcLocation at = findNvrtc(orderOfOwnFolders());
  EXPECT_EQ(at.handle, nullptr) << "fell through to " << at.foundBy;
  EXPECT_EQ(at.error.rfind("NVRTC (libnvrtc.so.13) not loaded: "
                           "QCT_NVRTC_PATH=" +
                               missing + " (no such file); ",
                           0),
            0u)
      << at.error;
  EXPECT_EQ(at.error.find('\n'), std::string::npos);
}

TEST_F(NvrtcSearchTest, TheProcessNvrtcSaysWhereItCameFrom) {
  NEED_NVRTC(real);
  EXPECT_FALSE(real->foundBy().empty());
  EXPECT_NE(real->path().find("libnvrtc"), std::string::npos) << real->path();
  EXPECT_TRUE(real->error().empty());
  EXPECT_EQ(real->major(), 13);
}
