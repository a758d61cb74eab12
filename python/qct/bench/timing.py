"""Timing on the GPU: CUDA events around many launches after a warm-up, the median, input buffers
rotated so the L2 does not serve them, and the copy bandwidth of the same run.

Launches are enqueued behind a GPU spin (torch.cuda._sleep) long enough for the host to queue the
whole batch, so each launch's event pair measures the GPU's time for that launch, not the Python
host time between launches (which exceeds a small kernel's run time). The host time per launch is
measured separately and reported beside it: for small shapes it is the real limit.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

L2_FALLBACK_BYTES = 60 * 1024 * 1024   # H200 (performance.md) when torch does not report it
ROTATION_FACTOR = 4                    # rotate over at least 4x the L2 worth of buffer sets
MAX_SETS = 32
MAX_BATCH = 32                         # launches queued behind one spin (3 queue entries each)


@dataclass(frozen=True)
class Timing:
    median_us: float
    min_us: float
    iters: int
    host_us: float          # Python host time to enqueue one launch (median over the warm-up)
    samples_us: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        return {"median_us": round(self.median_us, 3), "min_us": round(self.min_us, 3),
                "iters": self.iters, "host_us_per_launch": round(self.host_us, 2)}


def l2_bytes(torch: Any) -> int:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return int(getattr(props, "L2_cache_size", 0) or L2_FALLBACK_BYTES)


def rotation_sets(set_bytes: int, l2: int) -> int:
    """How many buffer sets to rotate over so one set is evicted from the L2 before it is reused."""
    if set_bytes <= 0:
        return 1
    return max(2, min(MAX_SETS, math.ceil(ROTATION_FACTOR * l2 / set_bytes)))


class SpinCalibration:
    """Cycles of torch.cuda._sleep per microsecond, measured once (None: no spin available)."""

    def __init__(self, torch: Any):
        self.torch = torch
        self.cycles_per_us: float | None = None
        sleep = getattr(torch.cuda, "_sleep", None)
        if sleep is None:
            return
        cycles = 2_000_000
        sleep(cycles)  # first call loads the kernel
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        sleep(cycles)
        end.record()
        torch.cuda.synchronize()
        us = start.elapsed_time(end) * 1000.0
        if us > 0:
            self.cycles_per_us = cycles / us

    def spin(self, us: float) -> None:
        if self.cycles_per_us is not None and us > 0:
            self.torch.cuda._sleep(int(min(us, 200_000.0) * self.cycles_per_us))


def time_launches(torch: Any, spin: SpinCalibration, launch: Callable[[int], None], iters: int,
                  warmup: int = 3) -> Timing:
    """Per-launch GPU microseconds of `launch(i)` (which rotates its buffers with i)."""
    host = []
    for i in range(warmup):
        t0 = time.perf_counter()
        launch(i)
        host.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    host_us = statistics.median(host) if host else 0.0
    samples: list[float] = []
    done = 0
    while done < iters:
        batch = min(MAX_BATCH, iters - done)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(batch)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(batch)]
        # Twice the measured enqueue time, plus slack for the event records.
        spin.spin(batch * (2.0 * host_us + 10.0))
        for j in range(batch):
            starts[j].record()
            launch(warmup + done + j)
            ends[j].record()
        torch.cuda.synchronize()
        samples += [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)]
        done += batch
    return Timing(statistics.median(samples), min(samples), len(samples), host_us, tuple(samples))


def copy_bandwidth(torch: Any, spin: SpinCalibration, nbytes: int = 1 << 30,
                   iters: int = 20, device: str = "cuda") -> tuple[float, Timing]:
    """GB/s of a device-to-device copy of nbytes, counting bytes read + written."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    src.random_(0, 256)  # never time on zeros
    dst = torch.empty_like(src)
    timing = time_launches(torch, spin, lambda i: dst.copy_(src), iters)
    gbps = 2 * nbytes / (timing.median_us * 1e-6) / 1e9
    del src, dst
    torch.cuda.empty_cache()
    return gbps, timing


def gbps(nbytes: int, us: float) -> float:
    return nbytes / (us * 1e-6) / 1e9 if us > 0 else 0.0


def iterations_for(expected_us: float, gpu_ms_budget: float = 40.0, lo: int = 10,
                   hi: int = 100) -> int:
    """Enough launches for a stable median within a small GPU-time budget per row."""
    return int(max(lo, min(hi, gpu_ms_budget * 1000.0 / max(expected_us, 1.0))))
