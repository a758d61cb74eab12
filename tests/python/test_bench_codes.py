"""`python -m qct.bench.codes` (which schedules build different machine code) without a GPU: the
difference of two code maps, and a round trip through NVRTC that finds a kernel's own codes the
same and a tampered entry different, the tool's hash of the tree's device headers against the
runtime's, and the refusal of a runtime built from other headers (the last three need the runtime
built, tools/build)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qct import _ffi, runtime
from qct.bench import codes

REPO = Path(__file__).resolve().parents[2]


def test_differences_lists_changed_and_missing_schedules() -> None:
    new = {"k A=1": "aa", "k A=2": "bb", "k A=3": "cc"}
    old = {"k A=1": "aa", "k A=2": "xx", "other A=1": "dd"}
    assert codes.differences(new, old) == ["k A=2", "k A=3"]
    assert codes.differences(new, new) == []


def test_unknown_kernel_is_an_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert codes.main(["no_such_kernel", "--generated", str(REPO / "generated")]) == 2
    assert "no kernel 'no_such_kernel'" in capsys.readouterr().err


def test_names_or_all_but_not_both(capsys: pytest.CaptureFixture[str]) -> None:
    assert codes.main(["--generated", str(REPO / "generated")]) == 2
    assert codes.main(["--all", "bf16_to_mxfp4_row", "--generated", str(REPO / "generated")]) == 2
    assert "name kernels or pass --all" in capsys.readouterr().err


def test_kernels_are_found_in_subfolders_as_the_gpu_tier_runs_them() -> None:
    found = codes.generated_kernels(REPO / "generated")
    assert found == {p.stem: p for p in (REPO / "generated").glob("**/*.json")}
    assert any(p.parent.name == "coverage" for p in found.values())


@pytest.mark.skipif(not _ffi.library_path().is_file(), reason="needs the runtime (tools/build)")
def test_round_trip_finds_the_same_code_and_a_tampered_entry(tmp_path: Path) -> None:
    name = "mxfp4_to_bf16_row"  # few schedules: a quick compile
    out = tmp_path / "codes.json"
    argv = [name, "--generated", str(REPO / "generated"), "--out", str(out)]
    assert codes.main(argv) == 0
    recorded = json.loads(out.read_text())
    assert recorded and all(key.startswith(name + " ") for key in recorded)
    assert codes.main([*argv, "--against", str(out)]) == 0
    first = sorted(recorded)[0]
    recorded[first] = "0" * 16
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(recorded))
    assert codes.main([name, "--generated", str(REPO / "generated"), "--against",
                       str(tampered)]) == 1


@pytest.mark.skipif(not _ffi.library_path().is_file(), reason="needs the runtime (tools/build)")
def test_the_tree_headers_hash_is_the_one_the_runtime_embeds() -> None:
    # tools/build embeds this tree's headers: the tool's hash of them (its own reading of
    # runtime/lib/DeviceHeaders.cpp's rule) must be the runtime's.
    assert codes.device_headers_hash(REPO / "runtime" / "include") == runtime.device_headers_hash()
    assert codes.stale_runtime(REPO / "runtime" / "include") is None


@pytest.mark.skipif(not _ffi.library_path().is_file(), reason="needs the runtime (tools/build)")
def test_a_runtime_built_from_other_headers_is_refused(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # An edited header the runtime was not rebuilt with: its codes would be of the old headers.
    include = tmp_path / "include"
    shutil.copytree(REPO / "runtime" / "include", include)
    header = include / "qct" / "device" / "raster.cuh"
    header.write_text(header.read_text() + "\n// edited\n")
    assert codes.main(["mxfp4_to_bf16_row", "--generated", str(REPO / "generated"),
                       "--headers", str(include)]) == 2
    err = capsys.readouterr().err
    assert "rebuild the runtime" in err and str(include) in err
    # A folder without the headers (an installed qct) is not checked.
    assert codes.stale_runtime(tmp_path / "nothing") is None
