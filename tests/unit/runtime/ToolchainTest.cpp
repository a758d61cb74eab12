//===- ToolchainTest.cpp - qct_toolchain_info_json ------------------------===//
//
// The report of what NVRTC and driver the runtime loaded: every field is
// there, with a value where the library loaded and the one-line error where
// it did not (this machine may have no driver; NVRTC it needs, else skip).
//
//===----------------------------------------------------------------------===//
#include "qct/qct.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <sys/stat.h>

namespace {
bool isFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
} // namespace

TEST(Toolchain, InfoJsonSaysWhatNvrtcAndDriverWereLoaded) {
  const char *text = qct_toolchain_info_json();
  ASSERT_NE(text, nullptr) << qct_last_error();
  nlohmann::json info = nlohmann::json::parse(text);
  const nlohmann::json &nvrtc = info.at("nvrtc");
  for (const char *field :
       {"loaded", "path", "version", "found_by", "builtins", "tried", "error"})
    EXPECT_TRUE(nvrtc.contains(field)) << field;
  ASSERT_TRUE(nvrtc.at("tried").is_array());
  if (!nvrtc.at("loaded").get<bool>()) {
    std::string error = nvrtc.at("error").get<std::string>();
    EXPECT_EQ(error.find('\n'), std::string::npos);
    GTEST_SKIP() << "no NVRTC on this machine: " << error;
  }
  EXPECT_TRUE(nvrtc.at("error").is_null());
  EXPECT_TRUE(isFile(nvrtc.at("path").get<std::string>()));
  EXPECT_TRUE(std::regex_match(nvrtc.at("version").get<std::string>(),
                               std::regex("13\\.[0-9]+")));
  EXPECT_TRUE(std::regex_match(
      nvrtc.at("found_by").get<std::string>(),
      std::regex("QCT_NVRTC_PATH=.+|already loaded|CUDA_HOME=.+|CUDA_PATH=.+|"
                 "pip wheel nvidia-cuda-nvrtc \\(.+\\)|CUDA toolkit .+|"
                 "loader path")))
      << nvrtc.at("found_by");
  int major = 0, minor = 0;
  ASSERT_EQ(qct_nvrtc_version(&major, &minor), QCT_OK);
  EXPECT_EQ(nvrtc.at("version").get<std::string>(),
            std::to_string(major) + "." + std::to_string(minor));

  const nlohmann::json &driver = info.at("driver");
  for (const char *field :
       {"loaded", "usable", "path", "version", "found_by", "status", "error"})
    EXPECT_TRUE(driver.contains(field)) << field;
  if (driver.at("loaded").get<bool>()) {
    EXPECT_TRUE(isFile(driver.at("path").get<std::string>()));
    EXPECT_FALSE(driver.at("found_by").is_null());
  } else {
    std::string error = driver.at("error").get<std::string>();
    EXPECT_NE(error.find("libcuda.so.1"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_EQ(driver.at("status"), "QCT_ERR_NO_DRIVER");
  }
  EXPECT_EQ(driver.at("usable").get<bool>(), driver.at("status") == "QCT_OK");
}
