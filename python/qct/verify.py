"""Bitwise verification of a generated kernel on the GPU against the numerics reference.

One `Case` is a shape (M, K, groups), a schedule and a seed. `run_case` makes adversarial input
(qct.inputs), computes every output with the CPU reference (qct.reference), launches the kernel on
outputs pre-filled with a poison byte (so an unwritten byte is a mismatch too, and a byte that
must stay unwritten, in a ragged capacity tail left untouched, must still hold it), and compares
every output buffer byte for byte. `qct run`, `qct verify` and the GPU tests all go through here.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from qct import inputs, knobs, reference

POISON = 0xA5
QUANTIZED_SOURCES = inputs.MX_FORMATS + inputs.FP8_BLOCK_FORMATS


@dataclass(frozen=True)
class Case:
    M: int
    K: int
    groups: int = 0  # ragged groups (0: the spec's default of one group when ragged)
    seed: int = 0
    schedule: tuple[tuple[str, int], ...] = ()
    label: str = ""
    # Activation-like input (qct.inputs.realistic: finite codes, tame scales) instead of the
    # adversarial default: the data the fast element paths take, which adversarial quantized
    # sources (NaN codes in most warps) mostly send down the general path.
    realistic: bool = False

    def describe(self) -> str:
        sched = ",".join(f"{k}={v}" for k, v in self.schedule) or "default"
        return f"M={self.M} K={self.K} G={self.groups} seed={self.seed} [{sched}]" + \
            (f" {self.label}" if self.label else "") + (" realistic" if self.realistic else "")


@dataclass
class CaseResult:
    case: Case
    ok: bool
    problems: list[str] = field(default_factory=list)
    bytes_moved: int = 0
    tensors: dict[str, Any] | None = None  # the launch's device tensors, when asked to keep them


def load_metadata(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def schedules(meta: dict[str, Any]) -> Iterator[tuple[tuple[str, int], ...]]:
    """Every legal schedule of a kernel: the product of its knobs' values less those that break
    one of its rules (knobs.py)."""
    return knobs.legal_schedules(meta)


def is_ragged(meta: dict[str, Any]) -> bool:
    return meta["spec"].get("ragged") is not None


def untouched_tail(spec: dict[str, Any]) -> bool:
    """Whether a (normalized) spec leaves its col outputs' ragged capacity tail unwritten."""
    ragged = spec.get("ragged")
    return ragged is not None and ragged.get("capacity_tail", "zero") == "untouched"


def make_source(meta: dict[str, Any], M: int, K: int, seed: int,
                realistic: bool = False) -> inputs.SourceTensor:
    """Adversarial input (the default, for correctness) or activation-like input (for timing)."""
    rng = np.random.default_rng(seed)
    fmt = meta["spec"]["source"]["format"]
    if realistic:
        return inputs.realistic(rng, fmt, M, K)
    if M * K > (1 << 28):
        # Huge tensors (over 2^31 bytes) tile a random slab of a prime row count, so rows far
        # apart still differ in alignment while generation stays fast.
        slab = inputs.source(rng, fmt, 4099, K)
        reps = -(-M // 4099)
        data = np.tile(slab.data, (reps, 1))[:M]
        scales = None if slab.scales is None else np.tile(slab.scales, (reps, 1))[:M]
        return inputs.SourceTensor(fmt, data, scales, M, K)
    return inputs.source(rng, fmt, M, K)


def make_offsets(meta: dict[str, Any], M: int, groups: int, seed: int) -> np.ndarray | None:
    ragged = meta["spec"].get("ragged")
    if ragged is None:
        return None
    dtype = np.int64 if ragged["offsets_dtype"] == "int64" else np.int32
    return inputs.ragged_offsets(np.random.default_rng(seed + 1), M, max(groups, 1), dtype)


def reference_outputs(meta: dict[str, Any], src: inputs.SourceTensor,
                      offsets: np.ndarray | None) -> dict[str, np.ndarray]:
    """Every output buffer of the kernel as raw bytes, computed by the CPU reference."""
    spec = meta["spec"]
    via_bf16 = not spec.get("fuse", True) and spec["source"]["format"] in QUANTIZED_SOURCES
    ragged_spec = spec.get("ragged")
    ragged = None if offsets is None else reference.Ragged(
        offsets, ragged_spec["pad_groups_to"], untouched_tail=untouched_tail(spec))
    ref_src = reference.Source(src.format, src.data, src.scales, src.M, src.K)
    expected: dict[str, np.ndarray] = {}
    padded = None
    # The reference's bits do not depend on its thread count (tested); GPU machines have cores.
    reference.set_threads(min(os.cpu_count() or 1, 16))
    for i, out in enumerate(spec["outputs"]):
        # The kernel's buffers start as POISON (run_case): an untouched tail keeps it.
        result = reference.convert(ref_src, reference.Output(
            out["format"], out["layout"], out.get("scale") or "none",
            out.get("scale_layout") or "row_major", via_bf16), ragged, fill=POISON)
        for b in meta["buffers"]:
            if b.get("output") == i:
                raw = result.scales if b["field"].startswith("out_scales") else result.data
                # An empty buffer (M = 0 rows of scales) comes back as None.
                expected[b["name"]] = np.zeros(0, np.uint8) if raw is None else \
                    np.ascontiguousarray(raw).view(np.uint8).reshape(-1)
        padded = result.padded_offsets
    for b in meta["buffers"]:
        if b["field"] == "padded_offsets":
            expected[b["name"]] = np.ascontiguousarray(padded).view(np.uint8).reshape(-1)
    return expected


# Metadata dtype -> the torch dtype that carries those bits (torch's uint16/uint32 have few kernels).
_TORCH_DTYPES = {"u8": "uint8", "u16": "int16", "bf16": "bfloat16", "f16": "float16",
                 "f32": "float32", "i32": "int32", "i64": "int64"}
_NUMPY_CARRIERS = {"uint8": np.uint8, "int16": np.int16, "bfloat16": np.int16, "float16": np.int16,
                   "float32": np.int32, "int32": np.int32, "int64": np.int64}


def _to_device(array: np.ndarray, dtype: str, device: Any) -> Any:
    """Uploads raw bits as the metadata's dtype (bf16 bits become a torch.bfloat16 tensor)."""
    import torch

    torch_name = _TORCH_DTYPES[dtype]
    bits = np.ascontiguousarray(array).view(_NUMPY_CARRIERS[torch_name])
    return torch.from_numpy(bits).to(device).view(getattr(torch, torch_name))


def kernel_inputs(meta: dict[str, Any], src: inputs.SourceTensor, offsets: np.ndarray | None,
                  device: Any) -> dict[str, Any]:
    by_field = {"src": src.data, "src_scales": src.scales, "offsets": offsets}
    tensors = {}
    for b in meta["buffers"]:
        if b["dir"] == "in":
            tensors[b["name"]] = _to_device(by_field[b["field"]], b["dtype"], device)
    return tensors


def first_mismatches(name: str, expected: np.ndarray, found: np.ndarray, limit: int = 4) -> list[str]:
    if expected.size != found.size:
        return [f"{name}: size {found.size} bytes, reference {expected.size}"]
    bad = np.flatnonzero(expected != found)
    if bad.size == 0:
        return []
    lines = [f"{name}: {bad.size} of {expected.size} bytes differ"]
    for i in bad[:limit]:
        lines.append(f"  {name} byte {i}: kernel 0x{int(found[i]):02x}, reference 0x{int(expected[i]):02x}")
    return lines


def run_case(kernel: Any, meta: dict[str, Any], case: Case, stream: Any = None,
             keep_tensors: bool = False) -> CaseResult:
    """Runs one case on the current CUDA device; the comparison covers every output byte."""
    import torch

    device = torch.device("cuda", torch.cuda.current_device())
    src = make_source(meta, case.M, case.K, case.seed, realistic=case.realistic)
    offsets = make_offsets(meta, case.M, case.groups, case.seed)
    expected = reference_outputs(meta, src, offsets)
    tensors = kernel_inputs(meta, src, offsets, device)
    d_offsets = tensors.get(next((b["name"] for b in meta["buffers"] if b["field"] == "offsets"), ""))
    outputs = kernel.allocate_outputs(case.M, case.K, d_offsets, device=device)
    for t in outputs.values():
        t.view(torch.uint8).fill_(POISON)
    tensors.update(outputs)
    with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
        kernel(**tensors)
        kernel.check_errors()
    torch.cuda.synchronize()
    problems: list[str] = []
    moved = sum(t.numel() * t.element_size() for t in tensors.values())
    for name, want in expected.items():
        got = outputs[name].contiguous().view(torch.uint8).reshape(-1).cpu().numpy()
        problems += first_mismatches(name, want, got)
    return CaseResult(case, not problems, problems, moved, tensors if keep_tensors else None)


def default_schedule_with(meta: dict[str, Any],
                          overrides: dict[str, int]) -> tuple[tuple[str, int], ...] | None:
    """The default schedule with `overrides`, where each is a value its knob lists other than the
    default and the result is legal; else None."""
    knobs_list = meta["schedule"]["knobs"]
    listed = {k["name"]: k for k in knobs_list}
    for name, value in overrides.items():
        if name not in listed or value not in listed[name]["values"]:
            return None
    if all(int(listed[n]["default"]) == v for n, v in overrides.items()):
        return None
    schedule = tuple((k["name"], overrides.get(k["name"], int(k["default"]))) for k in knobs_list)
    return schedule if knobs.broken_rule(meta, dict(schedule)) is None else None


def standard_cases(meta: dict[str, Any], quick: bool = False) -> list[Case]:
    """The GPU tier's shapes for one kernel: every legal schedule on a mid-size random case, plus
    the adversarial shapes at the default schedule."""
    ragged = is_ragged(meta)
    K = 512 if meta["spec"]["source"]["format"] != "fp32" else 256
    static_k = (meta["spec"].get("static") or {}).get("K")
    if static_k:
        K = static_k
    cases = [Case(1000, K, 8 if ragged else 0, seed=11, schedule=s, label="schedule sweep")
             for s in schedules(meta)]
    if quick:
        return cases[:1]
    if meta["spec"]["source"]["format"] in QUANTIZED_SOURCES:
        # The raw-code fast paths of quantized sources, at every schedule (lane layout, unroll).
        cases += [Case(300, K, 8 if ragged else 0, seed=12, schedule=s,
                       label="schedule sweep, finite codes", realistic=True)
                  for s in schedules(meta)]
    cases += [
        Case(1, K, 1 if ragged else 0, seed=1, label="M=1"),
        Case(127, K, 3 if ragged else 0, seed=2, label="M not a multiple of 128"),
        Case(4096 + 77, K, 32 if ragged else 0, seed=3, label="random, wide spreads"),
    ]
    row_blocks = {o.get("block") or 1 for o in meta["spec"]["outputs"] if o["layout"] == "row"}
    # The default schedule without a cluster (where scale jobs run), at both thread counts.
    without_cluster = [s for s in (default_schedule_with(meta, o) for o in (
        {"QCT_CLUSTER_M": 1}, {"QCT_CLUSTER_M": 1, "QCT_THREADS": 128})) if s is not None]
    if (not static_k and meta["spec"]["source"]["format"] == "mxfp4"
            and all(1056 % b == 0 for b in row_blocks)):
        # Source scale rows that are not 16-byte multiples (K / 32 = 33 bytes), and for the col
        # kernels' scale jobs (QCT_CLUSTER_M 1; 32 tiles x 1024 features each) a partial job
        # along both M and K: their byte-load path, at both thread counts. (Not where a row
        # output's blocks of 128 run along K.)
        label = "K / 32 not a multiple of 16"
        groups = 32 if ragged else 0
        cases += [Case(4096 + 77, 1056, groups, seed=7, schedule=s, label=label)
                  for s in ((), *without_cluster)]
    if ragged:
        cases += [
            Case(5, K, 7, seed=4, label="mostly empty and one-row groups"),
            Case(20000, K, 256, seed=5, label="256 groups"),
            Case(0, K, 4, seed=6, label="M=0, all groups empty"),
        ]
        if not static_k:
            # Without a cluster: the ragged scale jobs' 16-byte path over two chunks of each
            # token row (K a multiple of 1024), 13 jobs along the tiles, many groups and empty
            # ones in each.
            cases += [Case(20000, 2048, 256, seed=8, schedule=s, label="256 groups, no cluster")
                      for s in without_cluster]
            # QCT_SPLIT_LAST_SPAN 1 (raster.cuh, k_span): 7 tiles of 256 features, so that CTAs
            # of whole spans precede the last span's single-tile rows (3 spans of 2 and 1 row,
            # or 1 span of 4 and 3 rows), and a partial scale job along K.
            cases += [Case(4096 + 77, 1792, 32, seed=9, schedule=s, label="last K span split")
                      for s in schedules(meta) if dict(s).get("QCT_SPLIT_LAST_SPAN") == 1]
    return cases
