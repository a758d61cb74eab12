"""`qct bench` end to end without a GPU: suite.run with CUDA events, the spin and the copy faked,
and fake kernels whose 'launch' is the PyTorch peer on the CPU (or nothing). Checks the
orchestration and the files it writes, not any timing (timings here mean nothing)."""

from __future__ import annotations

import json
import time
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: bench dry run skipped")

from qct.bench import floor, peers, suite, timing  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
_DTYPES = {"u8": torch.uint8, "u16": torch.int16, "bf16": torch.bfloat16, "f32": torch.float32,
           "i32": torch.int32, "i64": torch.int64}


class _Event:
    def __init__(self, enable_timing: bool = True):
        self.t = 0.0

    def record(self) -> None:
        self.t = time.perf_counter()

    def elapsed_time(self, other: "_Event") -> float:
        return (other.t - self.t) * 1000.0


class _FakeKernel:
    """Buffers and schedule from the metadata; a launch runs the peer (if any) into the outputs."""

    def __init__(self, meta: dict):
        self.metadata, self.name, self.origin = meta, meta["name"], "fake"
        self.schedule = {k["name"]: k["default"] for k in meta["schedule"]["knobs"]}
        self.buffers = [types.SimpleNamespace(name=b["name"], is_output=b["dir"] == "out")
                        for b in meta["buffers"]]
        self.peer = peers.peer_for(meta)
        self.stats = {"registers": 1, "spill_store_bytes": 0, "spill_load_bytes": 0,
                      "local_memory_bytes": 0}
        self.cubin = b""

    def allocate_outputs(self, M: int, K: int, offsets=None, device=None) -> dict:
        G = 0 if offsets is None else offsets.shape[0] - 1
        return {b["name"]: torch.zeros([floor.eval_shape(d, M, K, G) for d in b["shape"]],
                                       dtype=_DTYPES[b["dtype"]])
                for b in self.metadata["buffers"] if b["dir"] == "out"}

    def __call__(self, **tensors) -> None:
        if self.peer is not None:
            for name, value in self.peer(**peers.peer_inputs(self.metadata, tensors)).items():
                target = tensors[name].view(torch.uint8)
                target.copy_(value.contiguous().view(torch.uint8).view(target.shape))

    def check_errors(self) -> None:
        pass


def test_suite_runs_end_to_end_on_fakes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import qct.gpu
    import qct.runtime

    monkeypatch.setattr(suite, "DEVICE", "cpu")
    monkeypatch.setattr(suite, "M_VALUES", (256,))
    monkeypatch.setattr(suite, "K_VALUES", (256,))
    monkeypatch.setattr(suite, "HEADLINE", (256, 256))
    monkeypatch.setattr(suite, "SLAB_ROWS", 101)
    monkeypatch.setattr(torch.cuda, "Event", _Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: None, raising=False)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=0: "FakeGPU")
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda device: types.SimpleNamespace(L2_cache_size=1 << 20))
    monkeypatch.setattr(torch, "compile", lambda fn, dynamic=False: fn)
    monkeypatch.setattr(qct.gpu, "require_gpu", lambda: torch)
    monkeypatch.setattr(qct.runtime, "load",
                        lambda path, schedule=None, **kw: _FakeKernel(json.loads(Path(path).read_text())))
    fake_copy = timing.Timing(100.0, 100.0, 1, 1.0, (100.0,))
    monkeypatch.setattr(timing, "copy_bandwidth", lambda *a, **kw: (1000.0, fake_copy))

    opts = suite.Options(generated=REPO / "generated", out_dir=tmp_path,
                         only=("mxfp4_to_fp8_e4m3_row", "mxfp4_to_fp8_e4m3_col_ragged"))
    suite.run(opts)

    doc = json.loads((tmp_path / "bench.json").read_text())
    kinds = {(r["kind"], r["kernel"], r["groups"]) for r in doc["rows"]}
    assert ("qct", "mxfp4_to_fp8_e4m3_row", 0) in kinds
    assert ("qct-ragged", "mxfp4_to_fp8_e4m3_col_ragged", 32) in kinds
    assert ("qct-ragged", "mxfp4_to_fp8_e4m3_col_ragged", 256) in kinds
    assert any(r["kind"] == "qct-chain" for r in doc["rows"])
    peer_rows = [r for r in doc["rows"] if r["kind"].startswith("torch-")]
    assert {r["kind"] for r in peer_rows} == {"torch-eager", "torch-compile"}
    assert all(r["verified"] == "bitwise equal to qct" for r in peer_rows), peer_rows
    # The ragged kernel's peers run at each group count its qct rows ran at, on the same offsets,
    # and are compared with the qct row of their own group count.
    ragged_peers = [r for r in peer_rows if r["kernel"] == "mxfp4_to_fp8_e4m3_col_ragged"]
    assert sorted((r["kind"], r["groups"]) for r in ragged_peers) == \
        [("torch-compile", 32), ("torch-compile", 256), ("torch-eager", 32), ("torch-eager", 256)]
    qct_us = {r["groups"]: r["median_us"] for r in doc["rows"]
              if r["kind"] == "qct-ragged" and r["kernel"] == "mxfp4_to_fp8_e4m3_col_ragged"}
    assert all(r["extra"]["qct_us"] == round(qct_us[r["groups"]], 3) for r in ragged_peers)
    ragged = [r for r in doc["rows"] if r["kind"] == "qct-ragged"]
    # The bundled ragged spec leaves the capacity tail untouched: no capacity GB/s, since the
    # kernel never moves those bytes; the allocation's size is still recorded.
    assert ragged and all("vs_dense" in r["extra"] and "capacity_bytes" in r["extra"]
                          and "capacity_gbps" not in r["extra"] for r in ragged)
    assert doc["gpu"] == "FakeGPU" and doc["copy_gbps"] == 1000.0
    # No tuned entry is keyed to the fake GPU: every schedule is the heuristic's, and the run names
    # the device library its kernels were compiled with.
    assert {r["extra"]["schedule_origin"] for r in doc["rows"]
            if r["kind"] in ("qct", "qct-ragged")} == {"heuristic"}
    assert len(doc["device_headers"]) == 64
    assert (tmp_path / "bench.md").read_text().startswith("# qct bench results")
