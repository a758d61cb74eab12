"""Every generated kernel, at every legal schedule, compiles with NVRTC for sm_90a, and ptxas
reports no spills and no local memory. Needs NVRTC (the CUDA toolkit), not a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from qct import verify

REPO = Path(__file__).resolve().parents[2]
GENERATED = sorted((REPO / "generated").glob("*.json"))


def _params() -> list[tuple[Path, tuple]]:
    return [(p, s) for p in GENERATED for s in verify.schedules(verify.load_metadata(p))]


@pytest.mark.parametrize("meta_path,schedule", _params(),
                         ids=lambda v: v.stem if isinstance(v, Path) else ",".join(f"{k}={x}" for k, x in v))
def test_compiles_without_spills(meta_path: Path, schedule: tuple) -> None:
    from qct import runtime

    kernel = runtime.Kernel(meta_path.with_suffix(".cu"), meta_path, schedule=dict(schedule),
                            arch="sm_90a", disable_cache=True)
    stats = kernel.stats
    assert stats["found"], f"no ptxas report for {kernel.entry}:\n{kernel.compile_log}"
    assert stats["spill_store_bytes"] == 0 and stats["spill_load_bytes"] == 0, \
        f"{kernel.entry} spills: {stats}\n{kernel.compile_log}"
    assert stats["local_memory_bytes"] == 0, f"{kernel.entry} uses local memory: {stats}"
    assert len(kernel.cubin) > 0
