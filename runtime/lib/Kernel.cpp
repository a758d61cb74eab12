//===- Kernel.cpp - Load (cache or compile) and launch a kernel
//------------===//
#include "qct/runtime/Kernel.h"

#include "qct/runtime/CubinInfo.h"
#include "qct/runtime/DeviceHeaders.h"
#include "qct/runtime/DiskCache.h"
#include "qct/runtime/Env.h"
#include "qct/runtime/Error.h"
#include "qct/runtime/Nvrtc.h"
#include "qct/runtime/Sha256.h"
#include "qct/runtime/Validate.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>

#ifndef QCT_RUNTIME_VERSION
#error "QCT_RUNTIME_VERSION must be defined by the build"
#endif

namespace qct::rt {

namespace {
constexpr int kFuncAttrMaxDynamicSmem =
    8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

std::mutex gMemoryMu;
std::unordered_map<std::string, std::shared_ptr<CompiledBinary>> gMemory;

bool verbose() {
  try {
    return env::getInt("QCT_VERBOSE") > 0;
  } catch (...) {
    return false;
  }
}

std::string readText(const std::string &path, const char *what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(QCT_ERR_INVALID_ARGUMENT,
         std::string("cannot read ") + what + " '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string baseName(const std::string &path) {
  std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void dump(const std::string &dir, const std::string &stem, const char *ext,
          const std::string &data) {
  std::ofstream(dir + "/" + stem + ext, std::ios::binary) << data;
}

std::string versionsText(const KernelMeta &m, const std::string &arch) {
  std::string nvrtc = "unavailable";
  try {
    const Nvrtc &n = Nvrtc::get();
    nvrtc = n.version() + " (" + n.path() + ", found by " + n.foundBy() + ")";
  } catch (const RuntimeError &) {
  }
  return std::string("qct runtime ") + QCT_RUNTIME_VERSION + "\nNVRTC " +
         nvrtc + "\nqct compiler " + m.compilerVersion + " (spec_hash " +
         m.specHash + ")\narch " + arch + "\n";
}
} // namespace

std::string defaultArch() {
  std::string arch = env::get("QCT_ARCH");
  if (!arch.empty())
    return arch;
  try {
    return Driver::get().currentArch();
  } catch (const RuntimeError &e) {
    fail(e.status, std::string(e.what()) +
                       "\n(to compile without a GPU, pass an arch "
                       "such as sm_90a or set QCT_ARCH)");
  }
}

std::vector<std::string>
nvrtcOptions(const std::string &arch,
             const std::map<std::string, std::int64_t> &schedule,
             const std::vector<std::string> &extra) {
  // No --use_fast_math: the numerics contract fixes every output bit.
  std::vector<std::string> o = {"--gpu-architecture=" + arch, "-std=c++17",
                                "-default-device", "--ptxas-options=-v"};
  for (const auto &[name, value] : schedule) // std::map: sorted, stable
    o.push_back("-D" + name + "=" + std::to_string(value));
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

void clearMemoryCache() {
  std::lock_guard<std::mutex> lock(gMemoryMu);
  gMemory.clear();
}

std::unique_ptr<Kernel> Kernel::load(const std::string &sourceArg,
                                     const std::string &metadataArg,
                                     const LoadOptions &opts) {
  auto k = std::make_unique<Kernel>();
  bool sourceIsText = sourceArg.find('\n') != std::string::npos;
  k->source = sourceIsText ? sourceArg : readText(sourceArg, "CUDA source");
  std::string metaText = metadataArg;
  if (metaText.empty()) {
    if (sourceIsText)
      fail(QCT_ERR_INVALID_ARGUMENT,
           "metadata is required when the source is given as text");
    std::string stem = sourceArg;
    std::size_t dot = stem.rfind('.');
    if (dot != std::string::npos && stem.find('/', dot) == std::string::npos)
      stem.resize(dot);
    metaText = readText(stem + ".json", "metadata");
  } else {
    std::size_t first = metaText.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || metaText[first] != '{')
      metaText = readText(metadataArg, "metadata");
  }
  k->meta = parseMetadata(metaText, opts.schedule);
  k->sourceName = sourceIsText ? k->meta.name + ".cu" : baseName(sourceArg);
  k->arch = opts.arch.empty() ? defaultArch() : opts.arch;
  for (const auto &[name, value] : k->meta.schedule)
    k->scheduleText += name + "=" + std::to_string(value) + "\n";
  k->options = nvrtcOptions(k->arch, k->meta.schedule, opts.extraOptions);
  for (const auto &o : k->options)
    k->optionsText += o + "\n";

  Nvrtc &nvrtc = Nvrtc::get();
  CacheKeyInputs &in = k->keyInputs;
  in.specHash = k->meta.specHash;
  in.entry = k->meta.entry;
  in.sourceHash = sha256Hex(k->source);
  in.schedule = k->scheduleText;
  in.arch = k->arch;
  in.nvrtcVersion = nvrtc.version();
  in.deviceHeadersHash = deviceHeadersHash();
  in.compilerVersion = k->meta.compilerVersion;
  in.runtimeVersion = QCT_RUNTIME_VERSION;
  in.kernelArgsVersion = k->meta.kernelArgsVersion;
  in.options = k->optionsText;
  in.env = env::outputAffectingValues();
  k->key = computeCacheKey(in);

  bool cached = !opts.disableCache && !env::getBool("QCT_CACHE_DISABLE");
  if (cached) {
    std::lock_guard<std::mutex> lock(gMemoryMu);
    auto it = gMemory.find(k->key);
    if (it != gMemory.end()) {
      k->binary = it->second;
      k->origin = QCT_ORIGIN_MEMORY;
      return k;
    }
  }

  auto bin = std::make_shared<CompiledBinary>();
  bin->key = k->key;
  bin->arch = k->arch;
  // Only a cached load reads the cache's settings: with the cache disabled a
  // malformed QCT_CACHE_MAX_BYTES must not fail the load.
  std::optional<DiskCache> disk;
  if (cached)
    disk.emplace(DiskCache::fromEnv());
  CacheEntry entry;
  if (cached && disk->load(k->key, entry)) {
    bin->cubin = std::move(entry.cubin);
    try {
      bin->log = nlohmann::json::parse(entry.info).value("log", std::string());
    } catch (const nlohmann::json::exception &) {
    }
    k->origin = QCT_ORIGIN_DISK;
    if (verbose())
      std::fprintf(stderr, "qct: disk cache hit %s for %s\n", k->key.c_str(),
                   k->meta.name.c_str());
  } else {
    auto start = std::chrono::steady_clock::now();
    NvrtcResult r;
    try {
      r = nvrtc.compile(k->source, k->sourceName, deviceHeaders(), k->options);
    } catch (RuntimeError &e) {
      e.versions = versionsText(k->meta, k->arch);
      throw;
    }
    bin->cubin = std::move(r.cubin);
    bin->log = std::move(r.log);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (verbose())
      std::fprintf(stderr, "qct: compiled %s for %s in %.1f ms (key %s)\n",
                   k->meta.name.c_str(), k->arch.c_str(), ms, k->key.c_str());
    std::string dumpDir = env::get("QCT_DUMP_DIR");
    if (!dumpDir.empty()) {
      std::string stem = k->meta.name + "-" + k->key.substr(0, 16);
      dump(dumpDir, stem, ".cu", k->source);
      dump(dumpDir, stem, ".options", k->optionsText);
      dump(dumpDir, stem, ".log", bin->log);
      dump(dumpDir, stem, ".cubin", bin->cubin);
    }
    if (cached) {
      nlohmann::json info = {{"name", k->meta.name},
                             {"entry", k->meta.entry},
                             {"arch", k->arch},
                             {"nvrtc", in.nvrtcVersion},
                             {"runtime", QCT_RUNTIME_VERSION},
                             {"spec_hash", in.specHash},
                             {"schedule", k->scheduleText},
                             {"log", bin->log},
                             {"created", std::int64_t(std::time(nullptr))}};
      disk->store(k->key, CacheEntry{info.dump(), bin->cubin});
    }
  }
  bin->stats = kernelStats(bin->cubin, bin->log, k->meta.entry);
  k->binary = bin;
  if (cached) {
    std::lock_guard<std::mutex> lock(gMemoryMu);
    k->binary = gMemory.emplace(k->key, bin).first->second; // first one wins
  }
  return k;
}

void Kernel::validate(const qct_tensor *tensors, std::size_t count,
                      qct_launch_plan &plan, qct_kernel_args &args) const {
  std::lock_guard<std::mutex> lock(memoMu);
  validateLaunch(meta, tensors, count, plan, args, &memo);
}

ContextState &Kernel::prepare() {
  Driver &drv = Driver::get();
  CUcontext ctx = drv.currentContext();
  CompiledBinary &bin = *binary;
  std::lock_guard<std::mutex> lock(bin.mu);
  auto it = bin.contexts.find(ctx);
  if (it != bin.contexts.end())
    return it->second;
  ContextState st;
  drv.check(drv.cuModuleLoadData(&st.module, bin.cubin.data()),
            ("cuModuleLoadData (" + meta.name + ", " + bin.arch + ")").c_str());
  drv.check(
      drv.cuModuleGetFunction(&st.function, st.module, meta.entry.c_str()),
      ("cuModuleGetFunction(" + meta.entry + ")").c_str());
  if (meta.errorFlag) {
    drv.check(drv.cuMemAlloc(&st.errorFlag, 16), "cuMemAlloc (error flag)");
    drv.check(drv.cuMemsetD32(st.errorFlag, 0, 1), "cuMemsetD32 (error flag)");
  }
  return bin.contexts.emplace(ctx, st).first->second;
}

void Kernel::launch(const qct_tensor *tensors, std::size_t count,
                    void *stream) {
  qct_launch_plan plan;
  qct_kernel_args args;
  validate(tensors, count, plan, args);
  if (plan.grid[0] == 0 || plan.grid[1] == 0 || plan.grid[2] == 0)
    return; // nothing to do (e.g. M == 0 without groups)
  ContextState &st = prepare();
  Driver &drv = Driver::get();
  args.error_flag = reinterpret_cast<unsigned int *>(st.errorFlag);
  // Above the 48 KiB every launch gets, the function needs an opt-in; the
  // limit is read and raised under the lock (launches may race), and launches
  // under 48 KiB, nearly all of them, never take it.
  if (plan.dynamic_smem_bytes > 48 * 1024) {
    std::lock_guard<std::mutex> lock(binary->mu);
    if (plan.dynamic_smem_bytes > st.smemLimit) {
      drv.check(drv.cuFuncSetAttribute(st.function, kFuncAttrMaxDynamicSmem,
                                       int(plan.dynamic_smem_bytes)),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
      st.smemLimit = plan.dynamic_smem_bytes;
    }
  }
  void *params[] = {&args};
  drv.check(drv.cuLaunchKernel(st.function, plan.grid[0], plan.grid[1],
                               plan.grid[2], plan.block[0], plan.block[1],
                               plan.block[2], plan.dynamic_smem_bytes,
                               static_cast<CUstream>(stream), params, nullptr),
            "cuLaunchKernel", meta.entry);
}

std::uint32_t Kernel::checkErrors(void *stream) {
  Driver &drv = Driver::get();
  drv.check(drv.cuStreamSynchronize(static_cast<CUstream>(stream)),
            "cuStreamSynchronize");
  if (!meta.errorFlag)
    return 0;
  ContextState &st = prepare();
  std::uint32_t flags = 0;
  drv.check(drv.cuMemcpyDtoH(&flags, st.errorFlag, sizeof flags),
            "cuMemcpyDtoH (error flag)");
  if (flags != 0)
    drv.check(drv.cuMemsetD32(st.errorFlag, 0, 1),
              "cuMemsetD32 (error flag reset)");
  return flags;
}

} // namespace qct::rt
