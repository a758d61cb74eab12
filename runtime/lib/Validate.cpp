//===- Validate.cpp - Launch argument checks
//-------------------------------===//
#include "qct/runtime/Validate.h"

#include "qct/runtime/Error.h"

#include <algorithm>
#include <cstring>

namespace qct::rt {

const char *dtypeName(int dtype) {
  switch (dtype) {
  case QCT_DTYPE_U8:
    return "u8";
  case QCT_DTYPE_I8:
    return "i8";
  case QCT_DTYPE_U16:
    return "u16";
  case QCT_DTYPE_I16:
    return "i16";
  case QCT_DTYPE_BF16:
    return "bf16";
  case QCT_DTYPE_F16:
    return "f16";
  case QCT_DTYPE_F32:
    return "f32";
  case QCT_DTYPE_I32:
    return "i32";
  case QCT_DTYPE_I64:
    return "i64";
  case QCT_DTYPE_FP8_E4M3:
    return "fp8_e4m3";
  case QCT_DTYPE_FP8_E5M2:
    return "fp8_e5m2";
  case QCT_DTYPE_E8M0:
    return "e8m0";
  case QCT_DTYPE_FP4_E2M1_X2:
    return "fp4_e2m1_x2";
  case QCT_DTYPE_U32:
    return "u32";
  case QCT_DTYPE_F64:
    return "f64";
  default:
    return "unknown";
  }
}

int dtypeSize(int dtype) {
  switch (dtype) {
  case QCT_DTYPE_U8:
  case QCT_DTYPE_I8:
  case QCT_DTYPE_FP8_E4M3:
  case QCT_DTYPE_FP8_E5M2:
  case QCT_DTYPE_E8M0:
  case QCT_DTYPE_FP4_E2M1_X2:
    return 1;
  case QCT_DTYPE_U16:
  case QCT_DTYPE_I16:
  case QCT_DTYPE_BF16:
  case QCT_DTYPE_F16:
    return 2;
  case QCT_DTYPE_F32:
  case QCT_DTYPE_I32:
  case QCT_DTYPE_U32:
    return 4;
  case QCT_DTYPE_I64:
  case QCT_DTYPE_F64:
    return 8;
  default:
    return 0;
  }
}

namespace {
std::string shapeText(const std::int64_t *dims, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string exprList(const BufferMeta &b) {
  std::string s = "[";
  for (std::size_t i = 0; i < b.shapeText.size(); ++i)
    s += (i ? ", " : "") + b.shapeText[i];
  return s + "]";
}

[[noreturn]] void invalid(const BufferMeta &b, const std::string &what) {
  fail(QCT_ERR_VALIDATION,
       "argument '" + b.name + "' (" + b.fieldText + "): " + what);
}

// Solves `var` from dimension `dim` of buffer `b` found in tensor `t`.
std::int64_t solve(const BufferMeta &b, const qct_tensor &t, int var, Dims d) {
  const char *names = "MKG";
  for (std::size_t i = 0; i < b.shape.size(); ++i) {
    const ShapeExpr &e = b.shape[i];
    if (e.vars() & (1u << var)) {
      std::int64_t v = 0;
      if (int(i) >= t.ndim || !solveFor(e, var, t.shape[i], d, v))
        invalid(b, std::string("cannot derive ") + names[var] + " from shape " +
                       shapeText(t.shape, t.ndim) + " (expected " +
                       exprList(b) + ")");
      return v;
    }
  }
  return 0;
}

// Everything that depends only on the source shape and the offsets length:
// M, K, G, the constraints, every buffer's expected shape and the launch
// sizes. Cached per kernel, since consecutive launches usually repeat shapes.
void resolve(const KernelMeta &meta, const qct_tensor *tensors, ShapeMemo &r) {
  // M and K from the source tensor, G from the offsets' length.
  Dims d;
  if (meta.offsetsIndex >= 0) {
    const BufferMeta &ob = meta.buffers[std::size_t(meta.offsetsIndex)];
    d.G = solve(ob, tensors[meta.offsetsIndex], 2, d);
  }
  const BufferMeta &sb = meta.buffers[std::size_t(meta.srcIndex)];
  const qct_tensor &st = tensors[meta.srcIndex];
  d.M = solve(sb, st, 0, d);
  d.K = solve(sb, st, 1, d);
  qct_launch_plan &plan = r.plan;
  plan.M = d.M;
  plan.K = d.K;
  plan.G = d.G;

  for (const ConstraintMeta &c : meta.constraints) {
    std::int64_t v = c.expr.eval(d);
    bool ok = (c.multipleOf <= 0 || v % c.multipleOf == 0) &&
              (!c.hasEquals || v == c.equals);
    if (ok)
      continue; // the launch path builds no strings
    std::string why = c.why.empty() ? "" : " (" + c.why + ")";
    if (c.multipleOf > 0 && v % c.multipleOf != 0)
      fail(QCT_ERR_VALIDATION, "constraint: " + c.expr.text() +
                                   " must be a multiple of " +
                                   std::to_string(c.multipleOf) + why +
                                   ", found " + std::to_string(v));
    if (c.hasEquals && v != c.equals)
      fail(QCT_ERR_VALIDATION, "constraint: " + c.expr.text() + " must equal " +
                                   std::to_string(c.equals) + why + ", found " +
                                   std::to_string(v));
  }

  r.want.assign(meta.buffers.size(), {});
  for (std::size_t i = 0; i < meta.buffers.size(); ++i)
    for (std::size_t k = 0; k < meta.buffers[i].shape.size(); ++k)
      r.want[i][k] = meta.buffers[i].shape[k].eval(d);
  for (int i = 0; i < 3; ++i) {
    std::int64_t g = meta.grid[i].eval(d), b = meta.block[i].eval(d);
    std::int64_t gmax = i == 0 ? 2147483647 : 65535;
    if (g < 0 || g > gmax)
      fail(QCT_ERR_VALIDATION, "launch grid[" + std::to_string(i) +
                                   "] = " + meta.grid[i].text() + " = " +
                                   std::to_string(g) + " is outside 0.." +
                                   std::to_string(gmax));
    if (b < 1 || b > 1024)
      fail(QCT_ERR_VALIDATION, "launch block[" + std::to_string(i) +
                                   "] = " + meta.block[i].text() + " = " +
                                   std::to_string(b) + " is outside 1..1024");
    plan.grid[i] = std::uint32_t(g);
    plan.block[i] = std::uint32_t(b);
  }
  std::int64_t smem = meta.dynamicSmem.eval(d);
  if (smem < 0 || smem > (1 << 30))
    fail(QCT_ERR_VALIDATION,
         "dynamic_smem_bytes = " + std::to_string(smem) + " is invalid");
  plan.dynamic_smem_bytes = std::uint32_t(smem);
  r.d = d;
}
} // namespace

void validateLaunch(const KernelMeta &meta, const qct_tensor *tensors,
                    std::size_t count, qct_launch_plan &plan,
                    qct_kernel_args &args, ShapeMemo *memo) {
  if (count != meta.buffers.size()) {
    std::string names;
    for (const auto &b : meta.buffers)
      names += (names.empty() ? "" : ", ") + b.name;
    fail(QCT_ERR_VALIDATION, "kernel " + meta.name + " takes " +
                                 std::to_string(meta.buffers.size()) +
                                 " tensors (" + names + "), found " +
                                 std::to_string(count));
  }
  if (count && !tensors)
    fail(QCT_ERR_VALIDATION, "tensor array is NULL");

  // Ranks first: the solver below reads shapes.
  for (std::size_t i = 0; i < count; ++i) {
    const BufferMeta &b = meta.buffers[i];
    const qct_tensor &t = tensors[i];
    if (t.ndim != int(b.shape.size()))
      invalid(b, "expected " + std::to_string(b.shape.size()) + " dims " +
                     exprList(b) + ", found " + std::to_string(t.ndim) +
                     " dims");
  }

  ShapeMemo local;
  ShapeMemo &r = memo ? *memo : local;
  const qct_tensor &src = tensors[meta.srcIndex];
  std::int64_t offsetsLen =
      meta.offsetsIndex >= 0 ? tensors[meta.offsetsIndex].shape[0] : -1;
  bool hit = r.valid && r.srcNdim == src.ndim && r.offsetsLen == offsetsLen &&
             std::equal(src.shape, src.shape + src.ndim, r.src);
  if (!hit) {
    r.valid = false;
    resolve(meta, tensors, r);
    r.srcNdim = src.ndim;
    std::copy(src.shape, src.shape + src.ndim, r.src);
    r.offsetsLen = offsetsLen;
    r.valid = true;
  }
  const Dims &d = r.d;
  plan = r.plan;

  std::memset(&args, 0, sizeof args);
  for (std::size_t i = 0; i < count; ++i) {
    const BufferMeta &b = meta.buffers[i];
    const qct_tensor &t = tensors[i];
    if (t.dtype <= 0 || t.dtype >= 32 || !(b.acceptedDtypes & (1u << t.dtype)))
      invalid(b, std::string("expected dtype ") +
                     (b.element.empty() ? b.dtype
                                        : b.element + " (or a u8 view)") +
                     ", found " + dtypeName(t.dtype));
    const std::int64_t *want = r.want[i].data();
    std::int64_t numel = 1;
    for (std::size_t k = 0; k < b.shape.size(); ++k)
      numel *= want[k];
    for (std::size_t k = 0; k < b.shape.size(); ++k)
      if (t.shape[k] != want[k])
        invalid(b, "expected shape " + shapeText(want, int(b.shape.size())) +
                       " = " + exprList(b) + " with M=" + std::to_string(d.M) +
                       " K=" + std::to_string(d.K) +
                       " G=" + std::to_string(d.G) + ", found " +
                       shapeText(t.shape, t.ndim));
    // An empty tensor's strides say nothing (torch reports [1, 1] for a
    // [K, 0] tensor), and nothing is read or written through them.
    bool zeroStrides = true;
    for (int k = 0; k < t.ndim; ++k)
      zeroStrides &= t.strides[k] == 0;
    if (!zeroStrides && numel != 0) {
      std::int64_t expect = 1;
      for (int k = t.ndim - 1; k >= 0; --k) {
        if (t.shape[k] != 1 && t.strides[k] != expect)
          invalid(b, "must be row-major contiguous: expected stride " +
                         std::to_string(expect) + " (elements) in dim " +
                         std::to_string(k) + ", found strides " +
                         shapeText(t.strides, t.ndim));
        expect *= t.shape[k];
      }
    }
    if (!t.data && numel != 0)
      invalid(b, "data pointer is NULL");
    if (reinterpret_cast<std::uintptr_t>(t.data) % 16 != 0)
      invalid(
          b, "data pointer must be 16-byte aligned, found address " +
                 std::to_string(reinterpret_cast<std::uintptr_t>(t.data)) +
                 " (" +
                 std::to_string(reinterpret_cast<std::uintptr_t>(t.data) % 16) +
                 " past a 16-byte boundary)");
    switch (b.field) {
    case ArgField::Src:
      args.src = t.data;
      break;
    case ArgField::SrcScales:
      args.src_scales = t.data;
      break;
    case ArgField::Out:
      args.out[b.index] = t.data;
      break;
    case ArgField::OutScales:
      args.out_scales[b.index] = t.data;
      break;
    case ArgField::Offsets:
      args.offsets = t.data;
      break;
    case ArgField::PaddedOffsets:
      args.padded_offsets = t.data;
      break;
    }
  }
  args.M = d.M;
  args.K = d.K;
  args.G = d.G;
}

} // namespace qct::rt
