/*===- qct/qct.h - The qct runtime's C ABI ---------------------------------===*
 *
 * Loads a generated kernel (CUDA source + metadata JSON, docs/kernel-abi.md),
 * compiles it with NVRTC through a memory + disk cache, checks launch
 * arguments against the metadata and launches it with the CUDA driver API.
 * Both NVRTC and the driver are dlopened, so this library loads on machines
 * without a GPU (compile and validate work there; launch reports
 * QCT_ERR_NO_DRIVER / QCT_ERR_NO_DEVICE).
 *
 * Every function that can fail returns a qct_status; on failure the calling
 * thread's last error (qct_last_error, qct_last_error_field) says why.
 * Strings returned as `const char *` are owned by the runtime: a kernel's
 * strings live as long as the kernel, the others until the next call of the
 * same function on the same thread. This header is plain C (ctypes binds it).
 *===----------------------------------------------------------------------===*/
#ifndef QCT_QCT_H
#define QCT_QCT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define QCT_API
#else
#define QCT_API __attribute__((visibility("default")))
#endif

/* Bumped whenever a declaration below changes incompatibly. */
#define QCT_RUNTIME_ABI_VERSION 1
#define QCT_MAX_DIMS 4

typedef enum qct_status {
  QCT_OK = 0,
  QCT_ERR_INVALID_ARGUMENT = 1,  /* a NULL handle, an unreadable path, ... */
  QCT_ERR_METADATA = 2,          /* metadata JSON malformed or inconsistent */
  QCT_ERR_SCHEDULE = 3,          /* an unknown knob or an illegal value */
  QCT_ERR_NVRTC_UNAVAILABLE = 4, /* libnvrtc could not be loaded */
  QCT_ERR_COMPILE = 5,           /* NVRTC rejected the source (log attached) */
  QCT_ERR_NO_DRIVER = 6,         /* libcuda.so.1 absent or cuInit failed */
  QCT_ERR_NO_DEVICE = 7,         /* a driver but no usable GPU */
  QCT_ERR_VALIDATION = 8, /* a launch argument does not match the metadata */
  QCT_ERR_CUDA = 9,       /* a driver call failed (name and code in message) */
  QCT_ERR_BAD_OFFSETS = 10, /* the kernel flagged QCT_ERROR_BAD_OFFSETS */
  QCT_ERR_IO = 11,          /* a file could not be read or written */
  QCT_ERR_INTERNAL = 12,
  QCT_ERR_COMPILER_UNAVAILABLE = 13, /* libqct_compiler.so not loadable */
  QCT_ERR_SPEC = 14 /* the compiler rejected a spec (diagnostics attached) */
} qct_status;

/* Element types of tensor descriptors. u8/u16 metadata buffers are raw bytes:
 * they accept any dtype of that size (fp8, e8m0, packed fp4, bf16 bits). */
typedef enum qct_dtype {
  QCT_DTYPE_U8 = 1,
  QCT_DTYPE_I8 = 2,
  QCT_DTYPE_U16 = 3,
  QCT_DTYPE_I16 = 4,
  QCT_DTYPE_BF16 = 5,
  QCT_DTYPE_F16 = 6,
  QCT_DTYPE_F32 = 7,
  QCT_DTYPE_I32 = 8,
  QCT_DTYPE_I64 = 9,
  QCT_DTYPE_FP8_E4M3 = 10,
  QCT_DTYPE_FP8_E5M2 = 11,
  QCT_DTYPE_E8M0 = 12,
  QCT_DTYPE_FP4_E2M1_X2 = 13, /* two packed fp4 codes per byte */
  QCT_DTYPE_U32 = 14,
  QCT_DTYPE_F64 = 15
} qct_dtype;

/* A tensor argument. `strides` are in ELEMENTS (not bytes), like torch;
 * all-zero strides mean row-major contiguous (like DLPack's NULL strides).
 * `data` is a device pointer; it is never dereferenced by validation. */
typedef struct qct_tensor {
  void *data;
  int32_t ndim;
  int32_t dtype; /* qct_dtype */
  int64_t shape[QCT_MAX_DIMS];
  int64_t strides[QCT_MAX_DIMS];
} qct_tensor;

/* Everything qct_kernel_load may be told; a zeroed struct (or NULL) means
 * all defaults. */
typedef struct qct_load_options {
  /* Full GPU arch ("sm_90a", "sm_90"). NULL: $QCT_ARCH, else the arch of the
   * current device (sm_XYa for XY >= 90), else an error (no GPU). */
  const char *arch;
  const char *const *schedule; /* "NAME=VALUE" knob overrides */
  size_t num_schedule;
  const char *const *extra_nvrtc_options; /* appended; part of the cache key */
  size_t num_extra_nvrtc_options;
  int32_t disable_cache; /* nonzero: neither cache is read or written */
} qct_load_options;

/* Resource usage of the kernel's entry function, read from the cubin
 * (registers, stack frame, static shared memory; found == 0 if absent) and
 * from the ptxas -v log (spill bytes, the entry's plus those of the device
 * functions it calls, which ptxas reports apart). local_memory_bytes is the
 * stack frame (plus the callees' and any lmem ptxas reports): spills live
 * there, so 0 means no spills.
 * Spill fields are -1 when ptxas printed nothing (NVRTC may reuse an earlier
 * compile silently); the compile log is then empty too. */
typedef struct qct_kernel_stats {
  int32_t found;
  int32_t registers;
  int64_t stack_frame_bytes;
  int64_t spill_store_bytes;
  int64_t spill_load_bytes;
  int64_t local_memory_bytes;
  int64_t shared_memory_bytes;
} qct_kernel_stats;

/* Where a loaded kernel's binary came from. */
typedef enum qct_cache_origin {
  QCT_ORIGIN_COMPILED = 0,
  QCT_ORIGIN_MEMORY = 1,
  QCT_ORIGIN_DISK = 2
} qct_cache_origin;

typedef struct qct_buffer_info {
  const char *name;  /* metadata "name" */
  const char *field; /* "src", "out[0]", ... */
  const char *dtype; /* metadata dtype text */
  int32_t is_output;
  int32_t ndim;
} qct_buffer_info;

/* The sizes a validated launch would use. */
typedef struct qct_launch_plan {
  int64_t M, K, G;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t dynamic_smem_bytes;
} qct_launch_plan;

typedef struct qct_kernel qct_kernel;

/* --- Versions and errors ------------------------------------------------ */
QCT_API const char *qct_version(void);
QCT_API int qct_abi_version(void);
/* SHA-256 (hex) of the device library headers embedded in this runtime: the
 * version of the code every kernel is compiled with (a JIT cache key field;
 * the tuner records it with each tuned entry). */
QCT_API const char *qct_device_headers_hash(void);
QCT_API const char *qct_status_name(qct_status status);
QCT_API qct_status qct_last_status(void);
/* The thread's last failure, formatted for a human (multi-line for compile
 * errors: message, versions, options, NVRTC log, numbered source). */
QCT_API const char *qct_last_error(void);
typedef enum qct_error_field {
  QCT_ERROR_FIELD_MESSAGE = 0, /* one line */
  QCT_ERROR_FIELD_LOG = 1,     /* NVRTC log */
  QCT_ERROR_FIELD_OPTIONS = 2, /* NVRTC options, one per line */
  QCT_ERROR_FIELD_SOURCE = 3,  /* the source with line numbers */
  QCT_ERROR_FIELD_VERSIONS = 4 /* runtime, NVRTC, compiler versions, arch */
} qct_error_field;
QCT_API const char *qct_last_error_field(qct_error_field field);
QCT_API void qct_clear_error(void);

/* --- Loading --------------------------------------------------------------
 * cuda_source: a path to the generated .cu, or the source text itself (a
 * string containing a newline is text). metadata_json: the JSON text, or a
 * path to it (a string not starting with '{' after blanks is a path). */
QCT_API qct_status qct_kernel_load(const char *cuda_source,
                                   const char *metadata_json,
                                   const qct_load_options *options,
                                   qct_kernel **out_kernel);
/* A kernel straight from a spec file: the runtime dlopens the compiler library
 * (QCT_COMPILER_LIBRARY, else libqct_compiler.so beside this library, else the
 * loader path) to emit its CUDA source and metadata, then loads those as
 * qct_kernel_load does. QCT_ERR_COMPILER_UNAVAILABLE where qct was installed
 * without its compiler; QCT_ERR_SPEC with the diagnostics for a bad spec. */
QCT_API qct_status qct_kernel_load_spec(const char *spec_path,
                                        const qct_load_options *options,
                                        qct_kernel **out_kernel);
/* What qct_kernel_load_spec loads: the CUDA source and metadata JSON the
 * compiler emits for a spec. The strings stay valid until the next call of
 * this function on the same thread. */
QCT_API qct_status qct_spec_compile(const char *spec_path,
                                    const char **cuda_source,
                                    const char **metadata_json);
QCT_API void qct_kernel_free(qct_kernel *kernel);
QCT_API const char *qct_kernel_name(const qct_kernel *kernel);
QCT_API const char *qct_kernel_entry(const qct_kernel *kernel);
QCT_API const char *qct_kernel_metadata_json(const qct_kernel *kernel);
QCT_API const char *qct_kernel_arch(const qct_kernel *kernel);
QCT_API const char *qct_kernel_cache_key(const qct_kernel *kernel);
QCT_API const char *qct_kernel_compile_log(const qct_kernel *kernel);
/* The NVRTC options used, one per line. */
QCT_API const char *qct_kernel_options(const qct_kernel *kernel);
/* The resolved schedule, "NAME=VALUE" one per line. */
QCT_API const char *qct_kernel_schedule(const qct_kernel *kernel);
QCT_API qct_cache_origin qct_kernel_origin(const qct_kernel *kernel);
QCT_API qct_status qct_kernel_stats_get(const qct_kernel *kernel,
                                        qct_kernel_stats *out);
QCT_API qct_status qct_kernel_cubin(const qct_kernel *kernel, const void **data,
                                    size_t *size);

/* --- Buffers and shapes --------------------------------------------------
 * Buffers are in metadata order; launch tensors are passed in this order. */
QCT_API size_t qct_kernel_num_buffers(const qct_kernel *kernel);
QCT_API qct_status qct_kernel_buffer_info(const qct_kernel *kernel,
                                          size_t index, qct_buffer_info *out);
/* The expected shape of buffer `index` for M, K, G (shape has QCT_MAX_DIMS). */
QCT_API qct_status qct_kernel_buffer_shape(const qct_kernel *kernel,
                                           size_t index, int64_t M, int64_t K,
                                           int64_t G, int64_t *shape,
                                           int32_t *ndim);
/* Evaluates one shape expression (docs/kernel-abi.md grammar); knobs are
 * "NAME=VALUE". */
QCT_API qct_status qct_eval_expr(const char *expr, int64_t M, int64_t K,
                                 int64_t G, const char *const *knobs,
                                 size_t num_knobs, int64_t *out);

/* --- Launching ------------------------------------------------------------
 * Validation only: no driver call, works without a GPU. plan may be NULL. */
QCT_API qct_status qct_kernel_validate(const qct_kernel *kernel,
                                       const qct_tensor *tensors,
                                       size_t num_tensors,
                                       qct_launch_plan *plan);
/* Loads the module into the current context (retaining device 0's primary
 * context if none is current) and allocates the error flag. The first launch
 * in a context does this itself; call it before capturing a CUDA graph. */
QCT_API qct_status qct_kernel_prepare(qct_kernel *kernel);
/* Validates, then cuLaunchKernel on `stream` (a CUstream; NULL = legacy
 * default stream). Never synchronizes, allocates or copies. */
QCT_API qct_status qct_kernel_launch(qct_kernel *kernel,
                                     const qct_tensor *tensors,
                                     size_t num_tensors, void *stream);
/* Synchronizes `stream`, reads and clears the current context's error flag.
 * flags (may be NULL) gets the raw bits; QCT_ERR_BAD_OFFSETS if set. */
QCT_API qct_status qct_kernel_check_errors(qct_kernel *kernel, void *stream,
                                           uint32_t *flags);
/* The CUfunction in the current context (prepares it if needed). */
QCT_API qct_status qct_kernel_function(qct_kernel *kernel, void **cu_function);

/* --- Environment ----------------------------------------------------------
 * Every variable the runtime reads, declared once. */
typedef struct qct_env_var {
  const char *name;
  const char *type; /* "path", "bool", "int", "string" */
  const char *default_value;
  const char *doc;
  int32_t affects_output; /* nonzero: its value is part of the cache key */
} qct_env_var;
QCT_API size_t qct_env_count(void);
QCT_API const qct_env_var *qct_env_at(size_t index);
/* The effective value (the environment's, else the default). */
QCT_API const char *qct_env_value(const char *name);

/* --- Disk cache ----------------------------------------------------------- */
QCT_API const char *qct_cache_dir(void);
/* JSON: {"dir", "entries", "bytes", "max_bytes", "enabled", "writable"}. */
QCT_API const char *qct_cache_info_json(void);
/* JSON array of {"file","key","name","arch","bytes","last_used","valid"}. */
QCT_API const char *qct_cache_list_json(void);
QCT_API qct_status qct_cache_clear(uint64_t *removed_entries);
/* Drops the in-memory cache (loaded modules stay with their contexts). */
QCT_API void qct_cache_clear_memory(void);

/* --- Toolchain
 * --------------------------------------------------------------*/
QCT_API qct_status qct_nvrtc_version(int *major, int *minor);
/* The arch qct_kernel_load would pick with arch == NULL. */
QCT_API qct_status qct_default_arch(const char **arch);
/* A CUDA driver entry point by name (e.g. "cuMemAlloc_v2"), after cuInit;
 * NULL with the last error set when no driver is present. */
QCT_API void *qct_driver_proc(const char *name);
/* What the runtime loaded and why, as JSON; loads NVRTC and the driver if
 * not yet loaded, and reports a missing one instead of failing (NULL only on
 * an internal error). NVRTC is searched in one order (docs/runtime.md):
 * $QCT_NVRTC_PATH, a libnvrtc.so.13 already in the process, $CUDA_HOME,
 * $CUDA_PATH, the pip wheel nvidia-cuda-nvrtc ($QCT_NVRTC_WHEEL_DIR),
 * /usr/local/cuda, the loader path.
 *   {"nvrtc":  {"loaded", "path", "version" ("13.0"), "found_by",
 *               "builtins" (the libnvrtc-builtins preloaded beside it),
 *               "tried" (each source passed over, "<source> (<why>)"),
 *               "error" (one line, the QCT_ERR_NVRTC_UNAVAILABLE message)},
 *    "driver": {"loaded", "usable" (cuInit found a GPU), "path", "version",
 *               "found_by", "status" (qct_status_name), "error"}}
 * found_by is "QCT_NVRTC_PATH=<v>", "already loaded", "CUDA_HOME=<v>",
 * "CUDA_PATH=<v>", "pip wheel nvidia-cuda-nvrtc (<dir>)", "CUDA toolkit
 * <root>" or "loader path" (the driver: "QCT_CUDA_DRIVER_PATH=<v>", "already
 * loaded", "loader path"); what is unknown is null. */
QCT_API const char *qct_toolchain_info_json(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QCT_QCT_H */
