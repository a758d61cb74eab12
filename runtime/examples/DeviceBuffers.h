//===- DeviceBuffers.h - Example helper: buffers for any qct kernel -*- C++
//-*-===//
//
// Shared by the host-application example and the JIT benchmark: gets the few
// driver entry points it needs through qct_driver_proc (so the binaries load
// on machines without libcuda), sizes every buffer of a kernel from its
// metadata for given M, K, G, and fills the inputs with valid data.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_EXAMPLES_DEVICEBUFFERS_H
#define QCT_EXAMPLES_DEVICEBUFFERS_H

#include "qct/qct.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace qct::examples {

using CUdeviceptr = unsigned long long;

struct DriverFns {
  int (*memAlloc)(CUdeviceptr *, size_t);
  int (*memFree)(CUdeviceptr);
  int (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  int (*memcpyDtoH)(void *, CUdeviceptr, size_t);
  int (*streamCreate)(void **, unsigned);
  int (*streamSynchronize)(void *);
  int (*streamDestroy)(void *);
  int (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                      unsigned, unsigned, void *, void **, void **);

  /// False (with qct_last_error set) when there is no driver or GPU.
  bool load() {
    auto get = [](const char *name) { return qct_driver_proc(name); };
    void *p[8] = {get("cuMemAlloc_v2"),      get("cuMemFree_v2"),
                  get("cuMemcpyHtoD_v2"),    get("cuMemcpyDtoH_v2"),
                  get("cuStreamCreate"),     get("cuStreamSynchronize"),
                  get("cuStreamDestroy_v2"), get("cuLaunchKernel")};
    for (void *q : p)
      if (!q)
        return false;
    memAlloc = reinterpret_cast<decltype(memAlloc)>(p[0]);
    memFree = reinterpret_cast<decltype(memFree)>(p[1]);
    memcpyHtoD = reinterpret_cast<decltype(memcpyHtoD)>(p[2]);
    memcpyDtoH = reinterpret_cast<decltype(memcpyDtoH)>(p[3]);
    streamCreate = reinterpret_cast<decltype(streamCreate)>(p[4]);
    streamSynchronize = reinterpret_cast<decltype(streamSynchronize)>(p[5]);
    streamDestroy = reinterpret_cast<decltype(streamDestroy)>(p[6]);
    launchKernel = reinterpret_cast<decltype(launchKernel)>(p[7]);
    return true;
  }
};

inline void checkCu(int rc, const char *what) {
  if (rc != 0)
    throw std::runtime_error(std::string(what) + " failed with CUresult " +
                             std::to_string(rc));
}

inline qct_dtype dtypeOf(const std::string &meta) {
  if (meta == "u8")
    return QCT_DTYPE_U8;
  if (meta == "u16")
    return QCT_DTYPE_U16;
  if (meta == "bf16")
    return QCT_DTYPE_BF16;
  if (meta == "f16")
    return QCT_DTYPE_F16;
  if (meta == "f32")
    return QCT_DTYPE_F32;
  if (meta == "i32")
    return QCT_DTYPE_I32;
  if (meta == "i64")
    return QCT_DTYPE_I64;
  throw std::runtime_error("unknown metadata dtype " + meta);
}

inline size_t dtypeBytes(const std::string &meta) {
  if (meta == "u8")
    return 1;
  if (meta == "u16" || meta == "bf16" || meta == "f16")
    return 2;
  if (meta == "i64")
    return 8;
  return 4;
}

/// Every buffer of `kernel`, allocated and (inputs) filled, as launch tensors.
struct DeviceBuffers {
  DriverFns &cu;
  std::vector<CUdeviceptr> ptrs;
  std::vector<size_t> bytes;
  std::vector<qct_tensor> tensors;

  DeviceBuffers(DriverFns &cu, const qct::Kernel &kernel, int64_t M, int64_t K,
                int64_t G)
      : cu(cu) {
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < kernel.numBuffers(); ++i) {
      qct_buffer_info info = kernel.buffer(i);
      std::vector<int64_t> shape = kernel.bufferShape(i, M, K, G);
      int64_t numel = 1;
      for (int64_t d : shape)
        numel *= d;
      size_t n = size_t(numel) * dtypeBytes(info.dtype);
      CUdeviceptr p = 0;
      checkCu(cu.memAlloc(&p, n ? n : 16), "cuMemAlloc");
      std::vector<unsigned char> host(n);
      std::string field = info.field, dtype = info.dtype;
      if (field == "offsets") {
        // G groups of (nearly) equal size, the last one taking the remainder.
        for (int64_t g = 0; g <= G; ++g) {
          int64_t o = G ? g * (M / G) : 0;
          if (g == G)
            o = M;
          if (dtype == "i64")
            std::memcpy(&host[size_t(g) * 8], &o, 8);
          else {
            int32_t v = int32_t(o);
            std::memcpy(&host[size_t(g) * 4], &v, 4);
          }
        }
      } else if (!info.is_output && field == "src_scales" && dtype == "f32") {
        float one = 1.0f;
        for (int64_t e = 0; e < numel; ++e)
          std::memcpy(&host[size_t(e) * 4], &one, 4);
      } else if (!info.is_output && field == "src_scales") {
        for (auto &b : host) // e8m0 scales near 2^0
          b = static_cast<unsigned char>(
              120 + (rng = rng * 6364136223846793005ull + 1) % 16);
      } else if (!info.is_output) {
        for (auto &b : host)
          b = static_cast<unsigned char>(
              (rng = rng * 6364136223846793005ull + 1) >> 56);
      } else {
        std::memset(host.data(), 0xAB,
                    n); // the kernel must overwrite every byte
      }
      if (n)
        checkCu(cu.memcpyHtoD(p, host.data(), n), "cuMemcpyHtoD");
      qct_tensor t{};
      t.data = reinterpret_cast<void *>(p);
      t.dtype = dtypeOf(dtype);
      t.ndim = int32_t(shape.size());
      for (size_t d = 0; d < shape.size(); ++d)
        t.shape[d] = shape[d];
      ptrs.push_back(p);
      bytes.push_back(n);
      tensors.push_back(t);
    }
  }
  ~DeviceBuffers() {
    for (CUdeviceptr p : ptrs)
      cu.memFree(p);
  }
};

} // namespace qct::examples

#endif // QCT_EXAMPLES_DEVICEBUFFERS_H
