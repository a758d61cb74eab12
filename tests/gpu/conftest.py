"""GPU tier: skips with a clear message where there is no CUDA GPU (or no torch to drive it).

With QCT_GPU_RESULTS=path, the session's pass/fail counts are appended as markdown to that file
(tools/gpu-tier uses it to write docs/gpu-results.md).
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))


def gpu_unavailable_reason() -> str | None:
    try:
        import torch
    except ImportError:
        return "GPU tier skipped: torch is not installed (it drives the GPU in these tests)"
    if not torch.cuda.is_available():
        return "GPU tier skipped: no CUDA GPU on this machine"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = gpu_unavailable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "tests/gpu" in str(item.fspath):
            item.add_marker(skip)


_outcomes: dict[str, list[str]] = {"passed": [], "failed": [], "skipped": []}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _outcomes.setdefault(report.outcome, []).append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = os.environ.get("QCT_GPU_RESULTS")
    if not target or gpu_unavailable_reason():
        return
    import torch

    from qct.provenance import git_commit

    commit = git_commit()
    lines = [
        f"## GPU tier, {datetime.date.today().isoformat()}",
        "",
        f"- commit: {commit}",
        f"- GPU: {torch.cuda.get_device_name()} (sm_{''.join(map(str, torch.cuda.get_device_capability()))}), "
        f"torch {torch.__version__}, Python {platform.python_version()}",
        f"- ran: pytest tests/gpu ({len(session.items)} tests collected)",
        f"- passed {len(_outcomes['passed'])}, failed {len(_outcomes['failed'])}, "
        f"skipped {len(_outcomes['skipped'])}",
        "",
    ]
    if _outcomes["failed"]:
        lines += ["Failed:", ""] + [f"- `{n}`" for n in _outcomes["failed"]] + [""]
    with open(target, "a") as f:
        f.write("\n".join(lines) + "\n")
