"""The `qct` command line: help, exit codes, one-line errors, and the compile/emit/check flow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "specs" / "mxfp4_to_fp8_e4m3_row.json"
BAD_SPEC = REPO / "tests" / "lit" / "spec" / "block-mismatch.json"


def _env(cache: Path | None = None) -> dict[str, str]:
    """This checkout's qct; with `cache`, a cache folder of the test's own (QCT_CACHE_DIR)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    if cache is not None:
        env["QCT_CACHE_DIR"] = str(cache)
    return env


def qct(*args: str, cwd: Path = REPO, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qct", *args], capture_output=True, text=True,
                          cwd=cwd, env=_env(cache))


def test_help_lists_every_command() -> None:
    result = qct("--help")
    assert result.returncode == 0
    for command in ("compile", "emit", "check", "run", "verify", "bench", "tune", "cache", "env"):
        assert command in result.stdout


def test_no_command_prints_help_and_exits_2() -> None:
    result = qct()
    assert result.returncode == 2 and "usage: qct" in result.stdout


def test_check_good_and_bad_specs() -> None:
    assert qct("check", str(SPEC)).returncode == 0
    bad = qct("check", str(BAD_SPEC))
    assert bad.returncode == 1
    assert "outputs[1].block: found 64, allowed for fp8_e4m3: 128" in bad.stderr


def test_missing_spec_is_a_one_line_error() -> None:
    result = qct("check", "no/such/spec.json")
    assert result.returncode == 1
    assert result.stderr.strip() == "qct check: error: SPEC no/such/spec.json: no such file"


def test_bad_argument_exits_2() -> None:
    result = qct("emit", "--stage=ptx", str(SPEC))
    assert result.returncode == 2 and "invalid choice: 'ptx'" in result.stderr


@pytest.mark.parametrize("stage,needle", [("spec", '"scale": "aligned"'), ("qct", "qct.decode"),
                                          ("lowered", "qct.convert"), ("cuda", "Path::direct")])
def test_emit_prints_each_stage(stage: str, needle: str) -> None:
    result = qct("emit", f"--stage={stage}", str(SPEC))
    assert result.returncode == 0, result.stderr
    assert needle in result.stdout


def test_compile_writes_source_metadata_and_cubin(tmp_path: Path) -> None:
    result = qct("compile", "specs/mxfp4_to_fp8_e4m3_row.json", "-o", str(tmp_path), "--cubin")
    assert result.returncode == 0, result.stderr
    meta = json.loads((tmp_path / "mxfp4_to_fp8_e4m3_row.json").read_text())
    assert meta["entry"] == "qct_mxfp4_to_fp8_e4m3_row"
    assert (tmp_path / "mxfp4_to_fp8_e4m3_row.cu").read_text() == \
        (REPO / "generated" / "mxfp4_to_fp8_e4m3_row.cu").read_text()
    assert (tmp_path / "mxfp4_to_fp8_e4m3_row.cubin").read_bytes()[:4] == b"\x7fELF"


def test_gpu_commands_say_what_is_missing_without_a_gpu() -> None:
    try:
        import torch

        if torch.cuda.is_available():
            pytest.skip("a GPU is present: the GPU tier covers qct run")
    except ImportError:
        pass
    result = qct("run", str(SPEC), "--m", "128", "--k", "256")
    assert result.returncode == 1
    assert result.stderr.startswith("qct run: error: ") and result.stderr.count("\n") == 1


def test_env_lists_runtime_and_package_variables() -> None:
    result = qct("env")
    assert result.returncode == 0
    for name in ("QCT_CACHE_DIR", "QCT_CACHE_DISABLE", "QCT_BUILD_DIR", "QCT_COMMIT"):
        assert name in result.stdout


def test_tune_show_compares_machine_code(tmp_path: Path) -> None:
    # An entry timed on another device library is stale only if its best schedule now compiles to
    # other machine code than it recorded (NVRTC, no GPU needed); one without a recorded code, or
    # tuned with another NVRTC than this process loads, is judged by the library's hash.
    from qct import tuning

    kernel = "mxfp4_to_fp8_e4m3_row"
    schedule = {"QCT_THREADS": 256, "QCT_UNROLL": 1}
    # The code and NVRTC version as `qct tune --show` sees them: the same environment, a fresh
    # process (one that imported torch may have loaded torch's NVRTC instead of the system's).
    probe = subprocess.run(
        [sys.executable, "-c", "from qct import runtime, tuning; print(tuning.code_hash("
         f"runtime.compile_to_cubin('generated/{kernel}.cu', arch='sm_90a', schedule={schedule!r}))"
         ", runtime.nvrtc_version())"], capture_output=True, text=True, cwd=REPO,
        env=_env(tmp_path / "cache"))
    assert probe.returncode == 0, probe.stderr
    code, nvrtc = probe.stdout.split()
    label = tuning.schedule_label(schedule)

    def entry(recorded: str | None, tuned_with: str = nvrtc) -> dict:
        result = {"status": "ok", "median_us": 93.3, "min_us": 93.0, "iters": 100}
        if recorded:
            result["code"] = recorded
        return {"kernel": kernel, "device_headers": "0" * 64, "arch": "sm_90a", "nvrtc": tuned_with,
                "best": {"schedule": schedule, "median_us": 93.3}, "configs": {label: result}}

    (tmp_path / "cache" / "tuning").mkdir(parents=True)
    (tmp_path / "cache" / "tuning" / "tuning.json").write_text(json.dumps({
        "format_version": 1, "entries": {
            "same/code": entry(code), "other/code": entry("f" * 16), "no/code": entry(None),
            "other/nvrtc": entry(code, "1.0")}}))
    result = qct("tune", "--show", cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines()
             if line.startswith("  ") and "/" in line.split()[0]}
    assert "stale" not in lines["same/code"]
    assert "machine code changed" in lines["other/code"]
    for name in ("no/code", "other/nvrtc"):
        assert "stale: tuned on device library 000000000000" in lines[name]


def test_tune_seed_copies_a_repository_file_into_the_cache(tmp_path: Path) -> None:
    def tune(*args: str) -> subprocess.CompletedProcess[str]:
        return qct("tune", *args, cache=tmp_path / "cache")

    missing = tune("--seed", str(tmp_path / "nope.json"))
    assert missing.returncode == 1 and "--seed" in missing.stderr and "no such file" in missing.stderr
    repo_file = REPO / "specs" / "tuning" / "h200.json"
    n = len(json.loads(repo_file.read_text())["entries"])
    seeded = tune("--seed", str(repo_file))
    assert seeded.returncode == 0, seeded.stderr
    assert f"seeded {n} entries" in seeded.stdout
    cache = json.loads((tmp_path / "cache" / "tuning" / "tuning.json").read_text())
    assert cache["entries"] == json.loads(repo_file.read_text())["entries"]
    assert "seeded 0 entries" in tune("--seed", str(repo_file)).stdout


def test_tune_survives_a_broken_cache_and_never_overwrites_a_broken_export(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "tuning"
    cache.mkdir(parents=True)
    (cache / "tuning.json").write_text("{not json")

    def tune(*args: str) -> subprocess.CompletedProcess[str]:
        return qct("tune", *args, cache=tmp_path / "cache")

    shown = tune("--show")
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr.startswith("qct tune: warning: the tuning cache could not be read")
    assert (cache / "tuning.json.broken").read_text() == "{not json"
    destination = tmp_path / "h200.json"
    destination.write_text("[1]")
    exported = tune("--export", str(destination))
    assert exported.returncode == 1 and exported.stderr.count("\n") == 1
    assert "expected a JSON object" in exported.stderr and "fix or remove it" in exported.stderr
    assert destination.read_text() == "[1]"
