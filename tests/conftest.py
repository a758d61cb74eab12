"""Makes the checkout's python/ importable, so the tests run the qct package of this tree even
where it is not installed (the GPU machine has no package registry)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
