//===- CApi.cpp - The C ABI over the runtime
//-------------------------------===//
//
// Every entry point catches at the boundary: C++ exceptions never cross the
// ABI; they become a qct_status plus the thread's last error.
//
//===----------------------------------------------------------------------===//
#include "qct/qct.h"

#include "qct/runtime/DeviceHeaders.h"
#include "qct/runtime/DiskCache.h"
#include "qct/runtime/Driver.h"
#include "qct/runtime/Env.h"
#include "qct/runtime/Error.h"
#include "qct/runtime/Kernel.h"
#include "qct/runtime/Nvrtc.h"
#include "qct/runtime/ShapeExpr.h"
#include "qct/runtime/SpecCompiler.h"
#include "qct/runtime/Toolchain.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <unistd.h>

using namespace qct::rt;

struct qct_kernel {
  std::unique_ptr<Kernel> impl;
};

namespace {
struct LastError {
  qct_status status = QCT_OK;
  std::string formatted, message, log, options, source, versions;
};
thread_local LastError tLastError;
thread_local std::string tCacheInfo, tCacheList, tEnvValue, tArch, tToolchain;

qct_status record(const RuntimeError &e) {
  LastError &l = tLastError;
  l.status = e.status;
  l.message = e.what();
  l.log = e.log;
  l.options = e.options;
  l.source = e.source;
  l.versions = e.versions;
  l.formatted = e.formatted();
  return e.status;
}

template <typename F> qct_status guard(F &&f) {
  try {
    f();
    return QCT_OK;
  } catch (const RuntimeError &e) {
    return record(e);
  } catch (const std::bad_alloc &) {
    return record(RuntimeError(QCT_ERR_INTERNAL, "out of host memory"));
  } catch (const std::exception &e) {
    return record(RuntimeError(QCT_ERR_INTERNAL,
                               std::string("internal error: ") + e.what()));
  } catch (...) {
    return record(
        RuntimeError(QCT_ERR_INTERNAL, "internal error: unknown exception"));
  }
}

// The folder, or its nearest existing ancestor (where it would be created),
// accepts writes.
bool writable(std::string path) {
  while (!path.empty() && ::access(path.c_str(), F_OK) != 0) {
    std::size_t slash = path.find_last_of('/');
    path = slash == std::string::npos || slash == 0
               ? std::string(slash == 0 ? "/" : "")
               : path.substr(0, slash);
  }
  return !path.empty() && ::access(path.c_str(), W_OK) == 0;
}

void needKernel(const void *k) {
  if (!k)
    fail(QCT_ERR_INVALID_ARGUMENT, "kernel handle is NULL");
}

std::vector<std::string> strings(const char *const *list, size_t n,
                                 const char *what) {
  std::vector<std::string> v;
  if (n && !list)
    fail(QCT_ERR_INVALID_ARGUMENT,
         std::string(what) + " is NULL but its count is not 0");
  for (size_t i = 0; i < n; ++i) {
    if (!list[i])
      fail(QCT_ERR_INVALID_ARGUMENT,
           std::string(what) + "[" + std::to_string(i) + "] is NULL");
    v.emplace_back(list[i]);
  }
  return v;
}
} // namespace

extern "C" {

const char *qct_version(void) { return QCT_RUNTIME_VERSION; }
int qct_abi_version(void) { return QCT_RUNTIME_ABI_VERSION; }
const char *qct_device_headers_hash(void) {
  return qct::rt::deviceHeadersHash().c_str();
}

const char *qct_status_name(qct_status s) {
  switch (s) {
  case QCT_OK:
    return "QCT_OK";
  case QCT_ERR_INVALID_ARGUMENT:
    return "QCT_ERR_INVALID_ARGUMENT";
  case QCT_ERR_METADATA:
    return "QCT_ERR_METADATA";
  case QCT_ERR_SCHEDULE:
    return "QCT_ERR_SCHEDULE";
  case QCT_ERR_NVRTC_UNAVAILABLE:
    return "QCT_ERR_NVRTC_UNAVAILABLE";
  case QCT_ERR_COMPILE:
    return "QCT_ERR_COMPILE";
  case QCT_ERR_NO_DRIVER:
    return "QCT_ERR_NO_DRIVER";
  case QCT_ERR_NO_DEVICE:
    return "QCT_ERR_NO_DEVICE";
  case QCT_ERR_VALIDATION:
    return "QCT_ERR_VALIDATION";
  case QCT_ERR_CUDA:
    return "QCT_ERR_CUDA";
  case QCT_ERR_BAD_OFFSETS:
    return "QCT_ERR_BAD_OFFSETS";
  case QCT_ERR_IO:
    return "QCT_ERR_IO";
  case QCT_ERR_INTERNAL:
    return "QCT_ERR_INTERNAL";
  case QCT_ERR_COMPILER_UNAVAILABLE:
    return "QCT_ERR_COMPILER_UNAVAILABLE";
  case QCT_ERR_SPEC:
    return "QCT_ERR_SPEC";
  }
  return "QCT_ERR_UNKNOWN";
}

qct_status qct_last_status(void) { return tLastError.status; }
const char *qct_last_error(void) { return tLastError.formatted.c_str(); }

const char *qct_last_error_field(qct_error_field field) {
  const LastError &l = tLastError;
  switch (field) {
  case QCT_ERROR_FIELD_MESSAGE:
    return l.message.c_str();
  case QCT_ERROR_FIELD_LOG:
    return l.log.c_str();
  case QCT_ERROR_FIELD_OPTIONS:
    return l.options.c_str();
  case QCT_ERROR_FIELD_SOURCE:
    return l.source.c_str();
  case QCT_ERROR_FIELD_VERSIONS:
    return l.versions.c_str();
  }
  return "";
}

void qct_clear_error(void) { tLastError = LastError(); }

namespace {
LoadOptions loadOptions(const qct_load_options *options) {
  LoadOptions lo;
  if (options) {
    lo.arch = options->arch ? options->arch : "";
    lo.schedule = strings(options->schedule, options->num_schedule, "schedule");
    lo.extraOptions =
        strings(options->extra_nvrtc_options, options->num_extra_nvrtc_options,
                "extra_nvrtc_options");
    lo.disableCache = options->disable_cache != 0;
  }
  return lo;
}
} // namespace

qct_status qct_kernel_load(const char *cuda_source, const char *metadata_json,
                           const qct_load_options *options,
                           qct_kernel **out_kernel) {
  return guard([&] {
    if (!cuda_source || !out_kernel)
      fail(QCT_ERR_INVALID_ARGUMENT,
           "qct_kernel_load: cuda_source and out_kernel are required");
    *out_kernel = nullptr;
    auto k = std::make_unique<qct_kernel>();
    k->impl = Kernel::load(cuda_source, metadata_json ? metadata_json : "",
                           loadOptions(options));
    *out_kernel = k.release();
  });
}

qct_status qct_spec_compile(const char *spec_path, const char **cuda_source,
                            const char **metadata_json) {
  return guard([&] {
    if (!spec_path || !cuda_source || !metadata_json)
      fail(QCT_ERR_INVALID_ARGUMENT,
           "qct_spec_compile: spec_path, cuda_source and metadata_json are "
           "required");
    thread_local CompiledSpec last;
    last = compileSpec(spec_path);
    *cuda_source = last.cudaSource.c_str();
    *metadata_json = last.metadataJson.c_str();
  });
}

qct_status qct_kernel_load_spec(const char *spec_path,
                                const qct_load_options *options,
                                qct_kernel **out_kernel) {
  return guard([&] {
    if (!spec_path || !out_kernel)
      fail(QCT_ERR_INVALID_ARGUMENT,
           "qct_kernel_load_spec: spec_path and out_kernel are required");
    *out_kernel = nullptr;
    CompiledSpec compiled = compileSpec(spec_path);
    auto k = std::make_unique<qct_kernel>();
    k->impl = Kernel::load(compiled.cudaSource, compiled.metadataJson,
                           loadOptions(options));
    *out_kernel = k.release();
  });
}

void qct_kernel_free(qct_kernel *kernel) { delete kernel; }

#define QCT_KERNEL_STRING(fn, expr)                                            \
  const char *fn(const qct_kernel *kernel) {                                   \
    return kernel ? (expr).c_str() : "";                                       \
  }
QCT_KERNEL_STRING(qct_kernel_name, kernel->impl->meta.name)
QCT_KERNEL_STRING(qct_kernel_entry, kernel->impl->meta.entry)
QCT_KERNEL_STRING(qct_kernel_metadata_json, kernel->impl->meta.json)
QCT_KERNEL_STRING(qct_kernel_arch, kernel->impl->arch)
QCT_KERNEL_STRING(qct_kernel_cache_key, kernel->impl->key)
QCT_KERNEL_STRING(qct_kernel_compile_log, kernel->impl->binary->log)
QCT_KERNEL_STRING(qct_kernel_options, kernel->impl->optionsText)
QCT_KERNEL_STRING(qct_kernel_schedule, kernel->impl->scheduleText)
#undef QCT_KERNEL_STRING

qct_cache_origin qct_kernel_origin(const qct_kernel *kernel) {
  return kernel ? kernel->impl->origin : QCT_ORIGIN_COMPILED;
}

qct_status qct_kernel_stats_get(const qct_kernel *kernel,
                                qct_kernel_stats *out) {
  return guard([&] {
    needKernel(kernel);
    if (!out)
      fail(QCT_ERR_INVALID_ARGUMENT, "qct_kernel_stats_get: out is NULL");
    *out = kernel->impl->binary->stats;
  });
}

qct_status qct_kernel_cubin(const qct_kernel *kernel, const void **data,
                            size_t *size) {
  return guard([&] {
    needKernel(kernel);
    if (!data || !size)
      fail(QCT_ERR_INVALID_ARGUMENT,
           "qct_kernel_cubin: data and size are required");
    *data = kernel->impl->binary->cubin.data();
    *size = kernel->impl->binary->cubin.size();
  });
}

size_t qct_kernel_num_buffers(const qct_kernel *kernel) {
  return kernel ? kernel->impl->meta.buffers.size() : 0;
}

qct_status qct_kernel_buffer_info(const qct_kernel *kernel, size_t index,
                                  qct_buffer_info *out) {
  return guard([&] {
    needKernel(kernel);
    const auto &bufs = kernel->impl->meta.buffers;
    if (index >= bufs.size() || !out)
      fail(QCT_ERR_INVALID_ARGUMENT,
           "qct_kernel_buffer_info: index " + std::to_string(index) +
               " out of range (" + std::to_string(bufs.size()) + " buffers)");
    const BufferMeta &b = bufs[index];
    out->name = b.name.c_str();
    out->field = b.fieldText.c_str();
    out->dtype = b.dtype.c_str();
    out->is_output = b.isOutput;
    out->ndim = int32_t(b.shape.size());
  });
}

qct_status qct_kernel_buffer_shape(const qct_kernel *kernel, size_t index,
                                   int64_t M, int64_t K, int64_t G,
                                   int64_t *shape, int32_t *ndim) {
  return guard([&] {
    needKernel(kernel);
    const auto &bufs = kernel->impl->meta.buffers;
    if (index >= bufs.size() || !shape || !ndim)
      fail(QCT_ERR_INVALID_ARGUMENT,
           "qct_kernel_buffer_shape: bad index or NULL output");
    Dims d{M, K, G};
    const BufferMeta &b = bufs[index];
    for (size_t i = 0; i < b.shape.size(); ++i)
      shape[i] = b.shape[i].eval(d);
    *ndim = int32_t(b.shape.size());
  });
}

qct_status qct_eval_expr(const char *expr, int64_t M, int64_t K, int64_t G,
                         const char *const *knobs, size_t num_knobs,
                         int64_t *out) {
  return guard([&] {
    if (!expr || !out)
      fail(QCT_ERR_INVALID_ARGUMENT,
           "qct_eval_expr: expr and out are required");
    std::map<std::string, std::int64_t> values;
    for (const std::string &kv : strings(knobs, num_knobs, "knobs")) {
      auto eq = kv.find('=');
      if (eq == std::string::npos)
        fail(QCT_ERR_INVALID_ARGUMENT, "knob '" + kv + "' is not NAME=VALUE");
      values[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
    }
    *out = ShapeExpr::parse(expr, values).eval(Dims{M, K, G});
  });
}

qct_status qct_kernel_validate(const qct_kernel *kernel,
                               const qct_tensor *tensors, size_t num_tensors,
                               qct_launch_plan *plan) {
  return guard([&] {
    needKernel(kernel);
    qct_launch_plan p;
    qct_kernel_args args;
    kernel->impl->validate(tensors, num_tensors, p, args);
    if (plan)
      *plan = p;
  });
}

qct_status qct_kernel_prepare(qct_kernel *kernel) {
  return guard([&] {
    needKernel(kernel);
    kernel->impl->prepare();
  });
}

qct_status qct_kernel_launch(qct_kernel *kernel, const qct_tensor *tensors,
                             size_t num_tensors, void *stream) {
  return guard([&] {
    needKernel(kernel);
    kernel->impl->launch(tensors, num_tensors, stream);
  });
}

qct_status qct_kernel_check_errors(qct_kernel *kernel, void *stream,
                                   uint32_t *flags) {
  return guard([&] {
    needKernel(kernel);
    uint32_t f = kernel->impl->checkErrors(stream);
    if (flags)
      *flags = f;
    if (f & QCT_ERROR_BAD_OFFSETS)
      fail(QCT_ERR_BAD_OFFSETS, "kernel " + kernel->impl->meta.name +
                                    " reported bad ragged offsets "
                                    "(QCT_ERROR_BAD_OFFSETS): offsets[0] != 0, "
                                    "decreasing, offsets[G] != M, or out of "
                                    "range; the outputs are not valid "
                                    "(flag cleared)");
    if (f)
      fail(QCT_ERR_CUDA, "kernel " + kernel->impl->meta.name +
                             " set unknown error bits " + std::to_string(f) +
                             " (flag cleared)");
  });
}

qct_status qct_kernel_function(qct_kernel *kernel, void **cu_function) {
  return guard([&] {
    needKernel(kernel);
    if (!cu_function)
      fail(QCT_ERR_INVALID_ARGUMENT, "qct_kernel_function: out is NULL");
    *cu_function = kernel->impl->prepare().function;
  });
}

size_t qct_env_count(void) {
  size_t n = 0;
  env::table(n);
  return n;
}

const qct_env_var *qct_env_at(size_t index) {
  size_t n = 0;
  const qct_env_var *t = env::table(n);
  return index < n ? &t[index] : nullptr;
}

const char *qct_env_value(const char *name) {
  if (guard([&] { tEnvValue = env::get(name ? name : ""); }) != QCT_OK)
    return nullptr;
  return tEnvValue.c_str();
}

const char *qct_cache_dir(void) {
  // The folder alone: a malformed QCT_CACHE_MAX_BYTES does not hide it.
  if (guard([&] {
        tEnvValue = DiskCache(env::get("QCT_CACHE_DIR"), 0).dir();
      }) != QCT_OK)
    return nullptr;
  return tEnvValue.c_str();
}

const char *qct_cache_info_json(void) {
  qct_status s = guard([&] {
    DiskCache c = DiskCache::fromEnv();
    auto entries = c.list(false);
    std::uint64_t bytes = 0;
    for (const auto &e : entries)
      bytes += e.bytes;
    nlohmann::json j = {{"dir", c.dir()},
                        {"entries", entries.size()},
                        {"bytes", bytes},
                        {"max_bytes", env::getBytes("QCT_CACHE_MAX_BYTES")},
                        {"enabled", !env::getBool("QCT_CACHE_DISABLE")},
                        {"writable", writable(c.dir())}};
    tCacheInfo = j.dump();
  });
  return s == QCT_OK ? tCacheInfo.c_str() : nullptr;
}

const char *qct_cache_list_json(void) {
  qct_status s = guard([&] {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto &e : DiskCache::fromEnv().list(true)) {
      nlohmann::json info = nlohmann::json::object();
      if (e.valid) {
        try {
          info = nlohmann::json::parse(e.info);
        } catch (const nlohmann::json::exception &) {
        }
      }
      arr.push_back({{"file", e.file},
                     {"key", e.key},
                     {"name", info.value("name", std::string())},
                     {"arch", info.value("arch", std::string())},
                     {"bytes", e.bytes},
                     {"last_used", double(e.lastUsedNs) / 1e9},
                     {"valid", e.valid}});
    }
    tCacheList = arr.dump();
  });
  return s == QCT_OK ? tCacheList.c_str() : nullptr;
}

qct_status qct_cache_clear(uint64_t *removed_entries) {
  return guard([&] {
    std::uint64_t n = DiskCache::fromEnv().clear();
    clearMemoryCache();
    if (removed_entries)
      *removed_entries = n;
  });
}

void qct_cache_clear_memory(void) { clearMemoryCache(); }

qct_status qct_nvrtc_version(int *major, int *minor) {
  return guard([&] {
    Nvrtc &n = Nvrtc::get();
    if (major)
      *major = n.major();
    if (minor)
      *minor = n.minor();
  });
}

qct_status qct_default_arch(const char **arch) {
  return guard([&] {
    if (!arch)
      fail(QCT_ERR_INVALID_ARGUMENT, "qct_default_arch: arch is NULL");
    tArch = defaultArch();
    *arch = tArch.c_str();
  });
}

void *qct_driver_proc(const char *name) {
  void *p = nullptr;
  guard([&] {
    if (!name)
      fail(QCT_ERR_INVALID_ARGUMENT, "qct_driver_proc: name is NULL");
    p = Driver::get().proc(name);
    if (!p)
      fail(QCT_ERR_NO_DRIVER,
           std::string("the CUDA driver has no entry point ") + name);
  });
  return p;
}

const char *qct_toolchain_info_json(void) {
  qct_status s = guard([&] { tToolchain = toolchainInfoJson(); });
  return s == QCT_OK ? tToolchain.c_str() : nullptr;
}

} // extern "C"
