"""qct.load takes a bundled kernel's name as well as a path: generated/ in a checkout, the
package's copy installed (tests/python/test_packaging.py runs the installed case)."""

from __future__ import annotations

import pytest

import qct
from qct import layout
from qct.errors import QctError


def test_a_bundled_name_loads_its_generated_kernel() -> None:
    kernel = qct.load("mxfp4_to_fp8_e4m3_row", arch="sm_90a")
    assert kernel.name == "mxfp4_to_fp8_e4m3_row"
    assert (layout.generated_dir() / "mxfp4_to_fp8_e4m3_row.cu").is_file()


@pytest.mark.parametrize("name", ["no_such_kernel", "../generated/mxfp4_to_fp8_e4m3_row", ""])
def test_other_names_are_no_such_file(name: str) -> None:
    with pytest.raises(QctError, match="no such file"):
        qct.load(name, arch="sm_90a")
