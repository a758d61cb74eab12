"""Writes one spec per (source, output format, layout, scale, fuse) choice,
named after its file, checks them all with one qct-compile --check run, and
compares which ones were rejected with the rules of numerics.md
(docs/spec-language.md):

- MX outputs take floor or rceil (default floor);
- fp8 outputs take amax or pow2, or aligned from an MX source in a fused
  kernel; there is no default;
- bf16 outputs take no scale;
- an output in the source's format with layout row converts nothing;
- a bf16 output needs a quantized source (its decode) or a bf16 one (col);
- fuse: false needs a quantized source and a quantized output.

With --compile, also compiles every accepted spec (qct-compile -o).
"""
import os
import re
import subprocess
import sys

SOURCES = {"bf16": None, "fp16": None, "fp32": None, "mxfp4": None, "mxfp8_e4m3": None,
           "mxfp8_e5m2": None, "fp8_e4m3": "pow2", "fp8_e5m2": "amax"}
OUTPUTS = ["mxfp4", "mxfp8_e4m3", "mxfp8_e5m2", "fp8_e4m3", "fp8_e5m2", "bf16"]
SCALES = [None, "floor", "rceil", "amax", "pow2", "aligned"]


def is_mx(f):
    return f.startswith("mxfp")


def is_fp8(f):
    return f.startswith("fp8")


def expected_valid(src, out, layout, scale, fuse):
    if out == src and layout == "row":
        return False
    if out == "bf16" and src in ("fp16", "fp32"):
        return False
    if is_mx(out):
        ok = scale in (None, "floor", "rceil")
    elif is_fp8(out):
        ok = scale in ("amax", "pow2") or (scale == "aligned" and is_mx(src) and fuse)
    else:
        ok = scale is None
    if not fuse:
        ok = ok and (is_mx(src) or is_fp8(src)) and (is_mx(out) or is_fp8(out))
    return ok


def main():
    out_dir = sys.argv[1]
    expected = {}
    for src, policy in SOURCES.items():
        for out in OUTPUTS:
            for layout in ("row", "col"):
                for scale in SCALES:
                    for fuse in (True, False):
                        name = f"{src}__{out}__{layout}__{scale or 'none'}__{'fused' if fuse else 'unfused'}"
                        source = f'"format": "{src}"' + (f', "policy": "{policy}"' if policy else "")
                        output = f'"name": "y", "format": "{out}", "layout": "{layout}"'
                        if scale:
                            output += f', "scale": "{scale}"'
                        text = (f'{{"name": "{name}", "source": {{{source}}}, "outputs": [{{{output}}}], '
                                f'"fuse": {"true" if fuse else "false"}}}\n')
                        path = os.path.join(out_dir, name + ".json")
                        with open(path, "w") as f:
                            f.write(text)
                        expected[path] = expected_valid(src, out, layout, scale, fuse)
    run = subprocess.run(["qct-compile", "--check", "--no-source-lines", *expected],
                         capture_output=True, text=True)
    rejected = set()
    for line in run.stderr.splitlines():
        m = re.match(r"(.*\.json):\d+:\d+: error: ", line)
        if not m:
            sys.exit(f"unexpected output line: {line}")
        rejected.add(m.group(1))
    mismatches = [p for p, ok in expected.items() if ok == (p in rejected)]
    for p in mismatches[:20]:
        print(f"MISMATCH: {os.path.basename(p)}: expected {'valid' if expected[p] else 'invalid'}")
    if run.returncode != (1 if rejected else 0):
        print(f"MISMATCH: exit code {run.returncode}")
        mismatches.append("exit code")
    n_ok = sum(expected.values())
    print(f"{len(expected)} specs: {n_ok} accepted, {len(expected) - n_ok} rejected, "
          f"{len(mismatches)} mismatches")
    if "--compile" in sys.argv[2:]:
        # Every spec the front end accepts must also go through the pipeline
        # (QCTTarget): one -o run over all of them.
        accepted = [p for p, ok in expected.items() if ok]
        out = os.path.join(out_dir, "out")
        run = subprocess.run(["qct-compile", *accepted, "-o", out], capture_output=True, text=True)
        written = [p for p in accepted
                   if os.path.exists(os.path.join(out, os.path.basename(p)[:-5] + ".cu"))]
        print(f"compile: exit {run.returncode}, {len(written)} of {len(accepted)} written")
        if run.returncode:
            print(run.stderr[:2000])


main()
