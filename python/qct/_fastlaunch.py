"""The compiled launch fast path for torch tensors (python/ext/qct_launch.c).

`launcher()` is the extension's `launch(kernel, names, stream, *tensors) -> status` once torch is
imported and the extension is found beside the runtime library; else None, and launches take the
ctypes path. Torch is never imported from here: a process that has not imported it has no torch
tensors to pass.
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Callable

from qct import _ffi
from qct.errors import QctError

MODULE = "_qct_launch"
FILE = f"{MODULE}.abi3.so"
NOT_TORCH = -1  # launch()'s answer when a tensor is not a torch tensor

_state: dict[str, object] = {}


def extension_path() -> str:
    return str(_ffi.library_path().parent / FILE)


def _load_extension() -> ModuleType | None:
    path = extension_path()
    spec = importlib.util.spec_from_file_location(
        MODULE, path, loader=importlib.machinery.ExtensionFileLoader(MODULE, path))
    if spec is None or spec.loader is None:
        return None
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError):
        return None
    return module


def _torch_dtype_codes(torch: ModuleType) -> dict[object, int]:
    from qct.runtime import TORCH_DTYPES

    codes = {}
    for name, qct_name in TORCH_DTYPES.items():
        dtype = getattr(torch, name.removeprefix("torch."), None)
        if dtype is not None:
            codes[dtype] = _ffi.DTYPES[qct_name]
    return codes


def launcher() -> Callable[..., int] | None:
    """The fast launch function, or None (torch not imported, or the extension not built)."""
    if "launch" in _state:
        return _state["launch"]  # type: ignore[return-value]
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return None  # asked again later: torch may be imported after the kernel is loaded
    module = _load_extension()
    launch = None
    if module is not None:
        fn = ctypes.cast(_ffi.lib().qct_kernel_launch, ctypes.c_void_p).value
        module.init(fn, torch.Tensor, _torch_dtype_codes(torch), torch._C._cuda_getCurrentRawStream,
                    torch._C._cuda_getDevice, QctError)
        launch = module.launch
    _state["launch"] = launch
    return launch


def available() -> bool:
    """Whether launches of torch tensors take the compiled path (for `qct env` and tests)."""
    return launcher() is not None
