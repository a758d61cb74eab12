#!/usr/bin/env bash
# Compiles every tests/device-samples/*.cu with nvcc for sm_90 at its default
# schedule and reads ptxas -v: any compile error, spill or stack frame fails.
#   check_samples.sh <nvcc or empty> <repo root>
set -uo pipefail
nvcc="${1:-}"
root="$2"
if [[ -z "$nvcc" || ! -x "$nvcc" ]]; then
  echo "SKIP: nvcc not found; the device samples were not compiled"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail=0
for f in "$root"/tests/device-samples/*.cu; do
  name="$(basename "$f" .cu)"
  if ! "$nvcc" -std=c++17 -arch=sm_90 -I "$root/runtime/include" --ptxas-options=-v \
        -c "$f" -o "$tmp/$name.o" >"$tmp/$name.log" 2>&1; then
    echo "FAIL $name: compile error"
    cat "$tmp/$name.log"
    fail=1
    continue
  fi
  usage="$(grep -E 'Used [0-9]+ registers' "$tmp/$name.log" | sed 's/.*Used/Used/')"
  frame="$(grep -E 'bytes stack frame' "$tmp/$name.log" | sed 's/^ *//')"
  if grep -qE '[1-9][0-9]* bytes (stack frame|spill stores|spill loads)' "$tmp/$name.log"; then
    echo "FAIL $name: $frame; $usage"
    fail=1
  else
    echo "ok   $name: $usage"
  fi
done
exit $fail
