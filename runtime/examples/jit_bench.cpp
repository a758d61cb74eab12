//===- jit_bench.cpp - What the JIT costs: compile, cache load, launch
//-----===//
//
//   qct-jit-bench --out RESULTS.json [--arch sm_90a] [--launches N] [--M N]
//   [--K N] [--G N]
//                 [--compile-only] KERNEL.cu [KERNEL.cu ...]   (metadata .json
//                 beside each)
//
// Per kernel: cold NVRTC compile (caches disabled), warm disk-cache load (in-
// memory cache dropped, disk entry present), in-memory cache hit, and on a GPU
// the host-side cost per launch of qct_kernel_launch (validation included)
// against a bare cuLaunchKernel of the same CUfunction and arguments. Not a
// test: it measures and writes JSON.
//
//===----------------------------------------------------------------------===//
#include "DeviceBuffers.h"

#include "qct/kernel_args.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace qct::examples;
using Clock = std::chrono::steady_clock;

namespace {
double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Times `launch` over `count` calls, in batches synchronized between them so
// the driver's launch queue never fills (which would time the GPU instead).
template <typename F>
double usPerLaunch(DriverFns &cu, void *stream, int count, F &&launch) {
  const int batch = 256;
  double total = 0;
  for (int done = 0; done < count; done += batch) {
    int n = std::min(batch, count - done);
    auto t = Clock::now();
    for (int i = 0; i < n; ++i)
      launch();
    total +=
        std::chrono::duration<double, std::micro>(Clock::now() - t).count();
    checkCu(cu.streamSynchronize(stream), "cuStreamSynchronize");
  }
  return total / count;
}
} // namespace

int main(int argc, char **argv) {
  std::string out, arch;
  int launches = 10000, reps = 3;
  bool compileOnly = false, computeCache = false;
  int64_t M = 256, K = 7168, G = 2;
  std::vector<std::string> kernels;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "qct-jit-bench: %s needs a value\n", a.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--out")
      out = value();
    else if (a == "--arch")
      arch = value();
    else if (a == "--launches")
      launches = std::atoi(value().c_str());
    else if (a == "--nvrtc-compute-cache")
      computeCache = true;
    else if (a == "--compile-only")
      compileOnly = true;
    else if (a == "--reps")
      reps = std::atoi(value().c_str());
    else if (a == "--M")
      M = std::atoll(value().c_str());
    else if (a == "--K")
      K = std::atoll(value().c_str());
    else if (a == "--G")
      G = std::atoll(value().c_str());
    else
      kernels.push_back(a);
  }
  if (out.empty() || kernels.empty()) {
    std::fprintf(
        stderr,
        "usage: qct-jit-bench --out RESULTS.json [--arch ARCH] [--launches N] "
        "[--reps N] [--M N] [--K N] [--G N] [--compile-only] "
        "[--nvrtc-compute-cache] KERNEL.cu...\n");
    return 1;
  }

  // With a driver present, NVRTC reuses ptxas results from the CUDA compute
  // cache (~/.nv/ComputeCache): "cold" would then time a cache hit. Disable
  // it unless asked, before NVRTC is first loaded.
  if (!computeCache)
    ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  DriverFns cu;
  bool gpu = !compileOnly && cu.load();
  std::string noGpu = gpu           ? ""
                      : compileOnly ? "--compile-only"
                                    : qct_last_error();
  int nvMajor = 0, nvMinor = 0;
  qct_nvrtc_version(&nvMajor, &nvMinor);
  nlohmann::json results = {
      {"runtime", qct_version()},
      {"nvrtc", std::to_string(nvMajor) + "." + std::to_string(nvMinor)},
      {"gpu", gpu},
      {"cuda_compute_cache", computeCache},
      {"launches", launches},
      {"M", M},
      {"K", K},
      {"kernels", nlohmann::json::array()}};
  if (!gpu)
    results["no_gpu_reason"] = noGpu;
  int status = 0;
  for (const std::string &path : kernels) {
    nlohmann::json r = {{"source", path}};
    try {
      qct::LoadOptions cold;
      cold.arch = arch;
      cold.disableCache = true;
      std::vector<double> coldMs, diskMs, memMs;
      for (int i = 0; i < reps; ++i) {
        auto t = Clock::now();
        qct::Kernel k(path, {}, cold);
        coldMs.push_back(msSince(t));
        if (i == 0) {
          r["name"] = k.name();
          r["arch"] = k.arch();
          qct_kernel_stats s = k.stats();
          r["registers"] = s.registers;
          r["local_memory_bytes"] = s.local_memory_bytes;
          r["spill_bytes"] = s.spill_store_bytes + s.spill_load_bytes;
        }
      }
      qct::LoadOptions warm;
      warm.arch = arch;
      {
        qct::Kernel populate(path, {}, warm);
      } // the disk entry exists after this
      for (int i = 0; i < reps * 3; ++i) {
        qct_cache_clear_memory();
        auto t = Clock::now();
        qct::Kernel k(path, {}, warm);
        diskMs.push_back(msSince(t));
        if (k.origin() != QCT_ORIGIN_DISK)
          throw std::runtime_error(
              "expected a disk cache hit (is the cache disabled or "
              "unwritable?)");
      }
      for (int i = 0; i < reps * 3; ++i) {
        auto t = Clock::now();
        qct::Kernel k(path, {}, warm);
        memMs.push_back(msSince(t));
      }
      r["cold_compile_ms"] = median(coldMs);
      r["cold_compile_ms_all"] = coldMs;
      r["disk_cache_load_ms"] = median(diskMs);
      r["memory_cache_load_ms"] = median(memMs);

      if (gpu) {
        qct::Kernel k(path, {}, warm);
        k.prepare();
        bool ragged = false;
        for (size_t i = 0; i < k.numBuffers(); ++i)
          ragged |= std::string(k.buffer(i).field) == "offsets";
        DeviceBuffers bufs(cu, k, M, K, ragged ? G : 0);
        qct_launch_plan plan = k.validate(bufs.tensors);
        // The same arguments the runtime builds, for the bare launch.
        qct_kernel_args args{};
        for (size_t i = 0; i < k.numBuffers(); ++i) {
          std::string f = k.buffer(i).field;
          void *p = bufs.tensors[i].data;
          if (f == "src")
            args.src = p;
          else if (f == "src_scales")
            args.src_scales = p;
          else if (f == "offsets")
            args.offsets = p;
          else if (f == "padded_offsets")
            args.padded_offsets = p;
          else if (f.rfind("out_scales[", 0) == 0)
            args.out_scales[f[11] - '0'] = p;
          else if (f.rfind("out[", 0) == 0)
            args.out[f[4] - '0'] = p;
        }
        CUdeviceptr flag = 0;
        checkCu(cu.memAlloc(&flag, 16), "cuMemAlloc");
        args.error_flag = reinterpret_cast<unsigned *>(flag);
        args.M = plan.M;
        args.K = plan.K;
        args.G = plan.G;
        void *fn = k.function();
        void *stream = nullptr;
        checkCu(cu.streamCreate(&stream, 0), "cuStreamCreate");
        void *params[] = {&args};
        auto bare = [&] {
          checkCu(cu.launchKernel(fn, plan.grid[0], plan.grid[1], plan.grid[2],
                                  plan.block[0], plan.block[1], plan.block[2],
                                  plan.dynamic_smem_bytes, stream, params,
                                  nullptr),
                  "cuLaunchKernel");
        };
        auto viaQct = [&] { k.launch(bufs.tensors, stream); };
        usPerLaunch(cu, stream, 512, bare); // warm up both paths
        usPerLaunch(cu, stream, 512, viaQct);
        double bareUs = usPerLaunch(cu, stream, launches, bare);
        double qctUs = usPerLaunch(cu, stream, launches, viaQct);
        k.checkErrors(stream);
        r["bare_launch_us"] = bareUs;
        r["qct_launch_us"] = qctUs;
        r["launch_overhead_us"] = qctUs - bareUs;
        r["grid"] = {plan.grid[0], plan.grid[1], plan.grid[2]};
        cu.streamDestroy(stream);
        cu.memFree(flag);
      }
    } catch (const std::exception &e) {
      r["error"] = e.what();
      std::fprintf(stderr, "qct-jit-bench: %s: %s\n", path.c_str(), e.what());
      status = 1;
    }
    results["kernels"].push_back(r);
  }
  std::ofstream(out) << results.dump(2) << "\n";
  std::printf("%s\n", results.dump(2).c_str());
  return status;
}
