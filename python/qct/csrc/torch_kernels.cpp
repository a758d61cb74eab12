//===- torch_kernels.cpp - qct kernels as C++ CUDA kernels of torch ops ---===//
//
// qct.ops defines each kernel's two ops (`qct::<name>` and `qct::<name>_out`)
// from Python; this library gives them CUDA kernels in C++, so that a call
// goes from torch's dispatcher straight to qct_kernel_launch without entering
// Python (a Python kernel costs the dispatcher's trip back into the
// interpreter on every call). One boxed functor serves every op: it reads the
// tensors off the stack, allocates the outputs of the functional op with the
// shapes the runtime evaluates, and launches on torch's current stream.
//
// qct.ops builds it with torch.utils.cpp_extension where torch's toolchain is
// there, and keeps its Python kernels where it is not. The runtime is reached
// through function pointers from the library qct's binding loaded, so both
// see the same kernels, and this library links nothing of qct.
//
//===----------------------------------------------------------------------===//
#include "qct/qct.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

using LaunchFn = qct_status (*)(qct_kernel *, const qct_tensor *, size_t,
                                void *);
using ShapeFn = qct_status (*)(const qct_kernel *, size_t, int64_t, int64_t,
                               int64_t, int64_t *, int32_t *);
using ErrorFn = const char *(*)(qct_error_field);

struct Runtime {
  LaunchFn launch = nullptr;
  ShapeFn shape = nullptr;
  ErrorFn error = nullptr;
};
Runtime runtime;

/// What a torch tensor's dtype is to the runtime (qct_dtype), 0 if nothing.
int32_t qctDtype(c10::ScalarType t) {
  switch (t) {
  case c10::ScalarType::Byte:
    return QCT_DTYPE_U8;
  case c10::ScalarType::Char:
    return QCT_DTYPE_I8;
  case c10::ScalarType::Short:
    return QCT_DTYPE_I16;
  case c10::ScalarType::BFloat16:
    return QCT_DTYPE_BF16;
  case c10::ScalarType::Half:
    return QCT_DTYPE_F16;
  case c10::ScalarType::Float:
    return QCT_DTYPE_F32;
  case c10::ScalarType::Double:
    return QCT_DTYPE_F64;
  case c10::ScalarType::Int:
    return QCT_DTYPE_I32;
  case c10::ScalarType::Long:
    return QCT_DTYPE_I64;
  case c10::ScalarType::Float8_e4m3fn:
    return QCT_DTYPE_FP8_E4M3;
  case c10::ScalarType::Float8_e5m2:
    return QCT_DTYPE_FP8_E5M2;
  case c10::ScalarType::Float8_e8m0fnu:
    return QCT_DTYPE_E8M0;
  case c10::ScalarType::Float4_e2m1fn_x2:
    return QCT_DTYPE_FP4_E2M1_X2;
  case c10::ScalarType::UInt16:
    return QCT_DTYPE_U16;
  case c10::ScalarType::UInt32:
    return QCT_DTYPE_U32;
  default:
    return 0;
  }
}

/// The torch type of an output from its metadata dtype and element.
c10::ScalarType outputType(const std::string &dtype,
                           const std::string &element) {
  if (element == "fp8_e4m3")
    return c10::ScalarType::Float8_e4m3fn;
  if (element == "fp8_e5m2")
    return c10::ScalarType::Float8_e5m2;
  if (element == "e8m0")
    return c10::ScalarType::Float8_e8m0fnu;
  if (element == "fp4_e2m1_x2")
    return c10::ScalarType::Float4_e2m1fn_x2;
  if (dtype == "bf16")
    return c10::ScalarType::BFloat16;
  if (dtype == "f16")
    return c10::ScalarType::Half;
  if (dtype == "f32")
    return c10::ScalarType::Float;
  if (dtype == "i32")
    return c10::ScalarType::Int;
  if (dtype == "i64")
    return c10::ScalarType::Long;
  if (dtype == "u16")
    return c10::ScalarType::Short;
  return c10::ScalarType::Byte;
}

constexpr size_t kMaxTensors = 16;

class KernelFunctor final : public c10::OperatorKernel {
public:
  KernelFunctor(qct_kernel *kernel, bool functional, size_t inputs,
                std::vector<c10::ScalarType> outputTypes,
                std::vector<int64_t> srcDims, int64_t offsetsIndex)
      : kernel(kernel), functional(functional), inputs(inputs),
        outputTypes(std::move(outputTypes)), srcDims(std::move(srcDims)),
        offsetsIndex(offsetsIndex) {}

  void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet,
                  torch::jit::Stack *stack) {
    const auto &schema = op.schema();
    size_t nargs = schema.arguments().size();
    auto args = torch::jit::last(*stack, nargs);
    size_t count = inputs + outputTypes.size();
    TORCH_CHECK(count <= kMaxTensors, "qct: too many tensors");
    std::vector<at::Tensor> tensors;
    tensors.reserve(count);
    for (size_t i = 0; i < nargs; ++i)
      tensors.push_back(args[i].toTensor());

    const at::Tensor &src = tensors[0];
    c10::DeviceIndex device = src.device().index();
    for (size_t i = 0; i < tensors.size(); ++i)
      TORCH_CHECK(tensors[i].is_cuda() && tensors[i].device().index() == device,
                  "argument '", schema.arguments()[i].name(), "': on ",
                  tensors[i].device(), ", but '", schema.arguments()[0].name(),
                  "' is on ", src.device());
    c10::cuda::CUDAGuard guard(device);

    if (functional) {
      // M and K from the source's dimensions (srcDims: 0 for M, n for K/n),
      // G from the offsets' length; the runtime evaluates the shapes.
      TORCH_CHECK(src.dim() == static_cast<int64_t>(srcDims.size()),
                  "argument '", schema.arguments()[0].name(), "': expected ",
                  srcDims.size(), " dims, found ", src.dim());
      int64_t M = 0, K = 0, G = 0;
      for (size_t d = 0; d < srcDims.size(); ++d) {
        if (srcDims[d] == 0)
          M = src.size(d);
        else
          K = src.size(d) * srcDims[d];
      }
      if (offsetsIndex >= 0)
        G = tensors[offsetsIndex].numel() - 1;
      for (size_t j = 0; j < outputTypes.size(); ++j) {
        int64_t shape[QCT_MAX_DIMS];
        int32_t ndim = 0;
        check(runtime.shape(kernel, inputs + j, M, K, G, shape, &ndim));
        tensors.push_back(at::empty(c10::IntArrayRef(shape, ndim),
                                    src.options().dtype(outputTypes[j])));
      }
    }

    qct_tensor desc[kMaxTensors] = {};
    for (size_t i = 0; i < tensors.size(); ++i) {
      const at::Tensor &t = tensors[i];
      qct_tensor &d = desc[i];
      TORCH_CHECK(t.dim() <= QCT_MAX_DIMS, "argument '",
                  i < nargs ? schema.arguments()[i].name() : "output", "': ",
                  t.dim(), " dims (at most ", QCT_MAX_DIMS, ")");
      d.data = t.data_ptr();
      d.ndim = static_cast<int32_t>(t.dim());
      d.dtype = qctDtype(t.scalar_type());
      for (int64_t k = 0; k < t.dim(); ++k) {
        d.shape[k] = t.size(k);
        d.strides[k] = t.stride(k);
      }
    }
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device).stream();
    check(runtime.launch(kernel, desc, tensors.size(), stream));

    torch::jit::drop(*stack, nargs);
    if (functional)
      for (size_t j = 0; j < outputTypes.size(); ++j)
        torch::jit::push(*stack, std::move(tensors[inputs + j]));
  }

private:
  void check(qct_status status) {
    if (status != QCT_OK)
      TORCH_CHECK(false, runtime.error(QCT_ERROR_FIELD_MESSAGE));
  }

  qct_kernel *kernel;
  bool functional;
  size_t inputs;
  std::vector<c10::ScalarType> outputTypes;
  std::vector<int64_t> srcDims;
  int64_t offsetsIndex;
};

std::vector<std::unique_ptr<torch::Library>> &libraries() {
  static std::vector<std::unique_ptr<torch::Library>> libs;
  return libs;
}

std::vector<std::string> split(const char *text) {
  std::vector<std::string> out;
  std::string item;
  for (const char *p = text; *p; ++p) {
    if (*p == ',') {
      out.push_back(item);
      item.clear();
    } else {
      item += *p;
    }
  }
  if (!item.empty() || !out.empty())
    out.push_back(item);
  return out;
}

} // namespace

extern "C" {

/// Binds the runtime's entry points (from the library the Python binding
/// loaded).
void qct_torch_bind_runtime(void *launch, void *shape, void *error) {
  runtime.launch = reinterpret_cast<LaunchFn>(launch);
  runtime.shape = reinterpret_cast<ShapeFn>(shape);
  runtime.error = reinterpret_cast<ErrorFn>(error);
}

/// Registers the CUDA kernels of `qct::<op>` and `qct::<op>_out` (defined
/// already). outputs: "dtype:element" per output, comma-separated; src_dims:
/// per source dimension 0 (M) or n (K/n). Returns 0, or 1 with `error` set.
int qct_torch_register(const char *op, void *kernel, int64_t inputs,
                       const char *outputs, const int64_t *src_dims,
                       int64_t num_src_dims, int64_t offsets_index,
                       char *error, size_t error_size) {
  try {
    std::vector<c10::ScalarType> types;
    for (const std::string &o : split(outputs)) {
      size_t colon = o.find(':');
      types.push_back(outputType(o.substr(0, colon),
                                 colon == std::string::npos ? ""
                                                            : o.substr(colon + 1)));
    }
    std::vector<int64_t> dims(src_dims, src_dims + num_src_dims);
    auto lib = std::make_unique<torch::Library>(
        torch::Library::IMPL, "qct", c10::DispatchKey::CUDA, __FILE__, __LINE__);
    auto *k = static_cast<qct_kernel *>(kernel);
    lib->impl(op, torch::CppFunction::makeFromBoxedFunctor(
                      std::make_unique<KernelFunctor>(k, true, inputs, types,
                                                      dims, offsets_index)));
    std::string outOp = std::string(op) + "_out";
    lib->impl(outOp.c_str(),
              torch::CppFunction::makeFromBoxedFunctor(
                  std::make_unique<KernelFunctor>(k, false, inputs, types,
                                                  dims, offsets_index)));
    libraries().push_back(std::move(lib));
    return 0;
  } catch (const std::exception &e) {
    std::snprintf(error, error_size, "%s", e.what());
    return 1;
  }
}

} // extern "C"
