//===- Driver.cpp - The CUDA driver through dlopen
//-------------------------===//
#include "qct/runtime/Driver.h"

#include "qct/runtime/DynLib.h"
#include "qct/runtime/Env.h"
#include "qct/runtime/Error.h"

#include <mutex>

namespace qct::rt {

namespace {
constexpr int kNoDevice = 100; // CUDA_ERROR_NO_DEVICE
constexpr int kAttrCcMajor = 75, kAttrCcMinor = 76;

Driver gDriver;
std::once_flag gOnce;
} // namespace

void Driver::load() {
  const std::string soname =
      env::declared("QCT_CUDA_DRIVER_PATH").default_value;
  std::string named = env::get("QCT_CUDA_DRIVER_PATH");
  bool explicitPath = named != soname;
  if (!explicitPath && (handle = openIfLoaded(soname)))
    foundBy = "already loaded";
  std::string error;
  if (!handle && (handle = openLibrary(named, error)))
    foundBy = explicitPath ? "QCT_CUDA_DRIVER_PATH=" + named : "loader path";
  if (!handle) {
    std::string why =
        error.find("No such file") != std::string::npos
            ? named + " not found" +
                  (explicitPath ? ""
                                : " (not in LD_LIBRARY_PATH or the ldconfig "
                                  "cache: no NVIDIA driver on this machine)")
            : error;
    fail(QCT_ERR_NO_DRIVER,
         "no CUDA driver: " + why +
             "; compiling and validating work without one, launching does "
             "not");
  }
  path = loadedPath(handle);
  if (path.empty())
    path = named;
  auto need = [&](auto &fn, const char *name) {
    void *p = symbol(handle, name);
    if (!p)
      fail(QCT_ERR_NO_DRIVER, path + " lacks " + name);
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int *) = nullptr;
  need(cuInit, "cuInit");
  need(cuDriverGetVersion, "cuDriverGetVersion");
  need(cuGetErrorName, "cuGetErrorName");
  need(cuGetErrorString, "cuGetErrorString");
  need(cuDeviceGet, "cuDeviceGet");
  need(cuDeviceGetCount, "cuDeviceGetCount");
  need(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  need(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  need(cuCtxGetCurrent, "cuCtxGetCurrent");
  need(cuCtxSetCurrent, "cuCtxSetCurrent");
  need(cuCtxGetDevice, "cuCtxGetDevice");
  need(cuModuleLoadData, "cuModuleLoadData");
  need(cuModuleGetFunction, "cuModuleGetFunction");
  need(cuFuncSetAttribute, "cuFuncSetAttribute");
  need(cuLaunchKernel, "cuLaunchKernel");
  need(cuMemAlloc, "cuMemAlloc_v2");
  need(cuMemsetD32, "cuMemsetD32_v2");
  need(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  need(cuStreamSynchronize, "cuStreamSynchronize");
  cuDriverGetVersion(&version); // needs no cuInit: known even without a GPU
  CUresult rc = cuInit(0);
  if (rc == kNoDevice)
    fail(QCT_ERR_NO_DEVICE,
         "no GPU: the CUDA driver (" + path +
             ") found no device (cuInit: CUDA_ERROR_NO_DEVICE)");
  if (rc != 0) {
    const char *name = "?";
    cuGetErrorName(rc, &name);
    fail(QCT_ERR_NO_DRIVER, "no usable CUDA driver: cuInit failed with " +
                                std::string(name) + " (" + std::to_string(rc) +
                                ")");
  }
  int count = 0;
  if (cuDeviceGetCount(&count) != 0 || count == 0)
    fail(QCT_ERR_NO_DEVICE, "no GPU: the CUDA driver reports no device");
}

const Driver &Driver::probe() {
  std::call_once(gOnce, [] {
    try {
      gDriver.load();
    } catch (const RuntimeError &e) {
      gDriver.status = e.status;
      gDriver.error = e.what();
    }
  });
  return gDriver;
}

Driver &Driver::get() {
  probe();
  if (gDriver.status != QCT_OK)
    fail(gDriver.status, gDriver.error);
  return gDriver;
}

bool Driver::available() {
  try {
    get();
    return true;
  } catch (const RuntimeError &) {
    return false;
  }
}

void Driver::check(CUresult rc, const char *call) const {
  if (rc == 0)
    return;
  const char *name = "?", *text = "?";
  cuGetErrorName(rc, &name);
  cuGetErrorString(rc, &text);
  fail(QCT_ERR_CUDA, std::string(call) + " failed: " + name + " (" +
                         std::to_string(rc) + "): " + text);
}

CUcontext Driver::currentContext() const {
  CUcontext ctx = nullptr;
  check(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  if (!ctx) {
    CUdevice dev = 0;
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  }
  return ctx;
}

std::string Driver::currentArch() const {
  currentContext();
  CUdevice dev = 0;
  check(cuCtxGetDevice(&dev), "cuCtxGetDevice");
  int major = 0, minor = 0;
  check(cuDeviceGetAttribute(&major, kAttrCcMajor, dev),
        "cuDeviceGetAttribute");
  check(cuDeviceGetAttribute(&minor, kAttrCcMinor, dev),
        "cuDeviceGetAttribute");
  // Hopper and later have arch-specific features (wgmma, setmaxnreg, ...)
  // only reachable through the 'a' target; a cubin for sm_90a runs only on 9.0.
  return "sm_" + std::to_string(major) + std::to_string(minor) +
         (major >= 9 ? "a" : "");
}

void *Driver::proc(const char *name) const { return symbol(handle, name); }

} // namespace qct::rt
