"""Recomputes each spec's hash from its normalized form, independently of the
C++ code: sha256 of json.dumps(sort_keys, no whitespace, UTF-8 as is)."""
import hashlib
import json
import os
import subprocess
import sys

spec_dir = sys.argv[1]
files = sorted(os.path.join(spec_dir, f) for f in os.listdir(spec_dir) if f.endswith(".json"))
for f in files:
    spec = json.loads(subprocess.run(["qct-compile", "--stage=spec", f], check=True,
                                     capture_output=True, text=True).stdout)
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    got = subprocess.run(["qct-compile", "--hash", f], check=True, capture_output=True,
                         text=True).stdout.split()[0]
    if got != expected:
        sys.exit(f"{f}: qct-compile --hash gives {got}, sha256 of canonical JSON is {expected}")
print(f"{len(files)} hashes match")
