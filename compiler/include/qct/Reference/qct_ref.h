/*===- qct/Reference/qct_ref.h - C ABI of the numerics reference ----------===*
 *
 * The CPU reference implements docs/numerics.md (the project's numerics
 * contract) bit for bit. Python reaches it through ctypes and the GPU tests
 * link it directly, so this header is plain C: enums, plain structs, pointers
 * to caller-owned buffers. libqct_reference.so depends on nothing but the C++
 * standard library.
 *
 * Every entry point validates all of its arguments before it writes a single
 * byte; it returns 0 on success, or nonzero after writing a NUL-terminated
 * message naming the argument and the rule into err[0..err_len) (err may be
 * NULL when err_len is 0).
 *===----------------------------------------------------------------------===*/
#ifndef QCT_REFERENCE_QCT_REF_H
#define QCT_REFERENCE_QCT_REF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor formats. FP8_* are the 1x128 block formats with f32 scale_inv;
 * MX* the 32-element blocks with e8m0 scales; BF16/FP16/FP32 have no scales. */
typedef enum qct_ref_format {
  QCT_REF_BF16 = 0,
  QCT_REF_FP16 = 1,
  QCT_REF_FP32 = 2,
  QCT_REF_MXFP4 = 3,
  QCT_REF_MXFP8_E4M3 = 4,
  QCT_REF_MXFP8_E5M2 = 5,
  QCT_REF_FP8_E4M3 = 6,
  QCT_REF_FP8_E5M2 = 7
} qct_ref_format;

typedef enum qct_ref_layout { QCT_REF_ROW = 0, QCT_REF_COL = 1 } qct_ref_layout;

/* FLOOR/RCEIL: MX outputs. AMAX/POW2/ALIGNED: FP8 1x128 outputs (ALIGNED only
 * from an MX source). NONE: BF16/FP16/FP32 outputs. */
typedef enum qct_ref_scale {
  QCT_REF_SCALE_NONE = 0,
  QCT_REF_SCALE_FLOOR = 1,
  QCT_REF_SCALE_RCEIL = 2,
  QCT_REF_SCALE_AMAX = 3,
  QCT_REF_SCALE_POW2 = 4,
  QCT_REF_SCALE_ALIGNED = 5
} qct_ref_scale;

typedef enum qct_ref_scale_layout {
  QCT_REF_ROW_MAJOR = 0,
  QCT_REF_MN_MAJOR = 1
} qct_ref_scale_layout;

/* Scalar element/scale formats for the vectorized codec entry points. */
typedef enum qct_ref_scalar {
  QCT_REF_S_E2M1 = 0, /* one code per byte, low nibble */
  QCT_REF_S_E4M3 = 1, /* byte */
  QCT_REF_S_E5M2 = 2, /* byte */
  QCT_REF_S_E8M0 = 3, /* byte (decode only) */
  QCT_REF_S_BF16 = 4, /* uint16_t bits */
  QCT_REF_S_FP16 = 5, /* uint16_t bits */
  QCT_REF_S_FP32 = 6  /* uint32_t bits */
} qct_ref_scalar;

/* A row-major [M, K] source. data: bf16/fp16 as uint16 bits, fp32, mxfp4 as
 * [M, K/2] bytes (element 2i in the low nibble), one byte per element for
 * mxfp8/fp8. scales: MX [M, K/32] e8m0 bytes, FP8 [M, K/128] f32 scale_inv,
 * NULL for bf16/fp16/fp32. */
typedef struct qct_ref_source {
  int format; /* qct_ref_format */
  const void *data;
  const void *scales;
  int64_t M;
  int64_t K;
} qct_ref_source;

/* One output, shapes as docs/kernel-abi.md. via_bf16 != 0 selects the
 * unfused chain: decoded source values are first rounded to bf16. data and
 * scales are caller-owned; *_bytes are their capacities (at least what
 * qct_ref_output_sizes reports; only that prefix is written). scales is NULL
 * with scales_bytes 0 for BF16/FP16/FP32 outputs. */
typedef struct qct_ref_output {
  int format;       /* qct_ref_format */
  int layout;       /* qct_ref_layout */
  int scale;        /* qct_ref_scale */
  int scale_layout; /* qct_ref_scale_layout */
  int via_bf16;
  void *data;
  size_t data_bytes;
  void *scales;
  size_t scales_bytes;
} qct_ref_output;

/* Ragged groups along M: offsets[0..G] (int32, or int64 when offsets_i64),
 * pad_groups_to P >= 1. padded_offsets (nullable) receives p[0..G] in the
 * offsets' dtype. untouched_tail (spec "capacity_tail": "untouched"): a col
 * output's capacity tail is left as it was, every data byte that holds only
 * columns at or past p[G] and every scale entry of a scale column past the
 * groups' own (0: written as zeros and padding scales). */
typedef struct qct_ref_ragged {
  const void *offsets;
  int offsets_i64;
  int64_t G;
  int64_t pad_groups_to;
  void *padded_offsets;
  int untouched_tail;
} qct_ref_ragged;

/* Bytes of the data and scale buffers the output needs (ragged may be NULL:
 * dense). Validates the same rules as qct_ref_convert except the buffers. */
int qct_ref_output_sizes(const qct_ref_source *src, const qct_ref_output *out,
                         const qct_ref_ragged *ragged, size_t *data_bytes,
                         size_t *scales_bytes, char *err, size_t err_len);

/* Computes one output from the source, exactly as the numerics contract
 * defines it, filling every byte of the required buffer prefix (padding
 * included), and p[0..G] when ragged->padded_offsets is not NULL. */
int qct_ref_convert(const qct_ref_source *src, const qct_ref_output *out,
                    const qct_ref_ragged *ragged, char *err, size_t err_len);

/* Threads qct_ref_convert may use, process-wide (default 1: the reference is
 * single-threaded unless asked; n < 1 means 1). Output lines are independent,
 * so the bits never depend on n. Returns the previous value. */
int qct_ref_set_threads(int n);

/* Decodes n codes of a scalar format to their exact values (NaN and Inf as
 * IEEE doubles; e8m0 0xFF is NaN). codes has the element type of the format
 * (see qct_ref_scalar). */
int qct_ref_decode(int scalar, const void *codes, double *values, size_t n,
                   char *err, size_t err_len);

/* Rounds n exact values into a scalar format: round to nearest, ties to even,
 * signed zero kept. e2m1/e4m3/e5m2 saturate (+-Inf and overflow to +-max), NaN
 * becomes the format NaN with the sign kept (e2m1, which has no NaN: code 0).
 * bf16/fp16/fp32 follow IEEE (overflow to +-Inf) and write NaN as the
 * canonical positive NaN 0x7FFF / 0x7FFF / 0x7FFFFFFF. E8M0 is rejected. */
int qct_ref_encode(int scalar, const double *values, void *codes, size_t n,
                   char *err, size_t err_len);

/* fl32(a / b) for each pair: the exact quotient rounded once to fp32 (the
 * FP8 `amax` policy's division), written as fp32 bits. */
int qct_ref_div_f32(const double *a, const double *b, uint32_t *out, size_t n,
                    char *err, size_t err_len);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QCT_REFERENCE_QCT_REF_H */
