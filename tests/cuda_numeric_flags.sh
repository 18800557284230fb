#!/usr/bin/env bash
# tests/cuda_numeric_flags.sh NVCC SOURCE FLAGS...: a user's
# --use_fast_math in CMAKE_CUDA_FLAGS comes first on nvcc's line and the
# project's numeric flags after it; the PTX must then hold no flush-to-zero
# and no approximate division or square root. The same source compiled with
# --use_fast_math alone must hold them (the check can fail).
set -u
nvcc=$1 src=$2
shift 2
t=$(mktemp -d) && trap 'rm -rf "$t"' EXIT
inc="-I$(dirname "$src") -I$(dirname "$src")/../kernels -I$(dirname "$src")/../surrogate"
# shellcheck disable=SC2086 # include flags
"$nvcc" -ptx -arch=compute_90 --use_fast_math $inc "$src" -o "$t/fast.ptx" || { echo "FAIL: nvcc could not compile $src"; exit 1; }
# shellcheck disable=SC2086
"$nvcc" -ptx -arch=compute_90 --use_fast_math "$@" $inc "$src" -o "$t/ieee.ptx" 2> /dev/null || { echo "FAIL: nvcc could not compile $src with $*"; exit 1; }
pat='\.ftz|\.approx'
fast=$(grep -cE "$pat" "$t/fast.ptx") ieee=$(grep -cE "$pat" "$t/ieee.ptx")
[ "$fast" -gt 0 ] || { echo "FAIL: --use_fast_math alone gave no .ftz/.approx in $src: the check cannot see it"; exit 1; }
[ "$ieee" = 0 ] || { echo "FAIL: $src: --use_fast_math then $* still gives $ieee .ftz/.approx instructions"; grep -E "$pat" "$t/ieee.ptx" | head -n 3; exit 1; }
echo "ok: $(basename "$src"): fast-math alone $fast .ftz/.approx instructions, then $*: 0"
