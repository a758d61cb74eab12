"""Prints '<n> specs, names match file names' if every spec's "name" (read
through qct-compile --stage=spec, so comments are handled) is its file name."""
import json
import os
import subprocess
import sys

spec_dir = sys.argv[1]
files = sorted(f for f in os.listdir(spec_dir) if f.endswith(".json"))
for f in files:
    out = subprocess.run(["qct-compile", "--stage=spec", os.path.join(spec_dir, f)],
                         check=True, capture_output=True, text=True).stdout
    name = json.loads(out)["name"]
    if name + ".json" != f:
        sys.exit(f"{f}: name is {name!r}")
print(f"{len(files)} specs, names match file names")
