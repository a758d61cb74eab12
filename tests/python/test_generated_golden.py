"""generated/ is exactly what the compiler emits for specs/: regenerate and diff.

Refresh with `tools/regen` after a change to specs/, the compiler or the device vocabulary.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from qct.compiler import compiler_path

REPO = Path(__file__).resolve().parents[2]
# The bundled specs (specs/*.json -> generated/) and the coverage specs, which exercise the
# combinations the bundled ones do not (specs/coverage/*.json -> generated/coverage/).
SPECS = sorted((REPO / "specs").glob("*.json")) + sorted((REPO / "specs" / "coverage").glob("*.json"))


def _generated_dir(spec: Path) -> Path:
    return REPO / "generated" / spec.parent.relative_to(REPO / "specs")


def test_specs_exist() -> None:
    assert len(SPECS) >= 19, f"expected the bundled specs in {REPO / 'specs'}"


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
        golden = _generated_dir(spec) / fresh.name
        assert golden.is_file(), f"{golden} is missing: run tools/regen"
        assert fresh.read_text() == golden.read_text(), \
            f"{golden} differs from what the compiler emits now: run tools/regen and review the diff"


def test_no_stale_generated_files() -> None:
    names = {(_generated_dir(p), p.stem) for p in SPECS}
    stale = [str(p.relative_to(REPO)) for d in {d for d, _ in names} for p in d.iterdir()
             if p.suffix in (".cu", ".json") and (d, p.stem) not in names]
    assert not stale, f"generated/ holds files no spec produces: {stale} (run tools/regen)"
