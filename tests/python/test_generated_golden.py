"""generated/ is exactly what the compiler emits for specs/: regenerate and diff.

Refresh with `tools/regen` after a change to specs/, the compiler or the device vocabulary.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from qct.compiler import compiler_path

REPO = Path(__file__).resolve().parents[2]
SPECS = sorted((REPO / "specs").glob("*.json"))


def test_specs_exist() -> None:
    assert len(SPECS) >= 10, f"expected the bundled specs in {REPO / 'specs'}"


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_generated_matches_compiler_output(spec: Path, tmp_path: Path) -> None:
    # From the repository root with a relative path, as tools/regen runs it: the banner names
    # the spec by the path it was given.
    result = subprocess.run([str(compiler_path()), str(spec.relative_to(REPO)), "-o", str(tmp_path)],
                            capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    produced = sorted(tmp_path.iterdir())
    assert {p.suffix for p in produced} == {".cu", ".json"}, produced
    for fresh in produced:
        golden = REPO / "generated" / fresh.name
        assert golden.is_file(), f"{golden} is missing: run tools/regen"
        assert fresh.read_text() == golden.read_text(), \
            f"{golden} differs from what the compiler emits now: run tools/regen and review the diff"


def test_no_stale_generated_files() -> None:
    names = {p.stem for p in SPECS}
    stale = [p.name for p in (REPO / "generated").iterdir()
             if p.suffix in (".cu", ".json") and p.stem not in names]
    assert not stale, f"generated/ holds files no spec produces: {stale} (run tools/regen)"
