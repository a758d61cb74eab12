"""Every generated kernel, at every legal schedule, compiles with NVRTC for sm_90 (the portable
Hopper target) and sm_90a (what the runtime picks on an H100/H200), and ptxas reports no spills,
in the kernel or in a device function it calls (the outlined general quantizer), and no local
memory. Needs NVRTC (the CUDA toolkit), not a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from qct import verify

REPO = Path(__file__).resolve().parents[2]
GENERATED = sorted((REPO / "generated").glob("**/*.json"))  # bundled and coverage kernels


def _params() -> list[tuple[Path, tuple]]:
    return [(p, s) for p in GENERATED for s in verify.schedules(verify.load_metadata(p))]


def _id(value: object) -> str:
    if isinstance(value, Path):
        return value.stem
    if isinstance(value, tuple):
        return ",".join(f"{k}={x}" for k, x in value)
    return str(value)


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
@pytest.mark.parametrize("meta_path,schedule", _params(), ids=_id)
def test_compiles_without_spills(meta_path: Path, schedule: tuple, arch: str) -> None:
    from qct import runtime

    kernel = runtime.Kernel(meta_path.with_suffix(".cu"), meta_path, schedule=dict(schedule),
                            arch=arch, disable_cache=True)
    stats = kernel.stats
    assert stats["found"], f"no ptxas report for {kernel.entry}:\n{kernel.compile_log}"
    assert stats["spill_store_bytes"] == 0 and stats["spill_load_bytes"] == 0, \
        f"{kernel.entry} spills: {stats}\n{kernel.compile_log}"
    assert stats["local_memory_bytes"] == 0, f"{kernel.entry} uses local memory: {stats}"
    assert len(kernel.cubin) > 0
