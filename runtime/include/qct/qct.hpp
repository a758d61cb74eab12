//===- qct/qct.hpp - C++ API over the runtime's C ABI ----------*- C++ -*-===//
//
// Header-only RAII wrappers: errors become qct::Error exceptions carrying the
// status and every structured field of the C ABI's last error. Only the C ABI
// crosses the shared-library boundary, so this header works with any C++17
// compiler and standard library.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_QCT_HPP
#define QCT_QCT_HPP

#include "qct/qct.h"

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace qct {

class Error : public std::runtime_error {
public:
  /// Captures the calling thread's last error.
  explicit Error(qct_status status)
      : std::runtime_error(qct_last_error()), status_(status),
        message_(qct_last_error_field(QCT_ERROR_FIELD_MESSAGE)),
        log_(qct_last_error_field(QCT_ERROR_FIELD_LOG)),
        options_(qct_last_error_field(QCT_ERROR_FIELD_OPTIONS)),
        source_(qct_last_error_field(QCT_ERROR_FIELD_SOURCE)),
        versions_(qct_last_error_field(QCT_ERROR_FIELD_VERSIONS)) {}

  qct_status status() const { return status_; }
  const char *statusName() const { return qct_status_name(status_); }
  /// One line; what() is the full multi-line report.
  const std::string &message() const { return message_; }
  const std::string &log() const { return log_; }
  const std::string &options() const { return options_; }
  const std::string &numberedSource() const { return source_; }
  const std::string &versions() const { return versions_; }

private:
  qct_status status_;
  std::string message_, log_, options_, source_, versions_;
};

inline void check(qct_status status) {
  if (status != QCT_OK)
    throw Error(status);
}

/// A tensor descriptor: strides in elements; empty strides = contiguous.
inline qct_tensor tensor(void *data, qct_dtype dtype,
                         std::initializer_list<int64_t> shape,
                         std::initializer_list<int64_t> strides = {}) {
  qct_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.ndim = int32_t(shape.size());
  if (shape.size() > QCT_MAX_DIMS ||
      (strides.size() && strides.size() != shape.size()))
    throw std::invalid_argument("qct::tensor: bad rank or strides");
  int i = 0;
  for (int64_t d : shape)
    t.shape[i++] = d;
  i = 0;
  for (int64_t s : strides)
    t.strides[i++] = s;
  return t;
}

struct LoadOptions {
  std::string arch;                  ///< empty: $QCT_ARCH or the device's
  std::vector<std::string> schedule; ///< "NAME=VALUE"
  std::vector<std::string> extraNvrtcOptions;
  bool disableCache = false;
};

class Kernel {
public:
  /// See qct_kernel_load: a path or source text, and metadata JSON text, a
  /// path, or empty for the .json beside the source.
  Kernel(const std::string &cudaSource, const std::string &metadata = {},
         const LoadOptions &options = {}) {
    COptions o(options);
    check(qct_kernel_load(cudaSource.c_str(),
                          metadata.empty() ? nullptr : metadata.c_str(), &o.c,
                          &k_));
  }
  /// See qct_kernel_load_spec: compiles the spec at run time through the
  /// compiler library, then loads it.
  static Kernel fromSpec(const std::string &specPath,
                         const LoadOptions &options = {}) {
    Kernel k;
    COptions o(options);
    check(qct_kernel_load_spec(specPath.c_str(), &o.c, &k.k_));
    return k;
  }
  ~Kernel() { qct_kernel_free(k_); }
  Kernel(Kernel &&o) noexcept : k_(std::exchange(o.k_, nullptr)) {}
  Kernel &operator=(Kernel &&o) noexcept {
    std::swap(k_, o.k_);
    return *this;
  }
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

private:
  Kernel() = default;
  /// qct_load_options viewing a LoadOptions (valid while both live).
  struct COptions {
    explicit COptions(const LoadOptions &options) {
      for (const auto &s : options.schedule)
        sched.push_back(s.c_str());
      for (const auto &s : options.extraNvrtcOptions)
        extra.push_back(s.c_str());
      c.arch = options.arch.empty() ? nullptr : options.arch.c_str();
      c.schedule = sched.data();
      c.num_schedule = sched.size();
      c.extra_nvrtc_options = extra.data();
      c.num_extra_nvrtc_options = extra.size();
      c.disable_cache = options.disableCache;
    }
    std::vector<const char *> sched, extra;
    qct_load_options c{};
  };

public:

  std::string name() const { return qct_kernel_name(k_); }
  std::string entry() const { return qct_kernel_entry(k_); }
  std::string metadataJson() const { return qct_kernel_metadata_json(k_); }
  std::string arch() const { return qct_kernel_arch(k_); }
  std::string cacheKey() const { return qct_kernel_cache_key(k_); }
  std::string compileLog() const { return qct_kernel_compile_log(k_); }
  std::string options() const { return qct_kernel_options(k_); }
  std::string schedule() const { return qct_kernel_schedule(k_); }
  qct_cache_origin origin() const { return qct_kernel_origin(k_); }
  qct_kernel_stats stats() const {
    qct_kernel_stats s;
    check(qct_kernel_stats_get(k_, &s));
    return s;
  }
  size_t numBuffers() const { return qct_kernel_num_buffers(k_); }
  qct_buffer_info buffer(size_t i) const {
    qct_buffer_info b;
    check(qct_kernel_buffer_info(k_, i, &b));
    return b;
  }
  std::vector<int64_t> bufferShape(size_t i, int64_t M, int64_t K,
                                   int64_t G = 0) const {
    int64_t shape[QCT_MAX_DIMS];
    int32_t n = 0;
    check(qct_kernel_buffer_shape(k_, i, M, K, G, shape, &n));
    return std::vector<int64_t>(shape, shape + n);
  }

  qct_launch_plan validate(const std::vector<qct_tensor> &tensors) const {
    qct_launch_plan p;
    check(qct_kernel_validate(k_, tensors.data(), tensors.size(), &p));
    return p;
  }
  void prepare() { check(qct_kernel_prepare(k_)); }
  void launch(const std::vector<qct_tensor> &tensors, void *stream = nullptr) {
    check(qct_kernel_launch(k_, tensors.data(), tensors.size(), stream));
  }
  /// Synchronizes `stream`; throws qct::Error(QCT_ERR_BAD_OFFSETS) if flagged.
  void checkErrors(void *stream = nullptr) {
    check(qct_kernel_check_errors(k_, stream, nullptr));
  }
  void *function() {
    void *f = nullptr;
    check(qct_kernel_function(k_, &f));
    return f;
  }
  qct_kernel *get() const { return k_; }

private:
  qct_kernel *k_ = nullptr;
};

} // namespace qct

#endif // QCT_QCT_HPP
