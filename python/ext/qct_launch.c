/*===- qct_launch.c - The launch fast path for torch tensors ---------------===*
 *
 * qct.runtime.Kernel's call goes through here when its tensors are torch
 * tensors: each tensor's pointer, dtype, shape and strides are read with a
 * handful of C-level attribute calls into a qct_tensor array on the stack, and
 * qct_kernel_launch is called directly. The ctypes path builds Structure
 * objects per call instead, which costs many times a torch op's host time.
 *
 * The module links nothing: qct_kernel_launch comes in as a function pointer
 * from the runtime library that qct._ffi loaded, so both see the same kernel
 * handles. It is built against CPython's limited API (abi3), so one build
 * serves every Python from 3.10 on.
 *===----------------------------------------------------------------------===*/
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "qct/qct.h"

typedef qct_status (*launch_fn)(qct_kernel *, const qct_tensor *, size_t,
                                void *);

/* Set once by init(); the module is useless before it. */
static launch_fn g_launch;
static PyObject *g_tensor_type;   /* torch.Tensor */
static PyObject *g_dtype_codes;   /* dict: torch.dtype -> qct_dtype */
static PyObject *g_raw_stream;    /* torch._C._cuda_getCurrentRawStream */
static PyObject *g_current_device; /* torch._C._cuda_getDevice */
static PyObject *g_error;         /* qct's user-error exception type */
static PyObject *s_data_ptr, *s_stride, *s_shape, *s_dtype, *s_get_device;

/* Large enough for every kernel's buffer list (src, src_scales, offsets,
 * three outputs with scales, padded offsets). */
#define QCT_FAST_MAX_TENSORS 16

/* Status the caller reads as "not torch tensors: take the general path". */
#define QCT_FAST_NOT_TORCH (-1)

static void replace(PyObject **slot, PyObject *value) {
  PyObject *old = *slot;
  Py_XINCREF(value);
  *slot = value;
  Py_XDECREF(old);
}

static PyObject *init(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 6) {
    PyErr_SetString(PyExc_TypeError,
                    "init(launch_fn, Tensor, dtype_codes, raw_stream, "
                    "current_device, error_type)");
    return NULL;
  }
  void *fn = PyLong_AsVoidPtr(args[0]);
  if (!fn)
    return PyErr_Occurred() ? NULL
                            : (PyErr_SetString(PyExc_ValueError,
                                               "launch_fn is NULL"),
                               NULL);
  if (!PyDict_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "dtype_codes must be a dict");
    return NULL;
  }
  g_launch = (launch_fn)fn;
  replace(&g_tensor_type, args[1]);
  replace(&g_dtype_codes, args[2]);
  replace(&g_raw_stream, args[3]);
  replace(&g_current_device, args[4]);
  replace(&g_error, args[5]);
  Py_RETURN_NONE;
}

/* Raises qct's error for argument i with `detail` (a new reference, may be
 * NULL after a failed format); returns -1. */
static int argErrorObject(PyObject *names, Py_ssize_t i, PyObject *detail) {
  PyObject *name = PyTuple_GetItem(names, i);
  if (name && detail)
    PyErr_Format(g_error, "argument '%U': %U", name, detail);
  Py_XDECREF(detail);
  return -1;
}

static int argError(PyObject *names, Py_ssize_t i, const char *message) {
  return argErrorObject(names, i, PyUnicode_FromString(message));
}

static int readDims(PyObject *seq, int64_t *out, int ndim) {
  for (int k = 0; k < ndim; ++k) {
    PyObject *item = PyTuple_GetItem(seq, k); /* borrowed */
    if (!item)
      return -1;
    long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred())
      return -1;
    out[k] = v;
  }
  return 0;
}

/* Fills *t from torch tensor x (argument i); returns its device index, or -1
 * with an exception set. */
static long describe(PyObject *names, Py_ssize_t i, PyObject *x,
                     qct_tensor *t) {
  long device = -1;
  PyObject *dev = PyObject_CallMethodObjArgs(x, s_get_device, NULL);
  if (!dev)
    return -1;
  device = PyLong_AsLong(dev);
  Py_DECREF(dev);
  if (device == -1 && PyErr_Occurred())
    return -1;
  if (device < 0)
    return argError(names, i, "a CUDA tensor is required, found a CPU tensor");

  PyObject *dtype = PyObject_GetAttr(x, s_dtype);
  if (!dtype)
    return -1;
  PyObject *code = PyDict_GetItemWithError(g_dtype_codes, dtype); /* borrowed */
  if (!code) {
    if (!PyErr_Occurred()) {
      PyObject *name = PyTuple_GetItem(names, i);
      if (name)
        PyErr_Format(g_error, "argument '%U': unsupported torch dtype %S",
                     name, dtype);
    }
    Py_DECREF(dtype);
    return -1;
  }
  Py_DECREF(dtype);
  t->dtype = (int32_t)PyLong_AsLong(code);

  PyObject *ptr = PyObject_CallMethodObjArgs(x, s_data_ptr, NULL);
  if (!ptr)
    return -1;
  t->data = PyLong_AsVoidPtr(ptr);
  Py_DECREF(ptr);
  if (PyErr_Occurred())
    return -1;

  PyObject *shape = PyObject_GetAttr(x, s_shape);
  if (!shape)
    return -1;
  Py_ssize_t ndim = PyTuple_Check(shape) ? PyTuple_Size(shape) : -1;
  if (ndim < 0 || ndim > QCT_MAX_DIMS) {
    Py_DECREF(shape);
    if (ndim < 0)
      PyErr_SetString(PyExc_TypeError, "tensor.shape is not a tuple");
    else
      argErrorObject(names, i,
                     PyUnicode_FromFormat("%zd dims (at most %d)", ndim,
                                          QCT_MAX_DIMS));
    return -1;
  }
  t->ndim = (int32_t)ndim;
  int bad = readDims(shape, t->shape, (int)ndim);
  Py_DECREF(shape);
  if (bad)
    return -1;

  PyObject *strides = PyObject_CallMethodObjArgs(x, s_stride, NULL);
  if (!strides)
    return -1;
  bad = !PyTuple_Check(strides) || PyTuple_Size(strides) != ndim ||
        readDims(strides, t->strides, (int)ndim);
  Py_DECREF(strides);
  if (bad) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "tensor.stride() does not match shape");
    return -1;
  }
  /* All-zero strides mean "contiguous" in the C ABI: only a broadcast has
   * them here, and the runtime must see it as the strided tensor it is. An
   * empty tensor's strides say nothing (torch may report zeros for it). */
  int64_t any = 0, big = 0, empty = 0;
  for (Py_ssize_t k = 0; k < ndim; ++k) {
    any |= t->strides[k];
    big |= t->shape[k] > 1;
    empty |= t->shape[k] == 0;
  }
  if (ndim && !any && big && !empty)
    return argError(names, i, "broadcast (zero-stride) tensors are not "
                              "supported");
  return device;
}

/* launch(kernel, names, stream, *tensors) -> status
 *   kernel: the qct_kernel * as an int; names: the buffer names (for errors);
 *   stream: a CUstream as an int, or None for torch's current stream on the
 *   tensors' device. Returns the qct_status (the runtime's last error says
 *   why when nonzero), or -1 when a tensor is not a torch tensor. */
static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (!g_launch) {
    PyErr_SetString(PyExc_RuntimeError, "qct._qct_launch: init() not called");
    return NULL;
  }
  if (n < 3 || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "launch(kernel, names, stream, *tensors)");
    return NULL;
  }
  Py_ssize_t count = n - 3;
  if (count > QCT_FAST_MAX_TENSORS || PyTuple_Size(args[1]) != count)
    return PyLong_FromLong(QCT_FAST_NOT_TORCH);
  qct_tensor tensors[QCT_FAST_MAX_TENSORS];
  long device = -1;
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *x = args[3 + i];
    int is_tensor = PyObject_IsInstance(x, g_tensor_type);
    if (is_tensor < 0)
      return NULL;
    if (!is_tensor)
      return PyLong_FromLong(QCT_FAST_NOT_TORCH);
    long d = describe(args[1], i, x, &tensors[i]);
    if (d < 0)
      return NULL;
    if (i == 0) {
      device = d;
    } else if (d != device) {
      argErrorObject(args[1], i,
                     PyUnicode_FromFormat("on cuda:%ld, but the first tensor "
                                          "is on cuda:%ld",
                                          d, device));
      return NULL;
    }
  }
  if (count) {
    PyObject *cur = PyObject_CallNoArgs(g_current_device);
    if (!cur)
      return NULL;
    long current = PyLong_AsLong(cur);
    Py_DECREF(cur);
    if (current == -1 && PyErr_Occurred())
      return NULL;
    if (current != device) {
      PyErr_Format(g_error,
                   "the tensors are on cuda:%ld but the current device is "
                   "cuda:%ld; launch under torch.cuda.device(%ld)",
                   device, current, device);
      return NULL;
    }
  }
  void *stream = NULL;
  if (args[2] != Py_None) {
    stream = PyLong_AsVoidPtr(args[2]);
  } else if (count) {
    PyObject *index = PyLong_FromLong(device);
    if (!index)
      return NULL;
    PyObject *raw = PyObject_CallFunctionObjArgs(g_raw_stream, index, NULL);
    Py_DECREF(index);
    if (!raw)
      return NULL;
    stream = PyLong_AsVoidPtr(raw);
    Py_DECREF(raw);
  }
  if (PyErr_Occurred())
    return NULL;
  void *kernel = PyLong_AsVoidPtr(args[0]);
  if (!kernel) {
    if (!PyErr_Occurred())
      PyErr_SetString(g_error, "the kernel was closed");
    return NULL;
  }
  qct_status status;
  Py_BEGIN_ALLOW_THREADS
  status = g_launch((qct_kernel *)kernel, tensors, (size_t)count, stream);
  Py_END_ALLOW_THREADS
  return PyLong_FromLong(status);
}

static PyMethodDef methods[] = {
    {"init", (PyCFunction)(void (*)(void))init, METH_FASTCALL,
     "init(launch_fn, Tensor, dtype_codes, raw_stream, current_device, "
     "error_type): binds the runtime's qct_kernel_launch and torch's types."},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(kernel, names, stream, *tensors) -> qct_status, or -1 when a "
     "tensor is not a torch tensor."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_qct_launch",
                                    "The launch fast path for torch tensors.",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__qct_launch(void) {
  s_data_ptr = PyUnicode_InternFromString("data_ptr");
  s_stride = PyUnicode_InternFromString("stride");
  s_shape = PyUnicode_InternFromString("shape");
  s_dtype = PyUnicode_InternFromString("dtype");
  s_get_device = PyUnicode_InternFromString("get_device");
  if (!s_data_ptr || !s_stride || !s_shape || !s_dtype || !s_get_device)
    return NULL;
  return PyModule_Create(&module);
}
