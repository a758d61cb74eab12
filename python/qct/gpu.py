"""What the GPU-side commands share: a clear error where there is no GPU, and CUDA-event timing."""

from __future__ import annotations

from typing import Any, Callable

from qct.cli import QctError


def require_gpu() -> Any:
    """torch with a CUDA device, or a one-line error saying what is missing."""
    try:
        import torch
    except ImportError as e:
        raise QctError("this command needs torch with CUDA to drive the GPU (pip install torch)") from e
    if not torch.cuda.is_available():
        raise QctError("no CUDA GPU is available on this machine (torch.cuda.is_available() is False)")
    return torch


def time_launches(launch: Callable[[int], None], iters: int, warmup: int = 10) -> list[float]:
    """Per-launch microseconds: CUDA events around each launch after a warm-up. `launch(i)` runs the
    i-th launch (callers rotate input buffers with i so the L2 does not serve them)."""
    torch = require_gpu()
    for i in range(warmup):
        launch(i)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        launch(i)
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)]
