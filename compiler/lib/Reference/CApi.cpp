//===- CApi.cpp - The extern "C" shell over the reference -----------------===//
//
// Checks the pointers a C caller can get wrong, turns error strings into the
// caller's buffer, and never lets a C++ exception (std::bad_alloc) cross the
// C boundary.
//
//===----------------------------------------------------------------------===//

#include "qct/Reference/qct_ref.h"

#include "qct/Reference/Scalar.h"
#include "qct/Reference/Tensor.h"

#include <cstring>
#include <exception>
#include <string>

using namespace qct::ref;

namespace {

int fail(const std::string &msg, char *err, size_t errLen) {
  if (err && errLen > 0) {
    size_t n = msg.size() < errLen - 1 ? msg.size() : errLen - 1;
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
  }
  return 1;
}

template <class Fn> int guarded(char *err, size_t errLen, Fn &&fn) {
  try {
    std::string msg = fn();
    return msg.empty() ? 0 : fail(msg, err, errLen);
  } catch (const std::exception &e) {
    return fail(std::string("internal error: ") + e.what(), err, errLen);
  }
}

const FloatFormat *scalarFormat(int s) {
  switch (s) {
  case QCT_REF_S_E2M1:
    return &kE2M1;
  case QCT_REF_S_E4M3:
    return &kE4M3;
  case QCT_REF_S_E5M2:
    return &kE5M2;
  case QCT_REF_S_BF16:
    return &kBF16;
  case QCT_REF_S_FP16:
    return &kFP16;
  case QCT_REF_S_FP32:
    return &kFP32;
  default:
    return nullptr;
  }
}

} // namespace

extern "C" {

int qct_ref_output_sizes(const qct_ref_source *src, const qct_ref_output *out,
                         const qct_ref_ragged *ragged, size_t *data_bytes,
                         size_t *scales_bytes, char *err, size_t err_len) {
  return guarded(err, err_len, [&]() -> std::string {
    if (!src)
      return "source is NULL";
    if (!out)
      return "output is NULL";
    if (!data_bytes || !scales_bytes)
      return "data_bytes and scales_bytes must not be NULL";
    OutputSizes sizes;
    std::string msg = outputSizes(*src, *out, ragged, sizes);
    if (msg.empty()) {
      *data_bytes = sizes.dataBytes;
      *scales_bytes = sizes.scalesBytes;
    }
    return msg;
  });
}

int qct_ref_convert(const qct_ref_source *src, const qct_ref_output *out,
                    const qct_ref_ragged *ragged, char *err, size_t err_len) {
  return guarded(err, err_len, [&]() -> std::string {
    if (!src)
      return "source is NULL";
    if (!out)
      return "output is NULL";
    return convert(*src, *out, ragged);
  });
}

int qct_ref_set_threads(int n) { return setThreads(n); }

int qct_ref_decode(int scalar, const void *codes, double *values, size_t n,
                   char *err, size_t err_len) {
  return guarded(err, err_len, [&]() -> std::string {
    if (n && (!codes || !values))
      return "codes and values must not be NULL";
    if (scalar == QCT_REF_S_E8M0) {
      const uint8_t *c = static_cast<const uint8_t *>(codes);
      for (size_t i = 0; i < n; ++i)
        values[i] = decodeE8M0(c[i]);
      return "";
    }
    const FloatFormat *F = scalarFormat(scalar);
    if (!F)
      return "scalar: " + std::to_string(scalar) + " is not a qct_ref_scalar";
    if (scalar == QCT_REF_S_FP32) {
      const uint32_t *c = static_cast<const uint32_t *>(codes);
      for (size_t i = 0; i < n; ++i)
        values[i] = decodeFP32(c[i]);
    } else if (scalar == QCT_REF_S_BF16 || scalar == QCT_REF_S_FP16) {
      const uint16_t *c = static_cast<const uint16_t *>(codes);
      for (size_t i = 0; i < n; ++i)
        values[i] = decode(c[i], *F);
    } else {
      const uint8_t *c = static_cast<const uint8_t *>(codes);
      uint32_t mask = scalar == QCT_REF_S_E2M1 ? 0xF : 0xFF;
      for (size_t i = 0; i < n; ++i)
        values[i] = decode(c[i] & mask, *F);
    }
    return "";
  });
}

int qct_ref_encode(int scalar, const double *values, void *codes, size_t n,
                   char *err, size_t err_len) {
  return guarded(err, err_len, [&]() -> std::string {
    if (n && (!codes || !values))
      return "codes and values must not be NULL";
    if (scalar == QCT_REF_S_E8M0)
      return "scalar: e8m0 is a scale format; it has no element rounding "
             "(scales come from the block rules)";
    const FloatFormat *F = scalarFormat(scalar);
    if (!F)
      return "scalar: " + std::to_string(scalar) + " is not a qct_ref_scalar";
    if (scalar == QCT_REF_S_FP32) {
      uint32_t *c = static_cast<uint32_t *>(codes);
      for (size_t i = 0; i < n; ++i)
        c[i] = encode(values[i], *F);
    } else if (scalar == QCT_REF_S_BF16 || scalar == QCT_REF_S_FP16) {
      uint16_t *c = static_cast<uint16_t *>(codes);
      for (size_t i = 0; i < n; ++i)
        c[i] = uint16_t(encode(values[i], *F));
    } else {
      uint8_t *c = static_cast<uint8_t *>(codes);
      for (size_t i = 0; i < n; ++i)
        c[i] = uint8_t(encode(values[i], *F));
    }
    return "";
  });
}

int qct_ref_div_f32(const double *a, const double *b, uint32_t *out, size_t n,
                    char *err, size_t err_len) {
  return guarded(err, err_len, [&]() -> std::string {
    if (n && (!a || !b || !out))
      return "a, b and out must not be NULL";
    for (size_t i = 0; i < n; ++i)
      if (!std::isfinite(a[i]) || !std::isfinite(b[i]) || b[i] == 0)
        return "a[" + std::to_string(i) + "], b[" + std::to_string(i) +
               "]: both must be finite and b nonzero";
    for (size_t i = 0; i < n; ++i)
      out[i] = bitsOfF32(float(divRoundF32(a[i], b[i])));
    return "";
  });
}

} // extern "C"
