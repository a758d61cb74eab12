//===- host_app.cpp - A host application that JIT-compiles a qct kernel ---===//
//
//   qct_host_app (SPEC.json | KERNEL.cu [KERNEL.json]) [--M N] [--K N] [--G N]
//                [--schedule NAME=VALUE]... [--arch ARCH]
//
// Given a spec, compiles it at run time through the compiler library
// (qct_kernel_load_spec) and then with NVRTC; given a generated kernel,
// compiles that with NVRTC (both through the cache). Then it
// allocates the buffers with the CUDA driver API, launches on a stream of
// its own, checks the device error flag and prints a checksum of each output.
// Exits 2 with a clear message on a machine without a GPU or driver.
//
//===----------------------------------------------------------------------===//
#include "DeviceBuffers.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

using namespace qct::examples;

int main(int argc, char **argv) {
  std::string source, metadata;
  int64_t M = 1000, K = 7168, G = 4;
  qct::LoadOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "qct_host_app: %s needs a value\n", a.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--M")
      M = std::atoll(value().c_str());
    else if (a == "--K")
      K = std::atoll(value().c_str());
    else if (a == "--G")
      G = std::atoll(value().c_str());
    else if (a == "--schedule")
      options.schedule.push_back(value());
    else if (a == "--arch")
      options.arch = value();
    else if (source.empty())
      source = a;
    else if (metadata.empty())
      metadata = a;
    else {
      std::fprintf(stderr, "qct_host_app: unexpected argument %s\n", a.c_str());
      return 1;
    }
  }
  if (source.empty()) {
    std::fprintf(
        stderr,
        "usage: qct_host_app (SPEC.json | KERNEL.cu [KERNEL.json]) [--M N] "
        "[--K N] [--G N] [--schedule NAME=VALUE]... [--arch ARCH]\n");
    return 1;
  }

  // A spec is a .json that is not a kernel's metadata (which sits beside its
  // .cu); the compiler tells the two apart for real.
  const bool isSpec = metadata.empty() && source.size() > 5 &&
                      source.compare(source.size() - 5, 5, ".json") == 0;
  DriverFns cu;
  const bool gpu = cu.load();
  if (!gpu && options.arch.empty()) {
    std::fprintf(stderr,
                 "qct_host_app: no GPU available (pass --arch sm_90a to "
                 "compile only): %s\n",
                 qct_last_error());
    return 2;
  }
  try {
    qct::Kernel kernel = isSpec ? qct::Kernel::fromSpec(source, options)
                                : qct::Kernel(source, metadata, options);
    if (isSpec)
      std::printf("spec %s: lowered to CUDA at run time by the qct compiler "
                  "library\n",
                  source.c_str());
    qct_kernel_stats st = kernel.stats();
    std::string spills =
        st.spill_store_bytes < 0
            ? std::string("spills not reported (NVRTC printed no ptxas log)")
            : std::to_string(st.spill_store_bytes + st.spill_load_bytes) +
                  " bytes spilled";
    std::printf("kernel %s (%s), arch %s, %s, %d registers, %lld bytes local "
                "memory, %s\n",
                kernel.name().c_str(), kernel.entry().c_str(),
                kernel.arch().c_str(),
                kernel.origin() == QCT_ORIGIN_COMPILED ? "compiled"
                : kernel.origin() == QCT_ORIGIN_DISK   ? "from the disk cache"
                                                     : "from the memory cache",
                st.registers, (long long)st.local_memory_bytes, spills.c_str());
    if (!gpu) {
      std::fprintf(stderr, "qct_host_app: compiled; no GPU to launch on: %s\n",
                   qct_last_error());
      return 2;
    }
    kernel.prepare(); // makes the primary context current, loads the module
    bool ragged = false;
    for (size_t i = 0; i < kernel.numBuffers(); ++i)
      ragged |= std::string(kernel.buffer(i).field) == "offsets";
    if (!ragged)
      G = 0;
    DeviceBuffers bufs(cu, kernel, M, K, G);
    qct_launch_plan plan = kernel.validate(bufs.tensors);
    std::printf(
        "M=%lld K=%lld G=%lld grid=(%u,%u,%u) block=(%u,%u,%u) smem=%u\n",
        (long long)plan.M, (long long)plan.K, (long long)plan.G, plan.grid[0],
        plan.grid[1], plan.grid[2], plan.block[0], plan.block[1], plan.block[2],
        plan.dynamic_smem_bytes);
    void *stream = nullptr;
    checkCu(cu.streamCreate(&stream, 0), "cuStreamCreate");
    kernel.launch(bufs.tensors, stream);
    kernel.checkErrors(stream); // synchronizes the stream
    for (size_t i = 0; i < kernel.numBuffers(); ++i) {
      qct_buffer_info info = kernel.buffer(i);
      if (!info.is_output)
        continue;
      std::vector<unsigned char> host(bufs.bytes[i]);
      if (!host.empty())
        checkCu(cu.memcpyDtoH(host.data(), bufs.ptrs[i], host.size()),
                "cuMemcpyDtoH");
      uint64_t h = 1469598103934665603ull; // FNV-1a
      size_t untouched = 0;
      for (unsigned char b : host) {
        h = (h ^ b) * 1099511628211ull;
        untouched += b == 0xAB;
      }
      std::printf(
          "output %-16s %10zu bytes  fnv1a64=%016llx  bytes still 0xAB: %zu\n",
          info.name, host.size(), (unsigned long long)h, untouched);
    }
    cu.streamDestroy(stream);
  } catch (const qct::Error &e) {
    std::fprintf(stderr, "qct_host_app: %s: %s\n", e.statusName(), e.what());
    bool noGpu =
        e.status() == QCT_ERR_NO_DRIVER || e.status() == QCT_ERR_NO_DEVICE;
    return noGpu ? 2 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "qct_host_app: %s\n", e.what());
    return 1;
  }
  return 0;
}
