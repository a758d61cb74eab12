/*===- qct/kernel_args.h - The one parameter every qct kernel takes -------===*
 *
 * Every generated kernel has the signature
 *     extern "C" __global__ void qct_<name>(qct_kernel_args args);
 * so the runtime launches any kernel the same way, and the metadata JSON
 * (docs/kernel-abi.md) says which fields a kernel reads and writes and what
 * shapes the buffers must have. This header is plain C and is compiled both by
 * the host (runtime, tests) and by NVRTC (embedded into the device headers).
 * Change it only together with QCT_KERNEL_ARGS_VERSION.
 *===----------------------------------------------------------------------===*/
#ifndef QCT_KERNEL_ARGS_H
#define QCT_KERNEL_ARGS_H

#define QCT_KERNEL_ARGS_VERSION 1
#define QCT_MAX_OUTPUTS 3

/* Bits a kernel ORs into *error_flag. */
#define QCT_ERROR_BAD_OFFSETS                                                  \
  1u /* o[0] != 0, decreasing, o[G] != M, or out of range */

typedef struct qct_kernel_args {
  const void *src; /* source elements, [M, K] row-major (packed for fp4) */
  const void *src_scales; /* source scales (e8m0 bytes or f32), NULL if none */
  void *out[QCT_MAX_OUTPUTS];        /* output elements */
  void *out_scales[QCT_MAX_OUTPUTS]; /* output scales, NULL for bf16 outputs */
  const void *offsets; /* ragged: G + 1 offsets (int32 or int64), device */
  void
      *padded_offsets; /* ragged with write_padded_offsets: G + 1, same dtype */
  unsigned int
      *error_flag; /* device word; NULL when the kernel has no checks */
  long long M;     /* rows (tokens) */
  long long K;     /* columns (features) */
  long long G;     /* ragged groups; 0 when not ragged */
} qct_kernel_args;

#endif /* QCT_KERNEL_ARGS_H */
