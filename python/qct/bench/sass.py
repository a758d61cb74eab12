"""Global-memory access widths in a kernel's SASS: how many loads and stores are 16 bytes wide
(LDG.E.128 / STG.E.128 and their variants such as LDG.E.128.CONSTANT), counted from
`cuobjdump --dump-sass` of the cubin the runtime compiled. Needs cuobjdump on PATH (the CUDA
toolkit), no GPU; callers skip with a message where it is missing."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

# "/*0080*/   @!P0 LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;" -> "LDG.E.128.CONSTANT"
_INSTRUCTION = re.compile(r"/\*[0-9a-fA-F]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
MEMORY_OPS = ("LDG", "STG", "LDS", "STS", "LDSM", "LDGSTS", "UTMALDG", "UTMASTG", "RED", "ATOMG")


def cuobjdump() -> str | None:
    return shutil.which("cuobjdump")


def nvdisasm() -> str | None:
    """nvdisasm on PATH, else the one pip's nvidia-cuda-nvdisasm puts under
    site-packages/nvidia/cu13/bin (the CUDA 13 toolkit here has none); None if neither."""
    found = shutil.which("nvdisasm")
    if found:
        return found
    try:
        import nvidia  # type: ignore[import-not-found]
    except ImportError:
        return None
    candidate = Path(list(nvidia.__path__)[0]) / "cu13" / "bin" / "nvdisasm"
    return str(candidate) if candidate.is_file() else None


def opcodes(sass_text: str) -> list[str]:
    return [m.group(1) for m in _INSTRUCTION.finditer(sass_text)]


def width_bits(opcode: str) -> int:
    """The access width from the opcode's modifiers (.128, .64, .U8, ...); 32 when unmarked."""
    parts = opcode.split(".")[1:]
    for p in parts:
        if p in ("128", "64"):
            return int(p)
        if p in ("U8", "S8"):
            return 8
        if p in ("U16", "S16"):
            return 16
    return 32


def memory_summary(sass_text: str) -> dict[str, Any]:
    """Counts of global loads/stores by width, shared-memory ops, and the raw memory opcodes."""
    ops = opcodes(sass_text)
    memory = Counter(op for op in ops if op.split(".")[0] in MEMORY_OPS)
    summary: dict[str, Any] = {"instructions": len(ops)}
    for base in ("LDG", "STG", "LDS", "STS"):
        widths = Counter(width_bits(op) for op in ops if op.split(".")[0] == base)
        summary[base] = {str(w): n for w, n in sorted(widths.items())}
    summary["ldg_128"] = summary["LDG"].get("128", 0)
    summary["stg_128"] = summary["STG"].get("128", 0)
    summary["memory_opcodes"] = dict(sorted(memory.items()))
    return summary


def dump_sass(cubin: bytes, tool: str) -> str:
    with tempfile.TemporaryDirectory(prefix="qct-sass-") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        result = subprocess.run([tool, "--dump-sass", str(path)], capture_output=True, text=True,
                                timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"cuobjdump failed: {result.stderr.strip()[:300]}")
    return result.stdout


def kernel_sass_summary(kernel: Any) -> dict[str, Any]:
    """The summary for a loaded qct Kernel, or {'skipped': why}."""
    tool = cuobjdump()
    if tool is None:
        return {"skipped": "cuobjdump is not on PATH"}
    try:
        return memory_summary(dump_sass(kernel.cubin, tool))
    except Exception as e:  # a missing tool or odd cubin must not stop a benchmark run
        return {"skipped": str(e)}
