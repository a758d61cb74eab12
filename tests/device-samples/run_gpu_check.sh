#!/usr/bin/env bash
# Builds every sample for several schedules (cubins), builds gpu_check with the
# reference library's sources, and runs it: every output byte of every sample
# against qct_ref_convert. Needs a GPU, nvcc and the driver.
#   tests/device-samples/run_gpu_check.sh [outdir]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
nvcc=${NVCC:-nvcc}
cubins=()
for f in "$root"/tests/device-samples/*.cu; do
  name="$(basename "$f" .cu)"
  if grep -q tile_kernel "$f"; then
    knobs=("256 K128" "128 K128" "256 K64" "128 K64")
  else
    knobs=("256 U2" "128 U1" "512 U4" "256 U4")
  fi
  for k in "${knobs[@]}"; do
    set -- $k
    t=$1; kk=$2
    if [[ $kk == K* ]]; then def="-DQCT_TILE_K=${kk#K}"; else def="-DQCT_UNROLL=${kk#U}"; fi
    # A 1x128 row output needs TILE_K 128 (docs/device-library.md).
    if [[ $kk == K64 ]] && grep -q "Layout::row, 128" "$f"; then continue; fi
    c="$out/$name.T$t.$kk.cubin"
    "$nvcc" -std=c++17 -arch=sm_90 -cubin -I "$root/runtime/include" -DQCT_THREADS=$t $def "$f" -o "$c" &
    cubins+=("$c")
  done
done
wait
"$nvcc" -std=c++17 -O2 -I "$root/runtime/include" -I "$root/compiler/include" \
  "$root/tests/device-samples/gpu_check.cpp" "$root"/compiler/lib/Reference/*.cpp \
  -o "$out/gpu_check" -lcuda
if [[ "${QCT_CHECK:-1}" == 1 ]]; then
  "$out/gpu_check" "${cubins[@]}" | grep -v "^ok"
fi
# Timing (not a test): every variant at M=32768, K=7168 against a D2D copy.
if [[ "${QCT_BENCH:-0}" == 1 ]]; then
  "$out/gpu_check" --bench "$out"/*.T256.U2.cubin "$out"/*.T256.K128.cubin
fi
