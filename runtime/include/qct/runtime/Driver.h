//===- qct/runtime/Driver.h - The CUDA driver API, loaded at run time -*- C++
//-*-===//
//
// libcuda.so.1 is dlopened on first use, so the runtime loads (and compiles,
// and validates) on machines without a GPU; only launching needs the driver.
// It comes with the NVIDIA driver (no toolkit or wheel ships a usable one):
// $QCT_CUDA_DRIVER_PATH if set, else one already in the process, else the
// loader path.
// The few driver types are declared here so no CUDA header is needed to build.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_DRIVER_H
#define QCT_RUNTIME_DRIVER_H

#include "qct/qct.h"

#include <cstddef>
#include <string>

namespace qct::rt {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;

struct Driver {
  /// The process-wide driver after cuInit; throws RuntimeError with
  /// QCT_ERR_NO_DRIVER (no libcuda / cuInit failed) or QCT_ERR_NO_DEVICE.
  static Driver &get();
  /// True if get() would succeed (never throws).
  static bool available();
  /// The same instance, usable or not (never throws): for reports of what
  /// was loaded and why (qct_toolchain_info_json).
  static const Driver &probe();

  std::string path;    ///< the file loaded; empty if none
  std::string foundBy; ///< "QCT_CUDA_DRIVER_PATH=...", "already loaded", ...
  int version = 0;     ///< cuDriverGetVersion, e.g. 13000
  void *handle = nullptr;
  qct_status status = QCT_OK; ///< why get() fails, with `error` (one line)
  std::string error;

  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetDevice)(CUdevice *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuStreamSynchronize)(CUstream);

  /// Throws RuntimeError(QCT_ERR_CUDA) naming `call` and the driver's error.
  void check(CUresult rc, const char *call) const;
  /// As above, naming `subject` (e.g. the kernel) in the message; the text is
  /// only built on failure, so hot paths (launch) pay nothing for it.
  void check(CUresult rc, const char *call, const std::string &subject) const {
    if (rc != 0)
      check(rc, (std::string(call) + "(" + subject + ")").c_str());
  }

  /// The current context, retaining device 0's primary context (and making
  /// it current) when the thread has none, as the CUDA runtime does.
  CUcontext currentContext() const;
  /// "sm_90a" for the current context's device (arch-specific 'a' for >= 9.0).
  std::string currentArch() const;

  void *proc(const char *name) const;

private:
  void load();
};

} // namespace qct::rt

#endif // QCT_RUNTIME_DRIVER_H
