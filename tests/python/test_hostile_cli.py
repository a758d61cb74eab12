"""Hostile input at the `qct` command line: spec paths that look like options, output folders
that cannot be made, names too long for a file name, a closed stdout, a missing runtime library,
a missing spec behind a missing GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "specs" / "mxfp4_to_fp8_e4m3_row.json"


def qct(*args: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qct", *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO / "python"), **env})


def one_error_line(r: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.mark.parametrize("name", ["--version", "-x", "--help"])
def test_a_spec_named_like_an_option_is_checked_as_a_file(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text('{"name": 1}\n')  # invalid: a checked file fails
    r = qct("check", "--", name, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"{name}:" in r.stderr and "qct-compile" not in r.stdout
    (tmp_path / name).write_text(SPEC.read_text())
    assert qct("check", "--", name, cwd=tmp_path).returncode == 0


def test_a_missing_spec_named_like_an_option_is_no_such_file(tmp_path: Path) -> None:
    r = qct("check", "--", "--version", cwd=tmp_path)
    assert r.returncode == 1
    assert "SPEC --version: no such file" in one_error_line(r)


def test_a_spec_file_named_dash_is_read_not_stdin(tmp_path: Path) -> None:
    (tmp_path / "-").write_text('{"name": 1}\n')
    r = subprocess.run([sys.executable, "-m", "qct", "check", "./-"], capture_output=True,
                       text=True, cwd=tmp_path, input=SPEC.read_text(),
                       env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    assert r.returncode == 1, r.stderr  # the file's error, not stdin's valid spec
    assert "./-:" in r.stderr
    assert qct("emit", "--stage=spec", "./-", cwd=tmp_path).returncode == 1


@pytest.mark.parametrize("where, problem", [("afile", "is a file, not a folder"),
                                             ("afile/sub", "cannot create the output folder")])
def test_compile_output_that_cannot_be_a_folder_is_one_line(tmp_path: Path, where: str,
                                                            problem: str) -> None:
    (tmp_path / "afile").write_text("")
    r = qct("compile", str(SPEC), "-o", str(tmp_path / where))
    assert r.returncode == 1
    line = one_error_line(r)
    assert str(tmp_path / where) in line and problem in line


def test_compile_output_folder_named_like_an_option(tmp_path: Path) -> None:
    r = qct("compile", str(SPEC), "-o=-out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "-out").iterdir()) == [
        "mxfp4_to_fp8_e4m3_row.cu", "mxfp4_to_fp8_e4m3_row.json"]


def renamed(tmp_path: Path, name: str) -> Path:
    spec = tmp_path / f"{len(name)}.json"
    spec.write_text(SPEC.read_text().replace('"mxfp4_to_fp8_e4m3_row"', f'"{name}"', 1))
    return spec


def test_a_name_too_long_for_a_file_name_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = qct("compile", str(renamed(tmp_path, "k" * 232)), "-o", str(out))
    assert r.returncode == 1
    assert "is 232 characters; names are limited to 200" in one_error_line(r)
    assert not out.exists()
    r = qct("compile", str(renamed(tmp_path, "k" * 200)), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(p.suffix for p in out.iterdir()) == [".cu", ".json"]


def test_output_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before qct writes: every write gets EPIPE
    try:
        r = subprocess.run([sys.executable, "-m", "qct", "cache", "list"], stdout=write,
                           stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": str(REPO / "python"),
                                "QCT_CACHE_DIR": str(tmp_path / "cache")})
    finally:
        os.close(write)
    assert r.stderr == ""
    assert r.returncode == 141


def test_env_without_the_runtime_library_prints_the_python_variables_and_fails(
        tmp_path: Path) -> None:
    r = qct("env", QCT_BUILD_DIR=str(tmp_path))
    assert r.returncode == 1
    assert "QCT_BUILD_DIR" in r.stdout  # the Python package's own variables
    assert "libqct_runtime.so" in one_error_line(r)
    assert "exit 1 when the runtime library is not found" in " ".join(qct("env", "--help").stdout.split())


def test_run_says_the_spec_is_missing_before_it_asks_for_torch(tmp_path: Path) -> None:
    r = qct("run", str(tmp_path / "nosuch.json"), "--m", "4", "--k", "64")
    assert r.returncode == 1
    assert "nosuch.json: no such file" in one_error_line(r)
