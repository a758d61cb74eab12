"""Hostile tensors at the binding (qct.runtime._describe/_tensor): out-of-range integers and
malformed __cuda_array_interface__ dicts are one QctError naming the argument and the rule, never
a raw KeyError/TypeError or a value silently truncated into a C field.

Validation needs NVRTC (the kernel is compiled for sm_90a), not a GPU; the pointers are never
dereferenced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qct import runtime
from qct.errors import QctError

REPO = Path(__file__).resolve().parents[2]
KERNEL = REPO / "generated" / "bf16_to_mxfp4_row.cu"  # buffers: src [M,K] bf16; y, y_scales u8
M, K = 4, 64


class Fake:
    """An object with a __cuda_array_interface__ of our choosing."""

    def __init__(self, cai: Any):
        self.__cuda_array_interface__ = cai


def cai(shape: tuple[int, ...], typestr: str, ptr: int, **extra: Any) -> dict[str, Any]:
    return {"shape": shape, "typestr": typestr, "data": (ptr, False), "version": 3, **extra}


@pytest.fixture(scope="module")
def kernel() -> runtime.Kernel:
    return runtime.Kernel(KERNEL, arch="sm_90a")


def good() -> dict[str, dict[str, Any]]:
    return {"src": cai((M, K), "<u2", 1 << 20), "y": cai((M, K // 2), "|u1", 2 << 20),
            "y_scales": cai((M, K // 32), "|u1", 3 << 20)}


def validate(kernel: runtime.Kernel, **changes: Any) -> runtime.LaunchPlan:
    arrays: dict[str, Any] = {**good(), **changes}
    return kernel.validate(**{n: Fake(a) for n, a in arrays.items()})


def test_the_good_arguments_validate(kernel: runtime.Kernel) -> None:
    assert (validate(kernel).M, validate(kernel).K) == (M, K)


@pytest.mark.parametrize("changes, needle", [
    # 2^64 + 64 would be stored into int64_t as 64 and validated as K = 64.
    ({"src": cai((M, (1 << 64) + K), "<u2", 1 << 20)}, "dim 1 18446744073709551680 is out of range"),
    ({"src": cai((M, 1 << 63), "<u2", 1 << 20)}, "must be in [0, 2^63)"),
    ({"src": cai((-1, K), "<u2", 1 << 20)}, "dim 0 -1 is out of range"),
    ({"src": cai((M, K), "<u2", -16)}, "pointer -16 is out of range (must be in [0, 2^64))"),
    ({"src": cai((M, K), "<u2", 1 << 64)}, "pointer 18446744073709551616 is out of range"),
    ({"src": cai((M, K), "<u2", 1 << 20, strides=((1 << 64) + 2 * K, 2))}, "stride 0"),
])
def test_integers_out_of_the_c_fields_range_are_refused(kernel: runtime.Kernel,
                                                        changes: dict[str, Any], needle: str) -> None:
    with pytest.raises(QctError, match="argument '") as e:
        validate(kernel, **changes)
    assert needle in str(e.value)
    assert not isinstance(e.value, runtime.QctRuntimeError)  # caught before the C ABI


def without(key: str) -> dict[str, Any]:
    d = good()["src"]
    del d[key]
    return d


@pytest.mark.parametrize("name, array, needle", [
    ("src", cai((M, K), ">u2", 1 << 20), "big-endian"),
    ("y", {**cai((M, K // 2), "|u1", 2 << 20), "data": (2 << 20, True)}, "read-only"),
    ("src", cai((M, K), "<u2", 1 << 20, mask=object()), "mask"),
    ("src", cai((M, K), "<u2", 1 << 20, strides=(2 * K, 2, 2)), "3 strides for 2 dims"),
    ("src", without("typestr"), "lacks the required key(s) typestr"),
    ("src", without("shape"), "lacks the required key(s) shape"),
    ("src", without("data"), "lacks the required key(s) data"),
    ("src", [1, 2], "must be a dict"),
    ("src", cai(M, "<u2", 1 << 20), "shape must be a tuple of integers"),  # type: ignore[arg-type]
    ("src", cai((M, 64.0), "<u2", 1 << 20), "shape must be a tuple of integers"),
    ("src", cai((M, K), 2, 1 << 20), "typestr 2 is not supported"),
    ("src", cai((M, K), "", 1 << 20), "typestr '' is not supported"),
    ("src", {**good()["src"], "data": 1 << 20}, "data must be a (pointer, read_only) pair"),
    ("src", {**good()["src"], "data": ("0x100000", False)}, "data pointer must be an integer"),
    ("src", cai((M, K), "<u2", 1 << 20, strides="2"), "strides must be a tuple of integers"),
])
def test_malformed_cuda_array_interface_is_a_qct_error(kernel: runtime.Kernel, name: str,
                                                       array: Any, needle: str) -> None:
    with pytest.raises(QctError, match=f"argument '{name}'") as e:
        validate(kernel, **{name: array})
    assert needle in str(e.value)


def test_read_only_inputs_and_single_byte_big_endian_are_fine(kernel: runtime.Kernel) -> None:
    src = {**good()["src"], "data": (1 << 20, True)}  # the kernel only reads src
    y = cai((M, K // 2), ">u1", 2 << 20)  # byte order means nothing for one byte
    assert validate(kernel, src=src, y=y).K == K
