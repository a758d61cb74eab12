"""Fixtures of the numerics suite: the ctypes binding of libqct_reference.so (skipped with a
message when it is not built) and the import path of the model modules beside this file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
for p in (str(REPO / "python"), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)


@pytest.fixture(scope="session")
def ref():
    """qct.reference with its library loaded, or a skip naming the missing library."""
    from qct import reference

    try:
        reference.library()
    except reference.ReferenceUnavailable as e:
        pytest.skip(f"numerics reference not built: {e}")
    return reference
