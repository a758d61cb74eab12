"""For every spec in SPEC_DIR: OUT_DIR/<name>.cu exists and is not empty, and
OUT_DIR/<name>.json has the spec's name, cuda_source, the normalized spec of
qct-compile --stage=spec and the hash of qct-compile --hash."""
import json
import os
import subprocess
import sys

spec_dir, out_dir = sys.argv[1], sys.argv[2]
files = sorted(os.path.join(spec_dir, f) for f in os.listdir(spec_dir) if f.endswith(".json"))


def run(*args):
    return subprocess.run(["qct-compile", *args], check=True, capture_output=True, text=True).stdout


for f in files:
    spec = json.loads(run("--stage=spec", f))
    digest = run("--hash", f).split()[0]
    name = spec["name"]
    cu = os.path.join(out_dir, name + ".cu")
    if not os.path.getsize(cu):
        sys.exit(f"{cu} is empty")
    with open(os.path.join(out_dir, name + ".json")) as m:
        meta = json.load(m)
    for key, want in (("name", name), ("cuda_source", name + ".cu"), ("spec", spec),
                      ("spec_hash", digest)):
        if meta.get(key) != want:
            sys.exit(f"{name}.json: {key} is {meta.get(key)!r}, expected {want!r}")
print(f"{len(files)} specs: .cu and .json written, metadata spec and spec_hash match the front end")
