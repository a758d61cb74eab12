/*===- qct/CAPI/qct_compiler.h - The compiler as a C library -------------===*
 *
 * libqct_compiler.so: spec file in, CUDA source and metadata JSON out. The
 * runtime (which links no LLVM/MLIR) dlopens it to load a kernel straight
 * from a spec (qct_kernel_load_spec); anything else that can call C may too.
 *===----------------------------------------------------------------------===*/
#ifndef QCT_CAPI_QCT_COMPILER_H
#define QCT_CAPI_QCT_COMPILER_H

#if defined(__GNUC__)
#define QCT_COMPILER_API __attribute__((visibility("default")))
#else
#define QCT_COMPILER_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a signature below changes; the runtime checks it after dlopen. */
#define QCT_COMPILER_ABI_VERSION 1

QCT_COMPILER_API int qct_compiler_abi_version(void);
QCT_COMPILER_API const char *qct_compiler_version(void);

/* Compiles the spec at spec_path. On success returns 0 and sets
 * *cuda_source and *metadata_json (NUL-terminated, owned by the caller: free
 * each with qct_compiler_free). On failure returns nonzero and sets *error to
 * every diagnostic, one per line, file:line:col first (also caller-owned);
 * the other two are NULL. Any output pointer may not be NULL. */
QCT_COMPILER_API int qct_compiler_compile_spec(const char *spec_path,
                                               char **cuda_source,
                                               char **metadata_json,
                                               char **error);

QCT_COMPILER_API void qct_compiler_free(char *text);

#ifdef __cplusplus
}
#endif

#endif /* QCT_CAPI_QCT_COMPILER_H */
